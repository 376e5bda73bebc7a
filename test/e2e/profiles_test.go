//go:build !windows

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/fakeext"
)

// tetherCLI runs a tether subcommand against d's config dir.
func tetherCLI(t *testing.T, d *Daemon, args ...string) string {
	t.Helper()
	cmd := exec.Command(d.Bin, args...)
	cmd.Env = d.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tether %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// startPaired launches a browser with label and approves it as a user
// would: the code in the extension's popup must be the one the daemon logged
// and `tether profiles` lists, and `tether profiles approve CODE` pairs it.
func startPaired(t *testing.T, d *Daemon, label string) *Browser {
	t.Helper()
	from := d.Log.Len()
	b := StartBrowser(t, d, BrowserOptions{Label: label, WaitFor: "new browser profile waiting for approval"})
	line, _, err := d.Log.WaitFor(from, 10*time.Second, "waiting for approval", `label=`+label)
	if err != nil {
		t.Fatal(err)
	}
	code := logCode(t, line)
	if shown := popupCode(t, b.DevTools(t)); shown != code {
		t.Fatalf("the popup shows the code %q, the daemon logged %q", shown, code)
	}
	if out := tetherCLI(t, d, "profiles"); !strings.Contains(out, "waiting for approval") || !strings.Contains(out, code) {
		t.Fatalf("tether profiles does not show the waiting browser with its code %s:\n%s", code, out)
	}
	out := tetherCLI(t, d, "profiles", "approve", code)
	if !strings.Contains(out, "approved") {
		t.Fatalf("approve: %s", out)
	}
	if _, _, err := d.Log.WaitFor(from, 10*time.Second, "browser profile approved", "code="+code); err != nil {
		t.Fatal(err)
	}
	return b
}

// logCode takes the pairing code out of a "waiting for approval" log line.
func logCode(t *testing.T, line string) string {
	t.Helper()
	m := regexp.MustCompile(`code=([` + broker.CodeAlphabet + `]{6})`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no pairing code in %q", line)
	}
	return m[1]
}

// popupCode opens the extension's popup as a tab, as the user would, and
// returns the pairing code it shows once it shows one.
func popupCode(t *testing.T, alloc context.Context) string {
	t.Helper()
	popup := OpenTab(t, alloc, "chrome-extension://"+broker.DefaultExtensionID+"/popup.html")
	js := `new Promise((resolve, reject) => {
	  const get = () => { const row = document.getElementById('pairing-code-row'); const c = document.getElementById('pairing-code');
	    return row && !row.hidden && c && c.textContent ? c.textContent : ''; };
	  if (get()) { resolve(get()); return; }
	  const mo = new MutationObserver(() => { if (get()) { mo.disconnect(); resolve(get()); } });
	  mo.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
	  setTimeout(() => reject(new Error('no pairing code in the popup: ' + document.body.innerText)), 15000);
	})`
	code, err := chromedp.Run(popup, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("popup: %v", err)
	}
	return code
}

// clickPopupSwitch opens the extension's popup page as a tab and clicks the
// share switch of the tab with this title ("Share <title>"), waiting for
// it to render.
func clickPopupSwitch(t *testing.T, alloc context.Context, title string) {
	t.Helper()
	popup := OpenTab(t, alloc, "chrome-extension://"+broker.DefaultExtensionID+"/popup.html")
	js := fmt.Sprintf(`new Promise((resolve, reject) => {
	  const name = 'Share ' + %q;
	  const find = () => [...document.querySelectorAll('#tabs input[role=switch]')].find(s => (s.getAttribute('aria-label') || '').includes(name));
	  const attempt = () => { const s = find(); if (s) { s.click(); resolve(true); return true; } return false; };
	  if (attempt()) return;
	  const mo = new MutationObserver(() => { if (attempt()) mo.disconnect(); });
	  mo.observe(document.body, {subtree: true, childList: true});
	  setTimeout(() => reject(new Error('no switch named ' + name + ' in ' + document.body.innerText)), 10000);
	})`, title)
	if _, err := chromedp.Run(popup, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("popup switch: %v", err)
	}
}

// tabNumber finds the number of a listed tab whose line contains text.
func tabNumber(t *testing.T, list, text string) int {
	t.Helper()
	for _, line := range strings.Split(list, "\n") {
		if strings.Contains(line, text) {
			if m := regexp.MustCompile(`\[(\d+)\]`).FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				return n
			}
		}
	}
	t.Fatalf("no tab line with %q in:\n%s", text, list)
	return 0
}

// TestTwoProfiles: two real Chromium profiles pair with one daemon, are
// driven in parallel, share tabs through the popup, refuse an imposter, and
// keep their tab numbers and slugs across a service-worker stop and a daemon
// restart.
func TestTwoProfiles(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	bin := Binary(t)
	d := StartDaemon(t, bin)
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	work := startPaired(t, d, "Work")
	startPaired(t, d, "Home")
	ctx := Context(t, 5*time.Minute)
	c := stdioClient(t, ctx, d)

	// Drive a tab of each profile in parallel.
	var wg sync.WaitGroup
	for _, profile := range []string{"work", "home"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"profile": profile, "url": fixtures.URL + "/form.html?profile=" + profile})
			name := ref(t, snap, "textbox", "Your name")
			greet := ref(t, snap, "button", "Greet")
			mustCall(t, ctx, c, "browser_type", map[string]any{"profile": profile, "tab": 1, "ref": name, "text": profile})
			out := mustCall(t, ctx, c, "browser_click", map[string]any{"profile": profile, "tab": 1, "ref": greet})
			if !strings.Contains(out, "Hello, "+profile+"!") {
				t.Errorf("%s: %s", profile, out)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	list := mustCall(t, ctx, c, "browser_tabs", nil)
	for _, want := range []string{`Work — profile "work"`, `Home — profile "home"`, "form.html?profile=work", "form.html?profile=home"} {
		if !strings.Contains(list, want) {
			t.Fatalf("browser_tabs lacks %q:\n%s", want, list)
		}
	}

	// A tab the user opens is invisible until shared through the popup.
	alloc := work.DevTools(t)
	page := OpenTab(t, alloc, fixtures.URL+"/share.html")
	if list := mustCall(t, ctx, c, "browser_tabs", map[string]any{"profile": "work"}); strings.Contains(list, "Shared by hand") {
		t.Fatalf("an unshared tab is listed:\n%s", list)
	}
	from := d.Log.Len()
	clickPopupSwitch(t, alloc, "Shared by hand")
	if _, _, err := d.Log.WaitFor(from, 10*time.Second, "shared tabs changed", "slug=work", "change=shared"); err != nil {
		t.Fatal(err)
	}
	list = mustCall(t, ctx, c, "browser_tabs", nil)
	shared := tabNumber(t, list, "Shared by hand")

	// A target=_blank link in the shared tab opens a tab that is shared too,
	// and the click's reply names it.
	snap := mustCall(t, ctx, c, "browser_snapshot", map[string]any{"profile": "work", "tab": shared})
	out := mustCall(t, ctx, c, "browser_click", map[string]any{"profile": "work", "tab": shared,
		"ref": ref(t, snap, "link", "Open the greeter in a new tab")})
	if !strings.Contains(out, "This action opened tab") {
		t.Fatalf("the click's reply does not name the opened tab:\n%s", out)
	}

	// Unsharing hides it again.
	from = d.Log.Len()
	clickPopupSwitch(t, alloc, "Shared by hand")
	if _, _, err := d.Log.WaitFor(from, 10*time.Second, "shared tabs changed", "slug=work", "change=unshared"); err != nil {
		t.Fatal(err)
	}
	if list := mustCall(t, ctx, c, "browser_tabs", nil); strings.Contains(list, "Shared by hand") {
		t.Fatalf("an unshared tab is still listed:\n%s", list)
	}

	// A socket that claims Work's profile id without its secret is refused;
	// Work keeps working.
	profiles, err := localclient.New(d.Paths).Profiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var workID string
	for _, p := range profiles.Profiles {
		if p.Slug == "work" {
			workID = p.ID
		}
	}
	// It names the profile in its handshake and proves a secret of its
	// own, or proves none: refused both ways.
	for _, guess := range []string{"", strings.Repeat("0", 64)} {
		_, err = fakeext.Dial(fmt.Sprintf("ws://127.0.0.1:%d/extension", d.Record.Port), protocol.Hello{ProfileID: workID, Label: "Work"}, guess)
		if !errors.Is(err, fakeext.ErrRefused) || !strings.Contains(err.Error(), "unauthorized") {
			t.Fatalf("imposter (secret %q): %v", guess, err)
		}
	}
	mustCall(t, ctx, c, "browser_snapshot", map[string]any{"profile": "work", "tab": 1})

	// Numbers survive a forced service-worker stop…
	before := mustCall(t, ctx, c, "browser_tabs", map[string]any{"profile": "work"})
	StopServiceWorkers(t, page)
	after := mustCall(t, ctx, c, "browser_tabs", map[string]any{"profile": "work"})
	if numbers(before) != numbers(after) {
		t.Fatalf("tab numbers changed across a service-worker stop:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	mustCall(t, ctx, c, "browser_snapshot", map[string]any{"profile": "work", "tab": 1})

	// …and a daemon restart: both profiles come back on their own, with
	// their slugs and numbers, and without asking for approval again.
	// The MCP client of before (through its `tether mcp`) goes on working:
	// the bridge initializes a new session with the new daemon by itself.
	all := mustCall(t, ctx, c, "browser_tabs", nil)
	d2 := d.Restart(t)
	for _, slug := range []string{"work", "home"} {
		if _, _, err := d2.Log.WaitFor(0, 30*time.Second, "extension connected", "slug="+slug); err != nil {
			t.Fatal(err)
		}
	}
	again := mustCall(t, ctx, c, "browser_tabs", nil)
	if numbers(all) != numbers(again) {
		t.Fatalf("after a daemon restart:\nbefore:\n%s\nafter:\n%s", all, again)
	}
	mustCall(t, ctx, c, "browser_snapshot", map[string]any{"profile": "home", "tab": 1})
}

// numbers reduces a browser_tabs listing to its profile and tab-number
// lines, without the titles (which pages may change).
func numbers(list string) string {
	var out []string
	for _, line := range strings.Split(list, "\n") {
		if m := regexp.MustCompile(`^(.*— profile "[^"]+")|^\s*(\[\d+\])`).FindStringSubmatch(line); m != nil {
			out = append(out, m[0])
		}
	}
	return strings.Join(out, "\n")
}
