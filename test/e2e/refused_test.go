//go:build !windows

package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tether-browser/tether/broker"
)

// popupConnection is what the popup's connection card shows.
type popupConnection struct {
	State, Slug, Refusal string
	Reconnect            bool
}

// waitPopup opens the popup as a tab and waits (15 s at most) until its
// connection card is in state; it returns what the card shows then.
func waitPopup(t *testing.T, alloc context.Context, state string) popupConnection {
	t.Helper()
	popup := OpenTab(t, alloc, "chrome-extension://"+broker.DefaultExtensionID+"/popup.html")
	js := `new Promise((resolve, reject) => {
	  const read = () => ({
	    state: document.getElementById('connection').dataset.state || '',
	    slug: document.getElementById('slug').textContent,
	    refusal: document.getElementById('refusal').textContent,
	    reconnect: !document.getElementById('reconnect').hidden,
	  });
	  const started = Date.now();
	  const tick = () => {
	    const v = read();
	    if (v.state === ` + "`" + state + "`" + `) { resolve(JSON.stringify(v)); return; }
	    if (Date.now() - started > 15000) { reject(new Error('the popup shows ' + JSON.stringify(v))); return; }
	    setTimeout(tick, 100);
	  };
	  tick();
	})`
	raw, err := chromedp.Run(popup, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("popup: %v", err)
	}
	var v popupConnection
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("popup %q: %v", raw, err)
	}
	return v
}

// TestRefusedBrowserWithoutPopup: a new user's path through forget, deny
// and back, in a headless browser that has no popup to press.
//   - `tether profiles forget` of a running browser: it is back in the
//     waiting list at once, and forget says so with its code and the
//     command that refuses it;
//   - `tether profiles deny CODE` says what it denied; the extension stops
//     asking (no hello for 8 s); its popup shows no slug (it has none in
//     Tether any more) and offers Reconnect; `tether profiles` lists it as
//     refused with the next step;
//   - restarting the browser (the headless way back: its halt lived in
//     chrome.storage.session) makes it ask again with the same code, and
//     approving it pairs it.
func TestRefusedBrowserWithoutPopup(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t))
	b := startPaired(t, d, "CIbox")

	out := tetherCLI(t, d, "profiles", "forget", "cibox")
	m := regexp.MustCompile(`waits for approval with the code ([` + broker.CodeAlphabet + `]{6})`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("forget does not say the browser is back asking, with its code:\n%s", out)
	}
	code := m[1]
	t.Logf("tether profiles forget cibox:\n%s", out)
	if !strings.Contains(out, "tether profiles deny "+code) {
		t.Fatalf("forget does not say how to refuse it:\n%s", out)
	}

	from := d.Log.Len()
	out = tetherCLI(t, d, "profiles", "deny", code)
	t.Logf("tether profiles deny %s:\n%s", code, out)
	if !strings.Contains(out, `denied "CIbox" (code `+code) || !strings.Contains(out, "restart that browser") {
		t.Fatalf("deny does not say what it denied and how to undo it:\n%s", out)
	}
	if _, _, err := d.Log.WaitFor(from, 10*time.Second, "browser profile denied", "code="+code); err != nil {
		t.Fatal(err)
	}

	alloc := b.DevTools(t)
	card := waitPopup(t, alloc, "refused")
	if card.Slug != "—" || !card.Reconnect || !strings.Contains(card.Refusal, "restart the browser") {
		t.Fatalf("after forget then deny, the popup shows %+v: want no slug, Reconnect, and the way back", card)
	}

	// Halted: it asks nothing more by itself.
	if line, _, err := d.Log.WaitFor(from, 8*time.Second, "new browser profile waiting for approval"); err == nil {
		t.Fatalf("the denied browser asked again by itself: %s", line)
	}
	list := tetherCLI(t, d, "profiles")
	t.Logf("tether profiles:\n%s", list)
	for _, want := range []string{"refused: you denied it", "CIbox", "restart the browser", "tether browser --headless"} {
		if !strings.Contains(list, want) {
			t.Fatalf("tether profiles lacks %q:\n%s", want, list)
		}
	}

	// The headless way back: restart the browser in the same profile folder.
	b.Stop(t)
	from = d.Log.Len()
	StartBrowser(t, d, BrowserOptions{Label: "CIbox", UserDataDir: b.UserDataDir, WaitFor: "new browser profile waiting for approval"})
	if _, _, err := d.Log.WaitFor(from, 10*time.Second, "new browser profile waiting for approval", "code="+code); err != nil {
		t.Fatalf("the restarted browser does not ask with its code %s: %v", code, err)
	}
	if list := tetherCLI(t, d, "profiles"); strings.Contains(list, "refused") || !strings.Contains(list, code) {
		t.Fatalf("after the restart, tether profiles should list it waiting, not refused:\n%s", list)
	}
	if out := tetherCLI(t, d, "profiles", "approve", code); !strings.Contains(out, `approved "CIbox": its slug is "cibox"`) {
		t.Fatalf("approve after the restart: %s", out)
	}
	if _, _, err := d.Log.WaitFor(from, 10*time.Second, "browser profile approved", "code="+code, "slug=cibox"); err != nil {
		t.Fatal(err)
	}
	if list := tetherCLI(t, d, "profiles"); !regexp.MustCompile(`(?m)^cibox\s+CIbox\s+connected`).MatchString(list) {
		t.Fatalf("after approval, tether profiles does not list it connected:\n%s", list)
	}
}

// TestUnauthorizedBrowserWithoutPopup: a paired headless browser that lost
// its secret (its extension data cleared, the profile id kept) is refused
// as unauthorized and stops asking. `tether profiles` says so, with the
// next step: forget the profile, then restart the browser, which then asks
// to pair anew and is approved by its code.
func TestUnauthorizedBrowserWithoutPopup(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t))
	b := startPaired(t, d, "CIbox")
	sw := ExtensionWorker(t, b.DevTools(t))
	if _, err := chromedp.Run(sw, chromedp.Evaluate[bool](`chrome.storage.local.remove('secret').then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("clear the secret: %v", err)
	}
	b.Stop(t)
	from := d.Log.Len()
	b2 := StartBrowser(t, d, BrowserOptions{Label: "CIbox", UserDataDir: b.UserDataDir, WaitFor: "extension hello refused"})
	if _, _, err := d.Log.WaitFor(from, 10*time.Second, "extension hello refused", "code=unauthorized"); err != nil {
		t.Fatal(err)
	}
	if line, _, err := d.Log.WaitFor(d.Log.Len(), 6*time.Second, "extension hello"); err == nil {
		t.Fatalf("the refused browser asked again by itself: %s", line)
	}
	list := tetherCLI(t, d, "profiles")
	t.Logf("tether profiles:\n%s", list)
	for _, want := range []string{"refused: no proof of its secret", `it claimed to be the paired profile "cibox"`, "tether profiles forget cibox", "tether browser --headless"} {
		if !strings.Contains(list, want) {
			t.Fatalf("tether profiles lacks %q:\n%s", want, list)
		}
	}
	out := tetherCLI(t, d, "profiles", "forget", "cibox")
	t.Logf("tether profiles forget cibox:\n%s", out)
	if !strings.Contains(out, "asks to pair again as soon as it reconnects") {
		t.Fatalf("forget of a browser away: %s", out)
	}
	if list := tetherCLI(t, d, "profiles"); !strings.Contains(list, "forgotten since") {
		t.Fatalf("after forget, the refused entry's next step should say the profile is forgotten:\n%s", list)
	}
	// The way back without a popup: restart it; it asks to pair anew.
	b2.Stop(t)
	from = d.Log.Len()
	StartBrowser(t, d, BrowserOptions{Label: "CIbox", UserDataDir: b.UserDataDir, WaitFor: "new browser profile waiting for approval"})
	line, _, err := d.Log.WaitFor(from, 10*time.Second, "new browser profile waiting for approval", "label=CIbox")
	if err != nil {
		t.Fatal(err)
	}
	code := logCode(t, line)
	if out := tetherCLI(t, d, "profiles", "approve", code); !strings.Contains(out, `approved "CIbox": its slug is "cibox"`) {
		t.Fatalf("approve after the restart: %s", out)
	}
	if list := tetherCLI(t, d, "profiles"); strings.Contains(list, "refused") || !regexp.MustCompile(`(?m)^cibox\s+CIbox\s+connected`).MatchString(list) {
		t.Fatalf("after approval, tether profiles should list it connected and nothing refused:\n%s", list)
	}
}

// TestForgetUnderAutoApprove: with --auto-approve-profiles, a forgotten
// running browser is paired again at once; `tether profiles forget` says so
// (and why) instead of speaking of a pairing code that never comes.
func TestForgetUnderAutoApprove(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	StartBrowser(t, d, BrowserOptions{Label: "CIbox"})
	from := d.Log.Len()
	out := tetherCLI(t, d, "profiles", "forget", "cibox")
	t.Logf("tether profiles forget cibox:\n%s", out)
	if !strings.Contains(out, "paired again at once") || !strings.Contains(out, "--auto-approve-profiles") || strings.Contains(out, "CODE") {
		t.Fatalf("forget under --auto-approve-profiles does not say the browser was paired again at once:\n%s", out)
	}
	if _, _, err := d.Log.WaitFor(from, 10*time.Second, "extension connected", "label=CIbox"); err != nil {
		t.Fatal(err)
	}
	if list := tetherCLI(t, d, "profiles"); !strings.Contains(list, "CIbox") || !strings.Contains(list, "connected") {
		t.Fatalf("tether profiles after forget under --auto-approve-profiles:\n%s", list)
	}
}
