//go:build !windows

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/test/mcpclient"
)

// busyPage is the soak page's kind of page (no dialog of its own) with a way
// to keep its main thread busy for a while, as a page's own heavy script
// does: busy(ms) first tells the test server (a synchronous /busy request,
// so the test waits on the event, not on a clock), then runs for ms. Its
// Hold button's handler waits in a synchronous /hold request until the test
// lets it go, so a click stays in flight as long as the test needs.
const busyPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Busy</title></head><body>
<h1>Busy</h1>
<button type="button" onclick="document.getElementById('n').textContent = 'Clicks: ' + (++clicks)">Add</button>
<button type="button" onclick="const x = new XMLHttpRequest(); x.open('GET', '/hold', false); try { x.send(); } catch (e) {} document.getElementById('n').textContent = 'Held: done'">Hold</button>
<p id="n">Clicks: 0</p>
<script>
let clicks = 0;
function busy(ms) {
  const x = new XMLHttpRequest();
  x.open('GET', '/busy', false);
  try { x.send(); } catch (e) {}
  const t = Date.now();
  while (Date.now() - t < ms) {}
}
</script>
</body></html>`

// isFalseDialog says whether a tool's text claims the page is blocked by a dialog.
func isFalseDialog(text string) bool {
	return strings.Contains(text, "dialog_open") || strings.Contains(text, "does not answer") || strings.Contains(text, "blocked by a")
}

// TestWorkerStopNoFalseDialog: the extension's service worker is stopped (as
// Chrome stops an idle one; the offscreen document keeps the socket, the
// content scripts stay) right before calls on a shared tab whose page never
// opens a dialog, while calls run, and while the page is busy for a moment:
// no call says the tab is blocked by a dialog. Dialogs that are really open
// are still reported by the restarted worker, with their text when the
// page's hooks saw them, else as a page that does not answer.
func TestWorkerStopNoFalseDialog(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	b := StartBrowser(t, d)
	busyStarted := make(chan struct{}, 4)
	held, release := make(chan struct{}, 1), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, busyPage)
		case "/busy":
			busyStarted <- struct{}{}
			w.WriteHeader(http.StatusNoContent)
		case "/hold":
			held <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := Context(t, 5*time.Minute)
	c := httpClient(t, ctx, d, d.Token)
	alloc := b.DevTools(t)

	snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": srv.URL + "/"})
	add := ref(t, snap, "button", "Add")
	// The harness's own CDP sessions: an unshared blank tab to stop the
	// workers through, and the shared page (to run the page's script, and
	// to see and answer its dialogs as the user).
	blank, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if _, err := chromedp.Run(blank, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	tab := pageTab(t, alloc, srv.URL)
	dialogs := watchDialogs(t, tab)
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"browser_click", map[string]any{"ref": add}},
		{"browser_snapshot", map[string]any{}},
		{"browser_find", map[string]any{"text": "Clicks"}},
	}

	// 1. A stop right before each call: the restarted worker takes the call.
	for i := range 9 {
		call := calls[i%len(calls)]
		StopServiceWorkers(t, blank)
		text, isErr, err := mcpclient.Call(ctx, c, call.tool, call.args, nil)
		if err != nil || isErr {
			t.Errorf("stop %d, then %s: %v %s", i, call.tool, err, text)
		}
	}

	// 2. The page's own script keeps it busy for 1.5 s (no dialog), the
	// worker is stopped, and the call comes: the page answers late but
	// answers, so it is slow, not blocked. (A worker held up as it starts
	// sees the same: the page's answer after its own timer.)
	for i, call := range calls {
		if _, err := chromedp.Run(tab, chromedp.Evaluate[int](`setTimeout(() => busy(1500), 0), 1`)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-busyStarted:
		case <-ctx.Done():
			t.Fatal("the page's script did not start")
		}
		StopServiceWorkers(t, blank)
		start := time.Now()
		text, isErr, err := mcpclient.Call(ctx, c, call.tool, call.args, nil)
		t.Logf("busy page %d: %s after a worker stop took %v", i, call.tool, time.Since(start).Round(time.Millisecond))
		if err != nil || isErr {
			t.Errorf("busy page %d: %s after a worker stop: %v %s", i, call.tool, err, text)
		}
	}

	// 3. Stops while calls run, one after another as an agent makes them
	// (each stop through a new tab, as the soak does): a call cut off by
	// the stop may fail, but none says the page is blocked by a dialog.
	errs := make(chan string, 1000)
	done := make(chan struct{})
	go func() {
		defer close(errs)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			call := calls[i%len(calls)]
			text, isErr, err := mcpclient.Call(ctx, c, call.tool, call.args, nil)
			switch {
			case err != nil:
				errs <- call.tool + ": " + err.Error()
			case isErr:
				errs <- call.tool + ": " + text
			default:
				errs <- ""
			}
		}
	}()
	check := func(e string) {
		if e == "" {
			return
		}
		t.Logf("a call cut off by a worker stop: %.300s", e)
		if isFalseDialog(e) {
			t.Errorf("a call around a worker stop reported a dialog: %s", e)
		}
	}
	for i := range 12 {
		for range 2 + i%3 {
			check(<-errs)
		}
		stopWorkers(t, b)
	}
	close(done)
	for e := range errs {
		check(e)
	}

	// 4. A click in the page's handler when the worker stops: the agent
	// hears that the call failed (not that a dialog blocks the page).
	result := clickAsync(ctx, c, ref(t, snap, "button", "Hold"))
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the click did not reach the page's handler")
	}
	StopServiceWorkers(t, blank)
	got := <-result
	close(release)
	t.Logf("a click in flight when the worker stopped: %s: %.400s", got[0], got[1])
	if got[0] == "ok" || isFalseDialog(got[1]) {
		t.Errorf("a click cut off by a worker stop was reported as %s: %s", got[0], got[1])
	}

	// 5. Real dialogs after a worker stop. One the page's hooks saw open
	// (the page's own timer, 1.5 s after the last call): reported with its
	// text. The cut-off click never told the hooks that the AI stopped
	// acting; the worker that starts again for the next call does (else
	// they would answer this dialog themselves until that click's deadline).
	mustCall(t, ctx, c, "browser_snapshot", nil)
	if _, err := chromedp.Run(tab, chromedp.Evaluate[int](`setTimeout(() => { confirm('Seen: delete the draft?') }, 1500), 1`)); err != nil {
		t.Fatal(err)
	}
	dialogs.next(t, 10*time.Second)
	// The hooks' record of it must be in the extension's session storage
	// before the worker stops: a stop in the instant between the dialog
	// opening and that write loses it (the dialog then reads as unseen).
	waitSessionState(t, alloc, "Seen: delete the draft?")
	StopServiceWorkers(t, blank)
	text, isErr := call(t, ctx, c, "browser_snapshot", nil)
	if !isErr || !strings.Contains(text, "dialog_open") || !strings.Contains(text, "Seen: delete the draft?") {
		t.Errorf("snapshot while a seen dialog is open, after a worker stop (error=%v):\n%s", isErr, text)
	}
	answer(t, tab, true)
	mustCall(t, ctx, c, "browser_snapshot", nil)

	// One from a frame the hooks never reached: the page does not answer.
	if _, err := chromedp.Run(tab, chromedp.Evaluate[int](`setTimeout(() => { const f = document.createElement('iframe'); document.body.append(f); f.contentWindow.alert.call(window, 'unseen') }, 1500), 1`)); err != nil {
		t.Fatal(err)
	}
	dialogs.next(t, 10*time.Second)
	StopServiceWorkers(t, blank)
	start := time.Now()
	text, isErr = call(t, ctx, c, "browser_snapshot", nil)
	t.Logf("an unseen dialog after a worker stop: reported in %v", time.Since(start).Round(time.Millisecond))
	if !isErr || !strings.Contains(text, "dialog_open") || !strings.Contains(text, "does not answer") {
		t.Errorf("snapshot while an unseen dialog is open, after a worker stop (error=%v):\n%s", isErr, text)
	}
	answer(t, tab, true)
	mustCall(t, ctx, c, "browser_snapshot", nil)
}

// waitSessionState waits until the extension's chrome.storage.session
// holds text, read from an extension page of its own (session storage is
// readable from the extension's pages, not from web pages).
func waitSessionState(t *testing.T, alloc context.Context, text string) {
	t.Helper()
	page := OpenTab(t, alloc, "chrome-extension://"+broker.DefaultExtensionID+"/popup.html")
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := chromedp.Run(page, chromedp.Evaluate[string](`chrome.storage.session.get(null).then((s) => JSON.stringify(s))`, chromedp.EvalAwaitPromise))
		if err == nil && strings.Contains(got, text) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the extension's session storage never held %q (%v): %.300s", text, err, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pageTab attaches the harness to the page at url, at once.
func pageTab(t *testing.T, alloc context.Context, url string) context.Context {
	t.Helper()
	tab, _ := PageTab(t, alloc, url)
	if _, err := chromedp.Run(tab, chromedp.Evaluate[int]("1")); err != nil { // attach now
		t.Fatal(err)
	}
	return tab
}
