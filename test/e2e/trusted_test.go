package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tether-browser/tether/broker"
)

// Trusted input (issue 14): CSS :hover cannot be set from script, so
// without trusted input a control hidden until hover is listed as
// "[hidden until hover]"; once trusted input is on in settings.json and the
// user turns it on in the popup (which asks Chrome for the debugger
// permission), browser_hover with trusted moves Chrome's own mouse and the
// control is revealed.
func TestTrustedHover(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	// Trusted input takes both halves: the daemon's setting and the popup's.
	dir := filepath.Join(t.TempDir(), "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"trustedInput": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := StartDaemonAt(t, Binary(t), dir, 0, "--auto-approve-profiles")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(fixtures.Close)
	b := StartBrowser(t, d)
	ctx := Context(t, 3*time.Minute)
	c := stdioClient(t, ctx, d)
	mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": fixtures.URL + "/surfaces.html"})
	snap := mustCall(t, ctx, c, "browser_snapshot", nil)
	hidden := regexp.MustCompile(`Notes\.txt\n\s*- button "More options" \[hidden until hover\] \[ref=([^\]]+)\][^\n]*\n\s*- button "Share" \[hidden until hover\] \[ref=([^\]]+)\]`).FindStringSubmatch(snap)
	if hidden == nil {
		t.Fatalf("the Notes.txt row's controls are not listed as hidden until hover:\n%s", snap)
	}
	share := hidden[2]

	out, isErr := call(t, ctx, c, "browser_hover", map[string]any{"ref": share, "trusted": true})
	if !isErr || !strings.Contains(out, `"Trusted input" checkbox in the Tether popup`) {
		t.Fatalf("trusted hover before the user turned trusted input on: error=%v\n%s", isErr, out)
	}

	// The user turns trusted input on in the popup's Settings. The click is
	// the element's own (as clickPopupSwitch's): a click at coordinates can
	// miss while the tab list above it is still being drawn.
	popup := OpenTab(t, b.DevTools(t), "chrome-extension://"+broker.DefaultExtensionID+"/popup.html")
	turnOn := `(() => { document.getElementById('settings').open = true; const box = document.getElementById('trusted-input'); if (!box.checked) box.click(); return box.checked; })()`
	if on, err := chromedp.Run(popup, chromedp.Evaluate[bool](turnOn)); err != nil || !on {
		t.Fatalf("click the trusted input checkbox: %v (checked %v)", err, on)
	}
	granted := `new Promise((resolve, reject) => {
	  const until = Date.now() + 10000;
	  const poll = async () => {
	    const ok = await chrome.permissions.contains({permissions: ['debugger']});
	    const v = (await chrome.storage.local.get('trustedInput')).trustedInput;
	    if (ok && v === true) return resolve(true);
	    if (Date.now() > until) return reject(new Error('permission ' + ok + ', setting ' + v + ', error: ' + document.getElementById('trusted-error').textContent));
	    setTimeout(poll, 50);
	  };
	  poll();
	})`
	if _, err := chromedp.Run(popup, chromedp.Evaluate[bool](granted, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("trusted input did not turn on: %v", err)
	}

	// The result (the whole page, or what changed) shows the Notes.txt
	// row's two controls without their mark.
	out = mustCall(t, ctx, c, "browser_hover", map[string]any{"ref": share, "trusted": true})
	more := hidden[1]
	for _, want := range []string{
		`- button "More options" [ref=` + more + `]`,
		`- button "Share" [ref=` + share + `]`,
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("after a trusted hover the Notes.txt row's controls are not revealed (no %q):\n%s", want, out)
		}
	}
	if snap := mustCall(t, ctx, c, "browser_snapshot", nil); !regexp.MustCompile(`Report\.pdf\n\s*- button "More options" \[hidden until hover\]`).MatchString(snap) {
		t.Errorf("the row under no mouse lost its [hidden until hover] mark:\n%s", snap)
	}
	if out := mustCall(t, ctx, c, "browser_click", map[string]any{"ref": more, "trusted": true}); !strings.Contains(out, "more: Notes.txt") {
		t.Fatalf("trusted click on the revealed control:\n%s", out)
	}
}
