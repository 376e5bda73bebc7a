// Package logs owns Tether's log files and keeps them, together, within
// TotalCap bytes: the daemon's tether.log, rotated by lumberjack (one
// writer: the daemon, once it holds the config dir's lock), and one
// mcp-bridge-<pid>.log per `tether mcp` bridge, pruned by age and count. Its
// RateLimit handler folds repeated records (a flood of refusals) into one
// line a minute, so nothing unauthenticated can grow the config dir by more
// than the cap (issue 12, "Logs").
package logs

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"
)

// The caps, in bytes. The daemon keeps tether.log and DaemonBackups
// rotated copies of at most DaemonFileMB MiB each; each bridge keeps its
// log and one older half, of at most BridgeFileBytes each, and at most
// BridgeLogsKept bridges' logs are kept. TotalCap is their sum (9 MiB),
// under the 10 MB the issue sets.
const (
	DaemonFileMB    = 2
	DaemonBackups   = 2
	BridgeFileBytes = 192 << 10
	BridgeLogsKept  = 8
	BridgeMaxAge    = 7 * 24 * time.Hour
	TotalCap        = (1+DaemonBackups)*DaemonFileMB<<20 + BridgeLogsKept*2*BridgeFileBytes
)

// DaemonFile returns the daemon's log writer: path (tether.log), rotated
// when a write would take it over DaemonFileMB MiB, keeping DaemonBackups
// older copies (tether-<time>.log) with mode 0600. A tether.log left over
// larger than that (versions before 0.2 never rotated it) is first cut to
// its last DaemonFileMB/2 MiB, so the cap holds from the first start.
// lumberjack assumes one writer: call it only in the process that holds the
// daemon lock. A path that is there but is not a file (a folder) is an
// error: lumberjack would move it aside as if it were an old log.
func DaemonFile(path string) (io.WriteCloser, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		what := "a folder"
		if !fi.IsDir() {
			what = "not a regular file"
		}
		return nil, fmt.Errorf("%s is %s: move it elsewhere, Tether keeps its log there; until then it logs to stderr only", path, what)
	}
	trimTo(path, DaemonFileMB<<20, DaemonFileMB<<19)
	return &lumberjack.Logger{Filename: path, MaxSize: DaemonFileMB, MaxBackups: DaemonBackups}, nil
}

// trimTo replaces the file at path, when it is larger than max bytes, by
// its last keep bytes (from a line start). Best effort: errors leave it.
func trimTo(path string, max, keep int64) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() <= max {
		return
	}
	tail := make([]byte, keep)
	n, err := f.ReadAt(tail, info.Size()-keep)
	if err != nil && err != io.EOF {
		return
	}
	tail = tail[:n]
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	tmp := path + ".trim"
	if err := os.WriteFile(tmp, tail, 0o600); err != nil {
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
	}
}

// Deferred is a writer that holds what is written (up to 64 KiB, the rest
// dropped) until Start gives it its real writer, then passes everything
// through. The daemon's log lines written before it holds the lock go to
// the file only if this process becomes the daemon. Safe for concurrent use.
type Deferred struct {
	mu  sync.Mutex
	buf bytes.Buffer
	w   io.Writer
}

const deferredMax = 64 << 10

// Write buffers p, or writes it to the started writer.
func (d *Deferred) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.w != nil {
		return d.w.Write(p)
	}
	if d.buf.Len()+len(p) <= deferredMax {
		d.buf.Write(p)
	}
	return len(p), nil
}

// Start writes what was buffered to w and sends every later write there.
func (d *Deferred) Start(w io.Writer) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.w = w
	_, err := w.Write(d.buf.Bytes())
	d.buf = bytes.Buffer{}
	return err
}

// BridgeFileName is the log of the bridge with this pid:
// mcp-bridge-<pid>.log.
func BridgeFileName(pid int) string { return "mcp-bridge-" + strconv.Itoa(pid) + ".log" }

// legacyBridgeLog is the one file every bridge appended to before 0.2.
const legacyBridgeLog = "mcp-bridge.log"

// OpenBridge prunes the bridge logs in dir (older than BridgeMaxAge, then
// all but the BridgeLogsKept-1 newest, and the legacy shared
// mcp-bridge.log) and opens this bridge's own log, dir/mcp-bridge-<pid>.log
// (mode 0600). The writer keeps it under BridgeFileBytes by moving it to
// <name>.1 (replacing the older half) when a write would pass the cap.
func OpenBridge(dir string, pid int, now time.Time) (io.WriteCloser, error) {
	PruneBridges(dir, BridgeLogsKept-1, now)
	return openRolling(filepath.Join(dir, BridgeFileName(pid)), BridgeFileBytes)
}

// PruneBridges removes bridge logs in dir last written before now minus
// BridgeMaxAge, then the oldest until keep bridges' logs remain, and the
// legacy mcp-bridge.log. A bridge's log and its .1 half go together.
// Errors are ignored: pruning is best effort.
func PruneBridges(dir string, keep int, now time.Time) {
	_ = os.Remove(filepath.Join(dir, legacyBridgeLog))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type group struct {
		files []string
		mod   time.Time
	}
	groups := map[string]*group{}
	for _, e := range entries {
		name := e.Name()
		base := strings.TrimSuffix(name, ".1")
		if !strings.HasPrefix(base, "mcp-bridge-") || !strings.HasSuffix(base, ".log") {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(base, "mcp-bridge-"), ".log")); err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		g := groups[base]
		if g == nil {
			g = &group{}
			groups[base] = g
		}
		g.files = append(g.files, filepath.Join(dir, name))
		if info.ModTime().After(g.mod) {
			g.mod = info.ModTime()
		}
	}
	var list []*group
	for _, g := range groups {
		if now.Sub(g.mod) > BridgeMaxAge {
			removeAll(g.files)
			continue
		}
		list = append(list, g)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].mod.After(list[j].mod) })
	for i, g := range list {
		if i >= keep {
			removeAll(g.files)
		}
	}
}

func removeAll(files []string) {
	for _, f := range files {
		_ = os.Remove(f)
	}
}

// rolling is a log file kept under max bytes: when a write would pass max,
// the file becomes <path>.1 and a new one starts.
type rolling struct {
	mu   sync.Mutex
	path string
	max  int64
	f    *os.File
	size int64
}

func openRolling(path string, max int64) (*rolling, error) {
	r := &rolling{path: path, max: max}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *rolling) open() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open log file: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("open log file: %w", err)
	}
	r.f, r.size = f, info.Size()
	return nil
}

// Write appends p, rolling the file first when p would take it over max; a
// p longer than max is cut to max.
func (r *rolling) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if int64(len(p)) > r.max {
		p = p[:r.max]
	}
	if r.f == nil {
		return 0, os.ErrClosed
	}
	if r.size+int64(len(p)) > r.max {
		r.f.Close()
		r.f = nil
		if err := os.Rename(r.path, r.path+".1"); err != nil {
			return 0, err
		}
		if err := r.open(); err != nil {
			return 0, err
		}
	}
	w, err := r.f.Write(p)
	r.size += int64(w)
	if err != nil {
		return w, err
	}
	return n, nil
}

// Close closes the file.
func (r *rolling) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
