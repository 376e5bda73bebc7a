//go:build !windows

package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// browser_navigate to about:blank after an http page returns about:blank,
// every time, on the first try: it returned the previous page's snapshot
// (the tab had not committed the navigation yet) or an internal
// back/forward-cache error (the previous page's content script was asked
// while the page went into the cache).
func TestNavigateToAboutBlank(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	b := StartBrowser(t, d)
	ctx := Context(t, 3*time.Minute)
	c := stdioClient(t, ctx, d)
	pages := []string{fixtures.URL + "/tools.html", fixtures.URL + "/page2.html"}
	for i := range 6 {
		page := pages[i%len(pages)]
		if text := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": page}); !strings.Contains(text, "URL: "+page) {
			t.Fatalf("round %d: navigate to %s:\n%s", i, page, text)
		}
		text, isErr := call(t, ctx, c, "browser_navigate", map[string]any{"url": "about:blank"})
		if isErr || !strings.Contains(text, "URL: about:blank") || strings.Contains(text, "[ref=") || strings.Contains(text, page) {
			t.Fatalf("round %d: navigate from %s to about:blank (isError=%v):\n%s", i, page, isErr, text)
		}
		if snap := mustCall(t, ctx, c, "browser_snapshot", nil); !strings.Contains(snap, "URL: about:blank") {
			t.Fatalf("round %d: snapshot after about:blank:\n%s", i, snap)
		}
	}
	// `tether browser --headless` kept Chromium's D-Bus and zygote errors
	// off its terminal (they are in its log file).
	if out := b.Log.String(); strings.Contains(out, "dbus/") || strings.Contains(out, "zygote_communication") {
		t.Errorf("Chromium's noise reached tether browser's output:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(b.UserDataDir, "tether-browser.log")); err != nil {
		t.Errorf("no browser log file: %v", err)
	}
	// From about:blank to about:blank.
	if text := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": "about:blank"}); !strings.Contains(text, "URL: about:blank") {
		t.Fatalf("about:blank twice:\n%s", text)
	}
	// And to a page again.
	if text := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": pages[0]}); !strings.Contains(text, `heading "Tool bench"`) {
		t.Fatalf("back to a page after about:blank:\n%s", text)
	}
}
