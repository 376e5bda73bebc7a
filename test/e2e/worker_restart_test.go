//go:build !windows

package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const readyPage = `<!doctype html><title>Ready</title><button>Press</button><p>Ready</p>`

// A service worker stopped in the middle of a call (as Chrome stops an
// idle one, or a crash) surfaces as a plain sentence, not Chrome's
// internal "A listener indicated an asynchronous response…": a read may
// be called again, an action's outcome is unknown.
func TestServiceWorkerStoppedMidCall(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow")
	// /slow answers after 10 s: a navigation there is an action in flight
	// while the page it leaves still answers.
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-time.After(10 * time.Second):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(readyPage))
	}))
	defer pages.Close()
	b := StartBrowser(t, d)
	ctx := Context(t, 3*time.Minute)
	c := stdioClient(t, ctx, d)
	mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": pages.URL + "/ready.html"})
	page := OpenTab(t, b.DevTools(t), "about:blank") // the harness's CDP handle, not a shared tab

	stopDuring := func(tool string, args map[string]any) string {
		t.Helper()
		type result struct {
			text  string
			isErr bool
		}
		done := make(chan result, 1)
		go func() {
			text, isErr := call(t, ctx, c, tool, args)
			done <- result{text, isErr}
		}()
		time.Sleep(3 * time.Second) // well inside the 10 s wait and the 10 s load
		StopServiceWorkers(t, page)
		r := <-done
		if !r.isErr {
			t.Fatalf("%s survived the service worker's stop: %s", tool, r.text)
		}
		if strings.Contains(r.text, "listener indicated") || strings.Contains(r.text, "message channel closed") {
			t.Fatalf("%s: Chrome's internal text reached the agent: %s", tool, r.text)
		}
		return r.text
	}

	if text := stopDuring("browser_wait_for", map[string]any{"time": 10}); !strings.Contains(text, "The Tether extension restarted during this call") || !strings.Contains(text, "call the tool again") {
		t.Fatalf("a read cut short:\n%s", text)
	}
	if text := stopDuring("browser_navigate", map[string]any{"url": pages.URL + "/slow"}); !strings.Contains(text, "whether the navigation happened is unknown") || !strings.Contains(text, "browser_snapshot") || strings.Contains(text, "call the tool again") {
		t.Fatalf("an action cut short:\n%s", text)
	}
	// The extension comes back by itself and works (the tab may still be
	// loading /slow for a few seconds).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		text, isErr := call(t, ctx, c, "browser_snapshot", nil)
		if !isErr && strings.Contains(text, `button "Press"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart:\n%s", text)
		}
	}
}
