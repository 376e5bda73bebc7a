package main

// A profiling helper for the idle daemon's memory (BENCHMARKS.md's idle
// RSS row), not part of the bench's runs: it skips unless IDLEPROF_BIN is
// set.
//
//	IDLEPROF_BIN=$PWD/bin/tether [IDLEPROF_PAGES=111] [IDLEPROF_IDLE=60s] GODEBUG=gctrace=1 go test -count=1 -run TestIdleProf -v ./bench/
//
// starts Tether as `make bench` does (`tether serve`, its browser, an MCP
// session through `tether mcp`), navigates to and snapshots the first
// IDLEPROF_PAGES corpus pages (default all), then watches the daemon idle
// for IDLEPROF_IDLE (default 60 s), logging its RSS every 5 s and, at the
// end, /proc/<pid>/smaps_rollup and the daemon's last gctrace lines (when
// GODEBUG=gctrace=1 is set: the daemon inherits it).

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestIdleProf: see the file's comment.
func TestIdleProf(t *testing.T) {
	bin := os.Getenv("IDLEPROF_BIN")
	if bin == "" {
		t.Skip("no IDLEPROF_BIN")
	}
	n, _ := strconv.Atoi(os.Getenv("IDLEPROF_PAGES"))
	idle := 60 * time.Second
	if v := os.Getenv("IDLEPROF_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		idle = d
	}
	corpus := filepath.Join("..", "..", "shared", "corpus", "readability")
	pages, _ := filepath.Glob(filepath.Join(corpus, "*", "source.html"))
	if len(pages) == 0 {
		t.Skip("no corpus at " + corpus)
	}
	slices.Sort(pages)
	if n > 0 && n < len(pages) {
		pages = pages[:n]
	}
	srv := httptest.NewServer(http.StripPrefix("/corpus/", http.FileServer(http.Dir(corpus))))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	tt, err := startTether(ctx, bin, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { tt.s.Close(); tt.stop() }()
	pid := tt.daemon.Process.Pid
	for _, p := range pages {
		rel, _ := filepath.Rel(corpus, p)
		if _, _, err := tt.s.call(ctx, "browser_navigate", map[string]any{"url": srv.URL + "/corpus/" + filepath.ToSlash(rel)}); err != nil {
			t.Logf("%s: %v", rel, err)
			continue
		}
		_, _, _ = tt.s.call(ctx, "browser_snapshot", nil)
	}
	kb, _ := rssKB(pid)
	t.Logf("after %d pages: RSS %d kB", len(pages), kb)
	from := tt.log.Len()
	for end := time.Now().Add(idle); time.Now().Before(end); {
		time.Sleep(5 * time.Second)
		kb, _ := rssKB(pid)
		t.Logf("idle: RSS %d kB", kb)
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	t.Logf("smaps_rollup:\n%s", b)
	var gc []string
	for _, l := range strings.Split(tt.log.String(), "\n")[from:] {
		if strings.HasPrefix(l, "gc ") || strings.Contains(l, "scvg") {
			gc = append(gc, l)
		}
	}
	t.Logf("gctrace while idle:\n%s", strings.Join(gc, "\n"))
}
