//go:build !windows

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
)

// A page restored from the back/forward cache is the same document, with
// its content script and refs: they work. Found in a new-user trial: after
// leaving a page by clicking one of its links (the click's result snapshots
// the next page, which numbers that document) and going back, every snapshot
// printed the restored page's refs and every click on them failed with
// stale_ref, however often the AI snapshotted again: the service worker still
// took the page left to for the frame's document. The page's own handlers,
// read over CDP, prove each click ran; pageshow proves the cache restored it.
func TestRefsAfterBackForwardCache(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	b := StartBrowser(t, d)
	devtools := b.DevTools(t)
	ctx := Context(t, 4*time.Minute)
	c := stdioClient(t, ctx, d)
	pageA, pageB := fixtures.URL+"/back-a.html", fixtures.URL+"/back-b.html"

	snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": pageA})
	before := ref(t, snap, "button", "Click me")
	clickAndCheck(t, ctx, c, devtools, before, "back-a.html", "A clicked 1")

	// Leave by a link: the click's result snapshots page B.
	left := mustCall(t, ctx, c, "browser_click", map[string]any{"ref": ref(t, snap, "link", "To page B")})
	if !strings.Contains(left, "Title: Back B") {
		t.Fatalf("the link did not lead to page B:\n%s", left)
	}
	refB := ref(t, left, "button", "Press B")
	clickAndCheck(t, ctx, c, devtools, refB, "back-b.html", "B clicked 1")

	back := mustCall(t, ctx, c, "browser_navigate_back", nil)
	if !strings.Contains(back, "Title: Back A") {
		t.Fatalf("navigate_back did not return page A:\n%s", back)
	}
	requireRestored(t, devtools, "back-a.html")
	t.Logf("after back:\n%s", back)
	// The ref from before leaving names the same element of the same
	// document: it works (navigate_back's own snapshot came from there).
	clickAndCheck(t, ctx, c, devtools, before, "back-a.html", "A clicked 2")
	// The refs navigate_back printed work.
	clickAndCheck(t, ctx, c, devtools, ref(t, back, "button", "Click me"), "back-a.html", "A clicked 3")
	// And so do those of a fresh snapshot and of browser_find.
	snap = mustCall(t, ctx, c, "browser_snapshot", nil)
	clickAndCheck(t, ctx, c, devtools, ref(t, snap, "button", "Click me"), "back-a.html", "A clicked 4")
	found := mustCall(t, ctx, c, "browser_find", map[string]any{"role": "button", "text": "Click me"})
	clickAndCheck(t, ctx, c, devtools, ref(t, found, "button", "Click me"), "back-a.html", "A clicked 5")

	// Forward again: page B comes back from the cache too.
	fwd := mustCall(t, ctx, c, "browser_navigate_forward", nil)
	if !strings.Contains(fwd, "Title: Back B") || !strings.Contains(fwd, "URL: "+pageB) {
		t.Fatalf("navigate_forward did not return page B:\n%s", fwd)
	}
	requireRestored(t, devtools, "back-b.html")
	clickAndCheck(t, ctx, c, devtools, refB, "back-b.html", "B clicked 2")
	snap = mustCall(t, ctx, c, "browser_snapshot", nil)
	clickAndCheck(t, ctx, c, devtools, ref(t, snap, "button", "Press B"), "back-b.html", "B clicked 3")
	// A ref of page A, now in the cache, is stale, not acted on.
	if text, isErr := call(t, ctx, c, "browser_click", map[string]any{"ref": before}); !isErr || !strings.Contains(text, "stale_ref") {
		t.Fatalf("a ref of the page in the cache: got (isError=%v) %s; want stale_ref", isErr, text)
	}
	if got := PageText(t, devtools, "back-b.html", "#out"); got != "B clicked 3" {
		t.Fatalf("page B shows %q after a click on a ref of page A", got)
	}

	// Back once more, with the history tools only.
	back = mustCall(t, ctx, c, "browser_navigate_back", nil)
	requireRestored(t, devtools, "back-a.html")
	clickAndCheck(t, ctx, c, devtools, ref(t, back, "button", "Click me"), "back-a.html", "A clicked 6")

	// The user goes back and forward in Chrome, no tool involved: the refs
	// from before work (or are cleanly stale, and a snapshot gives ones
	// that work).
	left = mustCall(t, ctx, c, "browser_click", map[string]any{"ref": ref(t, back, "link", "To page B")})
	refB = ref(t, left, "button", "Press B")
	clickAndCheck(t, ctx, c, devtools, refB, "back-b.html", "B clicked 1")
	userHistory(t, devtools, "back-b.html", -1)
	requireRestored(t, devtools, "back-a.html")
	usable(t, ctx, c, devtools, before, "back-a.html", "Click me", "A clicked 7")
	userHistory(t, devtools, "back-a.html", +1)
	requireRestored(t, devtools, "back-b.html")
	usable(t, ctx, c, devtools, refB, "back-b.html", "Press B", "B clicked 2")
}

// The refs of a cross-origin frame of a page restored from the back/forward
// cache work too (the frame's content script answers for itself).
func TestFrameRefsAfterBackForwardCache(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	// Another port is another origin.
	other := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer other.Close()
	b := StartBrowser(t, d)
	devtools := b.DevTools(t)
	ctx := Context(t, 4*time.Minute)
	c := stdioClient(t, ctx, d)

	snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": fixtures.URL + "/back-c.html?frame=" + url.QueryEscape(other.URL+"/back-frame.html")})
	press := ref(t, snap, "button", "Press F")
	if !strings.HasPrefix(press, "f") {
		t.Fatalf("the frame's button has ref %s, want a cross-origin frame's (f…):\n%s", press, snap)
	}
	if text := mustCall(t, ctx, c, "browser_click", map[string]any{"ref": press}); !strings.Contains(text, "F clicked 1") {
		t.Fatalf("click %s:\n%s", press, text)
	}
	left := mustCall(t, ctx, c, "browser_click", map[string]any{"ref": ref(t, snap, "link", "To page B")})
	if !strings.Contains(left, "Title: Back B") {
		t.Fatalf("the link did not lead to page B:\n%s", left)
	}
	back := mustCall(t, ctx, c, "browser_navigate_back", nil)
	requireRestored(t, devtools, "back-c.html")
	t.Logf("after back:\n%s", back)
	for i, r := range []string{press, ref(t, back, "button", "Press F"), ref(t, mustCall(t, ctx, c, "browser_snapshot", nil), "button", "Press F")} {
		want := fmt.Sprintf("F clicked %d", i+2)
		if text := mustCall(t, ctx, c, "browser_click", map[string]any{"ref": r}); !strings.Contains(text, want) {
			t.Fatalf("click %s: the result lacks %q:\n%s", r, want, text)
		}
	}
}

// userHistory goes back (step -1) or forward (+1) in the history of the tab
// whose URL contains urlPart, as the user would with Chrome's buttons, and
// waits until its top frame has navigated.
func userHistory(t *testing.T, devtools context.Context, urlPart string, step int64) {
	t.Helper()
	tab, url := PageTab(t, devtools, urlPart)
	navigated := make(chan struct{}, 1)
	if err := chromedp.Listen(tab, func(ev any) {
		if e, ok := ev.(*page.EventFrameNavigated); ok && e.Frame.ParentID == "" {
			select {
			case navigated <- struct{}{}:
			default:
			}
		}
	}); err != nil {
		t.Fatalf("watch navigations: %v", err)
	}
	hist, err := chromedp.Call(tab, page.GetNavigationHistory, cdp.Empty{})
	if err != nil {
		t.Fatalf("history of %s: %v", url, err)
	}
	i := hist.CurrentIndex + step
	if i < 0 || i >= int64(len(hist.Entries)) {
		t.Fatalf("%s has no history entry %d (of %d)", url, i, len(hist.Entries))
	}
	if _, err := chromedp.Call(tab, page.NavigateToHistoryEntry, page.NavigateToHistoryEntryParams{EntryID: hist.Entries[i].ID}); err != nil {
		t.Fatalf("history step %d in %s: %v", step, url, err)
	}
	select {
	case <-navigated:
	case <-time.After(20 * time.Second):
		t.Fatalf("history step %d in %s: the top frame did not navigate", step, url)
	}
}

// clickAndCheck clicks ref and checks, in the result and in the page itself
// (read over CDP), that the page's handler ran.
func clickAndCheck(t *testing.T, ctx context.Context, c *client.Client, devtools context.Context, ref, urlPart, want string) {
	t.Helper()
	text := mustCall(t, ctx, c, "browser_click", map[string]any{"ref": ref})
	if !strings.Contains(text, want) {
		t.Fatalf("click %s: the result lacks %q:\n%s", ref, want, text)
	}
	if got := PageText(t, devtools, urlPart, "#out"); got != want {
		t.Fatalf("click %s: the page shows %q, want %q", ref, got, want)
	}
}

// usable clicks a ref from before the page was left: it works, or it fails
// as stale_ref and a snapshot then gives a ref (of the button named name)
// that works.
func usable(t *testing.T, ctx context.Context, c *client.Client, devtools context.Context, old, urlPart, name, want string) {
	t.Helper()
	text, isErr := call(t, ctx, c, "browser_click", map[string]any{"ref": old})
	if isErr {
		if !strings.Contains(text, "stale_ref") {
			t.Fatalf("click on the ref %s from before leaving: %s; want success or stale_ref", old, text)
		}
		snap := mustCall(t, ctx, c, "browser_snapshot", nil)
		fresh := ref(t, snap, "button", name)
		t.Logf("the ref %s from before leaving is stale; the snapshot gives %s", old, fresh)
		clickAndCheck(t, ctx, c, devtools, fresh, urlPart, want)
		return
	}
	if !strings.Contains(text, want) {
		t.Fatalf("click %s: the result lacks %q:\n%s", old, want, text)
	}
	if got := PageText(t, devtools, urlPart, "#out"); got != want {
		t.Fatalf("click %s: the page shows %q, want %q", old, got, want)
	}
}

// requireRestored fails unless the page whose URL contains urlPart came
// back from the back/forward cache (its pageshow handler saw persisted):
// else this test tests nothing. It waits, on the page's own events, until
// the page is shown (pagehide marked it "hidden" when it was left).
func requireRestored(t *testing.T, devtools context.Context, urlPart string) {
	t.Helper()
	pctx, url := PageTab(t, devtools, urlPart)
	wait, cancelWait := context.WithTimeout(pctx, 20*time.Second)
	defer cancelWait()
	const js = `new Promise((resolve) => {
		const el = document.getElementById('shown');
		const done = () => el.textContent !== 'hidden' && (resolve(el.textContent), true);
		if (!done()) new MutationObserver(done).observe(el, { childList: true, characterData: true, subtree: true });
	})`
	got, err := chromedp.Run(wait, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("wait for %s to be shown: %v", url, err)
	}
	if got != "restored" {
		t.Fatalf("%s was not restored from the back/forward cache (pageshow: %q)", url, got)
	}
}
