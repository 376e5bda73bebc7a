package clients

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tether-browser/tether/config"
)

// List returns every supported client: installed or not, and what each of
// its config files says about Tether. It never writes.
func (h Host) List() []Status {
	var out []Status
	for _, c := range registry {
		files, installed := h.targets(c)
		s := Status{Client: c, Installed: installed, Connected: true}
		for _, f := range files {
			fs := h.fileStatus(c, f)
			s.Files = append(s.Files, fs)
			s.Connected = s.Connected && fs.Connected
		}
		out = append(out, s)
	}
	return out
}

func (h Host) fileStatus(c Client, path string) FileStatus {
	st := FileStatus{Path: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st
	}
	st.Exists = true
	if err != nil {
		st.Err = err
		return st
	}
	e, err := readEntry(c, path, b)
	if err != nil {
		st.Err = err
		return st
	}
	if e == nil {
		return st
	}
	st.Connected = true
	st.Command, _ = e["command"].(string)
	for _, k := range []string{"url", "serverUrl", "httpUrl"} {
		if u, ok := e[k].(string); ok {
			st.URL = u
		}
	}
	st.Mode = ModeStdio
	if st.URL != "" {
		st.Mode = ModeHTTP
	}
	return st
}

// readEntry decodes our entry in a config file's bytes, nil when absent.
func readEntry(c Client, path string, b []byte) (map[string]any, error) {
	if c.format == formatTOML {
		m, err := parseTOML(path, bytes.TrimPrefix(b, utf8BOM))
		if err != nil {
			return nil, err
		}
		return tomlTether(m), nil
	}
	d, err := parseJSONDoc(path, b)
	if err != nil {
		return nil, err
	}
	return d.entry(c.key), nil
}

// Connect writes Tether's entry into every config file of the client
// (normally one; Claude Desktop on Windows with the MSIX build has two, and
// Cline may have an old and a new one). Errors: ErrUnknownClient, ErrNoHTTP
// (o.HTTP for a stdio-only client), a *ParseError or *ShapeError for a file
// left unchanged (errors.Is(err, ErrRefused)), or an I/O error. Files are
// written in order; an error stops at the failing file and the Outcome says
// which were written before it.
func (h Host) Connect(id string, o Options) (Outcome, error) {
	c, ok := Lookup(id)
	if !ok {
		return Outcome{}, fmt.Errorf("%w %q (one of: %s)", ErrUnknownClient, id, strings.Join(IDs(), ", "))
	}
	if !o.HTTP && !h.isAbs(o.Executable) {
		return Outcome{Client: c}, fmt.Errorf("the command must be an absolute path, got %q", o.Executable)
	}
	entry, err := c.entry(o)
	if err != nil {
		return Outcome{Client: c}, err
	}
	files, _ := h.targets(c)
	return h.apply(c, files, func(path string, b []byte) ([]byte, Change, error) {
		return edit(c, path, b, entry)
	})
}

// entry returns the entry Connect writes for o.
func (c Client) entry(o Options) (fields, error) {
	if o.HTTP {
		if c.http == nil {
			return nil, fmt.Errorf("%s: %w; connect it without --http (the stdio entry starts Tether by itself)", c.Name, ErrNoHTTP)
		}
		if o.URL == "" || o.Token == "" {
			return nil, errors.New("an HTTP entry needs the daemon's URL and token")
		}
		return c.http(o), nil
	}
	return c.stdio(o), nil
}

func edit(c Client, path string, b []byte, entry fields) ([]byte, Change, error) {
	if c.format == formatTOML {
		return tomlConnect(path, b, entry)
	}
	d, err := parseJSONDoc(path, b)
	if err != nil {
		return nil, "", err
	}
	ch, err := d.connect(path, c.key, entry)
	if err != nil {
		return nil, "", err
	}
	return d.pack(), ch, nil
}

// Disconnect removes Tether's entry, and only it, from every config file of
// the client. A missing file or a file without our entry is Unchanged.
// Errors as for Connect.
func (h Host) Disconnect(id string) (Outcome, error) {
	c, ok := Lookup(id)
	if !ok {
		return Outcome{}, fmt.Errorf("%w %q (one of: %s)", ErrUnknownClient, id, strings.Join(IDs(), ", "))
	}
	var files []string
	for _, l := range c.locations(h) {
		files = append(files, l.file)
	}
	return h.apply(c, files, func(path string, b []byte) ([]byte, Change, error) {
		if b == nil {
			return nil, Unchanged, nil
		}
		if c.format == formatTOML {
			return tomlDisconnect(path, b)
		}
		d, err := parseJSONDoc(path, b)
		if err != nil {
			return nil, "", err
		}
		ch, err := d.disconnect(path, c.key)
		if err != nil {
			return nil, "", err
		}
		return d.pack(), ch, nil
	})
}

// RotateToken rewrites the bearer token in every HTTP entry Tether wrote:
// entries named ServerName whose URL is a loopback http URL ending in /mcp.
// Their URL is kept. Stdio entries and other servers are not touched (a
// stdio entry reads the token file itself). It returns one Outcome per client
// with such an entry, and stops at the first error.
func (h Host) RotateToken(token string) ([]Outcome, error) {
	var outs []Outcome
	for _, s := range h.List() {
		c := s.Client
		entries := map[string]fields{}
		var files []string
		for _, f := range s.Files {
			if f.Mode != ModeHTTP || !isTetherURL(f.URL) {
				continue
			}
			e, err := c.entry(Options{HTTP: true, URL: f.URL, Token: token})
			if err != nil {
				return outs, err
			}
			entries[f.Path] = e
			files = append(files, f.Path)
		}
		if len(files) == 0 {
			continue
		}
		o, err := h.apply(c, files, func(path string, b []byte) ([]byte, Change, error) {
			return edit(c, path, b, entries[path])
		})
		outs = append(outs, o)
		if err != nil {
			return outs, err
		}
	}
	return outs, nil
}

// isAbs reports whether p is an absolute path on h.OS (C:\ or \\server\
// on Windows), whatever OS runs the test.
func (h Host) isAbs(p string) bool {
	if h.OS == "windows" {
		return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') || strings.HasPrefix(p, `\\`)
	}
	return strings.HasPrefix(p, "/")
}

func isTetherURL(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Path != "/mcp" {
		return false
	}
	switch u.Hostname() {
	case "127.0.0.1", "localhost", "::1":
		return true
	}
	return false
}

// IDs returns every client ID.
func IDs() []string {
	var ids []string
	for _, c := range registry {
		ids = append(ids, c.ID)
	}
	return ids
}

// apply runs fn on each file's bytes (nil for a missing file) and writes the
// result when it changed.
func (h Host) apply(c Client, files []string, fn func(path string, b []byte) ([]byte, Change, error)) (Outcome, error) {
	o := Outcome{Client: c}
	for _, f := range files {
		r, err := h.editFile(f, fn)
		if err != nil {
			return o, err
		}
		o.Files = append(o.Files, r)
		if r.Change != Unchanged {
			o.Changed = true
		}
	}
	o.NeedsRestart = o.Changed && c.NeedsRestart
	return o, nil
}

// editFile reads path, computes the new bytes and, when they differ, backs
// the old file up and writes the new one atomically with the old mode (0600
// for a new file, in a folder created 0700). A file changed by someone else
// between our read and our write (Claude Code rewrites ~/.claude.json all the
// time, docs/mcp-clients.md §4) is read again and edited again, up to 3 times.
func (h Host) editFile(path string, fn func(path string, b []byte) ([]byte, Change, error)) (FileResult, error) {
	res := FileResult{Path: path}
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r // edit the target of a symlinked dotfile, keep the link
	}
	for range 3 {
		old, err := os.ReadFile(real)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return res, fmt.Errorf("read %s: %w", path, err)
		}
		out, ch, err := fn(path, old)
		if err != nil {
			return res, err
		}
		res.Change = ch
		if ch == Unchanged || exists && bytes.Equal(out, old) {
			res.Change = Unchanged
			return res, nil
		}
		mode := fs.FileMode(0o600)
		if exists {
			fi, err := os.Stat(real)
			if err != nil {
				return res, err
			}
			mode = fi.Mode().Perm()
		} else if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
			return res, fmt.Errorf("create the folder of %s: %w", path, err)
		}
		// Re-read right before writing.
		again, err := os.ReadFile(real)
		if exists != (err == nil) || !bytes.Equal(again, old) {
			continue
		}
		if exists {
			if res.Backup, err = h.backup(real, old, mode); err != nil {
				return res, err
			}
		}
		if err := config.WriteFileAtomic(real, out, mode); err != nil {
			return res, err
		}
		return res, nil
	}
	return res, fmt.Errorf("%s keeps changing while Tether edits it; quit the app that writes it and try again", path)
}

// backupSuffix precedes the timestamp in backup names:
// <file>.tether-backup-20261129T131721.123Z.
const backupSuffix = ".tether-backup-"

// backup writes old next to path, then deletes the oldest of our backups
// beyond MaxBackups. It returns the backup's path.
func (h Host) backup(path string, old []byte, mode fs.FileMode) (string, error) {
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	stamp := now().UTC().Format("20060102T150405.000Z")
	name := path + backupSuffix + stamp
	for i := 1; ; i++ {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			name = fmt.Sprintf("%s%s%s-%d", path, backupSuffix, stamp, i)
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		_, werr := f.Write(old)
		serr := f.Sync()
		cerr := f.Close()
		if err := errors.Join(werr, serr, cerr); err != nil {
			os.Remove(name)
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		break
	}
	max := h.MaxBackups
	if max <= 0 {
		max = DefaultMaxBackups
	}
	var all []string
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), filepath.Base(path)+backupSuffix) {
			all = append(all, filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
	slices.Sort(all) // timestamps sort in time order
	for len(all) > max {
		if all[0] != name {
			os.Remove(all[0])
		}
		all = all[1:]
	}
	return name, nil
}
