package logs

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the timer's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRateLimitFoldsRepeatsIntoOneLine(t *testing.T) {
	var out syncBuffer
	h := RateLimit(slog.NewTextHandler(&out, nil), 10, time.Hour).(*rateHandler)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h.l.now = func() time.Time { return now }
	log := slog.New(h).With("component", "test")
	for i := 0; i < 3000; i++ {
		log.Warn("request refused: browser origin on the MCP endpoint", "origin", "https://evil.example")
	}
	log.Info("another message")
	if n := strings.Count(out.String(), "\n"); n != 11 {
		t.Fatalf("%d lines during the flood, want 10 + 1:\n%s", n, out.String())
	}
	now = now.Add(time.Hour) // the window ends: the next record of the message brings the summary
	log.Warn("request refused: browser origin on the MCP endpoint", "origin", "https://evil.example")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 13 {
		t.Fatalf("%d lines, want 13:\n%s", len(lines), out.String())
	}
	sum := lines[11]
	for _, want := range []string{"(×3 000 in the last 1h0m0s)", "not_logged=2990", "origin=https://evil.example", "component=test"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q lacks %q", sum, want)
		}
	}
}

func TestRateLimitSummaryAfterTheWindowWithoutNewRecords(t *testing.T) {
	var out syncBuffer
	log := slog.New(RateLimit(slog.NewTextHandler(&out, nil), 1, 50*time.Millisecond))
	for i := 0; i < 5; i++ {
		log.Warn("refused")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "refused (×5 in the last 50ms)") {
		if time.Now().After(deadline) {
			t.Fatalf("no summary line:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestFlushWritesHeldCounts(t *testing.T) {
	var out syncBuffer
	h := RateLimit(slog.NewTextHandler(&out, nil), 2, time.Hour)
	log := slog.New(h)
	for i := 0; i < 5; i++ {
		log.Warn("refused")
	}
	Flush(h)
	if !strings.Contains(out.String(), "refused (×5 in the last 1h0m0s)") || strings.Count(out.String(), "\n") != 3 {
		t.Fatalf("after Flush:\n%s", out.String())
	}
}

func TestRateLimitCutsLongValues(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(RateLimit(slog.NewTextHandler(&out, nil), 10, time.Minute))
	log.Warn("request refused: Host is not loopback", "host", strings.Repeat("h", 1<<20))
	if out.Len() > 1000 || !strings.Contains(out.String(), "(1048576 bytes)") {
		t.Fatalf("a 1 MiB Host gave a %d-byte line: %.300s", out.Len(), out.String())
	}
}

// Attributes a derived logger adds (log.With("path", r.URL.Path), as the
// local API's check does) are cut too: a refused request's path is the
// sender's to choose, up to the 1 MB of a request line.
func TestRateLimitAndCutValuesCutWithAttrs(t *testing.T) {
	for name, wrap := range map[string]func(slog.Handler) slog.Handler{
		"RateLimit": func(h slog.Handler) slog.Handler { return RateLimit(h, 10, time.Minute) },
		"CutValues": CutValues,
	} {
		var out bytes.Buffer
		log := slog.New(wrap(slog.NewTextHandler(&out, nil)))
		log.With("path", "/api/"+strings.Repeat("A", 1<<20)).WithGroup("g").With("p2", strings.Repeat("B", 5000)).Warn("local API request refused")
		if out.Len() > 1000 || !strings.Contains(out.String(), "(1048581 bytes)") || !strings.Contains(out.String(), "(5000 bytes)") {
			t.Errorf("%s: a 1 MiB path added with With gave a %d-byte line: %.300s", name, out.Len(), out.String())
		}
	}
}

// Messages whose windows ended make room for new ones: a burst of distinct
// messages does not fold every later message into one count for good.
func TestRateLimitForgetsEndedWindows(t *testing.T) {
	var out syncBuffer
	h := RateLimit(slog.NewTextHandler(&out, nil), 10, time.Minute).(*rateHandler)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h.l.now = func() time.Time { return now }
	log := slog.New(h)
	for i := 0; i < maxKeys; i++ {
		log.Info(fmt.Sprintf("distinct %d", i))
	}
	now = now.Add(2 * time.Minute)
	for i := 0; i < 20; i++ {
		log.Info(fmt.Sprintf("later %d", i))
	}
	if n := strings.Count(out.String(), "msg=\"later "); n != 20 {
		t.Fatalf("%d of 20 later distinct messages written", n)
	}
}

func TestGroupThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1 000", 3000: "3 000", 1234567: "1 234 567"} {
		if got := groupThousands(n); got != want {
			t.Errorf("groupThousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestRollingBridgeLogStaysUnderItsCap(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenBridge(dir, 4242, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 999) + "\n")
	for i := 0; i < 2000; i++ { // 2 MB
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	var total int64
	for _, name := range []string{"mcp-bridge-4242.log", "mcp-bridge-4242.log.1"} {
		info, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if info.Size() > BridgeFileBytes || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: %d bytes, mode %v; want ≤ %d, 0600", name, info.Size(), info.Mode(), BridgeFileBytes)
		}
		total += info.Size()
	}
	if total > 2*BridgeFileBytes {
		t.Fatalf("bridge logs hold %d bytes", total)
	}
}

func TestPruneBridgesByAgeAndCount(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	write := func(name string, age time.Duration) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 12; i++ {
		write(BridgeFileName(1000+i), time.Duration(i)*time.Minute)
	}
	write(BridgeFileName(1001)+".1", 2*time.Hour)
	write(BridgeFileName(9999), 8*24*time.Hour) // too old
	write("mcp-bridge.log", time.Minute)        // legacy shared log
	write("mcp-bridge-notes.log", time.Minute)  // not a bridge's: kept
	w, err := OpenBridge(dir, 77, now)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	names, _ := filepath.Glob(filepath.Join(dir, "*"))
	var got []string
	for _, n := range names {
		got = append(got, filepath.Base(n))
	}
	want := []string{"mcp-bridge-1001.log", "mcp-bridge-1001.log.1", "mcp-bridge-1002.log", "mcp-bridge-1003.log",
		"mcp-bridge-1004.log", "mcp-bridge-1005.log", "mcp-bridge-1006.log", "mcp-bridge-1007.log", "mcp-bridge-77.log", "mcp-bridge-notes.log"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("after pruning:\n got %v\nwant %v", got, want)
	}
}

func TestDeferredHoldsLinesUntilStarted(t *testing.T) {
	var d Deferred
	d.Write([]byte("before\n"))
	d.Write(bytes.Repeat([]byte("y"), deferredMax)) // over the buffer: dropped
	var out bytes.Buffer
	if err := d.Start(&out); err != nil {
		t.Fatal(err)
	}
	d.Write([]byte("after\n"))
	if out.String() != "before\nafter\n" {
		t.Fatalf("got %q", out.String())
	}
}

// A tether.log of an older version, never rotated, is cut to its tail at
// the first start, so the cap holds at once.
func TestOversizedOldLogIsCutToItsTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.log")
	var b strings.Builder
	for i := 0; b.Len() < 17<<20; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", 100))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := DaemonFile(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("new line\n"))
	w.Close()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > DaemonFileMB<<20 || !strings.HasPrefix(string(got), "line ") || !strings.HasSuffix(string(got), "new line\n") {
		t.Fatalf("tether.log is %d bytes, starting %.40q", len(got), got)
	}
}

func TestDaemonFileRotatesWithinItsCap(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 8 MB")
	}
	dir := t.TempDir()
	w, err := DaemonFile(filepath.Join(dir, "tether.log"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(w, nil))
	pad := strings.Repeat("p", 200)
	for i := 0; i < 40000; i++ { // about 10 MB of distinct lines
		log.LogAttrs(context.Background(), slog.LevelWarn, "line", slog.Int("i", i), slog.String("pad", pad))
	}
	w.Close()
	// lumberjack removes old backups in a goroutine: wait for it.
	var total int64
	var entries []os.DirEntry
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		entries, _ = os.ReadDir(dir)
		total = 0
		for _, e := range entries {
			if info, err := e.Info(); err == nil {
				total += info.Size()
			}
		}
		if len(entries) <= 1+DaemonBackups || time.Now().After(deadline) {
			break
		}
	}
	if len(entries) > 1+DaemonBackups || total > (1+DaemonBackups)*DaemonFileMB<<20 {
		t.Fatalf("%d files, %d bytes; want ≤ %d files, ≤ %d bytes", len(entries), total, 1+DaemonBackups, (1+DaemonBackups)*DaemonFileMB<<20)
	}
}

func TestCutValuesKeepsEveryLine(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(CutValues(slog.NewTextHandler(&out, nil)))
	for i := 0; i < 50; i++ {
		log.Warn("refused", "origin", strings.Repeat("o", 5000))
	}
	if n := strings.Count(out.String(), "\n"); n != 50 || out.Len() > 50*400 {
		t.Fatalf("%d lines, %d bytes", n, out.Len())
	}
}

// A folder where tether.log should be is left where it is, with an error
// saying what to do (lumberjack moved it aside as an old log, and made the
// new log with the folder's mode, 0755).
func TestDaemonFileRefusesAFolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tether.log")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := DaemonFile(path); err == nil || !strings.Contains(err.Error(), "is a folder") || !strings.Contains(err.Error(), "move it") {
		t.Fatalf("got %v, want an error saying to move the folder", err)
	}
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		t.Fatal("the folder was moved")
	}
}
