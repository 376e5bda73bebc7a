//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/test/mcpclient"
)

// The popup at the size Chrome gives it (at most 800×600; ours is 380 wide).
const popupWidth, popupHeight = 380, 600

// TestPopup opens the extension's popup page as a tab, at popup size, in
// real Chromium: in each connection state (connected, with a tab an AI app
// owns and acts on; connecting; waiting for pairing; refused; Tether not
// running) axe-core finds no violation, light and dark, and a screenshot is
// taken. TETHER_POPUP_SCREENSHOT=path.png (make screenshot) writes the
// connected one for the README; TETHER_POPUP_SCREENSHOTS=dir writes all.
func TestPopup(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow", "--enable-tools=browser_evaluate")
	// The fixtures, and a page with a favicon (a data: image, as sites inline them).
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir("testdata")))
	mux.HandleFunc("/notes", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<!doctype html><html><head><meta charset="utf-8"><title>Release notes — version 2.4</title>`+
			`<link rel="icon" href="data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%232563eb'/%3E%3Cpath d='M4 5h8M4 8h8M4 11h5' stroke='white' stroke-width='1.6'/%3E%3C/svg%3E">`+
			`</head><body><h1>Release notes</h1></body></html>`)
	})
	fixtures := httptest.NewServer(mux)
	defer fixtures.Close()
	b := StartBrowser(t, d, BrowserOptions{Label: "Work"})
	alloc := b.DevTools(t)
	ctx := Context(t, 3*time.Minute)

	// A tab the user shares by hand, and one an AI app opened (it owns it).
	OpenTab(t, alloc, fixtures.URL+"/share.html")
	clickPopupSwitch(t, alloc, "Shared by hand")
	OpenTab(t, alloc, fixtures.URL+"/notes")
	clickPopupSwitch(t, alloc, "Release notes")
	agent := namedStdioClient(t, ctx, d, "claude-code")
	mustCall(t, ctx, agent, "browser_navigate", map[string]any{"url": fixtures.URL + "/tools.html"})

	popup := OpenTab(t, alloc, "chrome-extension://"+broker.DefaultExtensionID+"/popup.html")
	if err := chromedp.Do(popup, chromedp.EmulateViewport(popupWidth, popupHeight)); err != nil {
		t.Fatal(err)
	}
	axeSource, err := os.ReadFile(filepath.Join(moduleRoot(t), "extension", "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("axe-core (a dev dependency of the extension; npm ci in extension/): %v", err)
	}
	if _, err := chromedp.Run(popup, chromedp.Evaluate[bool](string(axeSource)+";true")); err != nil {
		t.Fatalf("load axe-core into the popup: %v", err)
	}

	shots := map[string][]byte{}
	check := func(state, wantText string) {
		t.Helper()
		waitPopupText(t, popup, wantText)
		for _, scheme := range []string{"light", "dark"} {
			if _, err := chromedp.Call(popup, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}}); err != nil {
				t.Fatal(err)
			}
			time.Sleep(300 * time.Millisecond) // the colours' transitions end
			for _, open := range []bool{false, true} {
				if v := axeViolations(t, popup, open); v != "" {
					t.Errorf("%s (%s, settings open %v): axe-core violations:\n%s", state, scheme, open, v)
				}
			}
			if _, err := chromedp.Run(popup, chromedp.Evaluate[bool](`document.getElementById('settings').open = false; true`)); err != nil {
				t.Fatal(err)
			}
			shot, err := chromedp.Run(popup, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			shots[state+"-"+scheme] = shot
		}
	}

	// Connected, while the AI app acts on its tab (a 4-second evaluate).
	acting := make(chan error, 1)
	go func() {
		_, isErr, err := mcpclient.Call(ctx, agent, "browser_evaluate", map[string]any{"expression": "new Promise((r) => setTimeout(() => r(1), 4000))"}, nil)
		if err == nil && isErr {
			err = fmt.Errorf("browser_evaluate failed")
		}
		acting <- err
	}()
	waitPopupText(t, popup, "AI acting")
	check("connected", "Connected to Tether")
	if n, err := chromedp.Run(popup, chromedp.Evaluate[int](`document.querySelectorAll('#tabs img.favicon[src^="data:image/svg"]').length`)); err != nil || n != 1 {
		t.Errorf("the favicon of the page that has one: %d images (%v)", n, err)
	}
	if w, err := chromedp.Run(popup, chromedp.Evaluate[[]int](`[document.documentElement.scrollWidth, document.documentElement.scrollHeight]`)); err != nil || w[0] > popupWidth || w[1] > popupHeight {
		t.Errorf("the popup is %v, over %d×%d (%v)", w, popupWidth, popupHeight, err)
	}
	got := popupText(t, popup)
	for _, want := range []string{"Work", "Tether ", "This window", "Shared by hand", "Release notes", "Tool bench", "claude-code", "Take back", "Tab 1", "Tab 2", "Tab 3"} {
		if !strings.Contains(got, want) {
			t.Errorf("the connected popup does not say %q:\n%s", want, got)
		}
	}
	if err := <-acting; err != nil {
		t.Fatalf("the acting call: %v", err)
	}

	// The states the connection passes through, as the offscreen document
	// stores them (it writes chrome.storage.session "status"; the popup
	// renders what is stored).
	setStatus := func(status string) {
		t.Helper()
		if _, err := chromedp.Run(popup, chromedp.Evaluate[bool](`chrome.storage.session.set({status: `+status+`}).then(() => true)`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UnixMilli()
	setStatus(fmt.Sprintf(`{state: 'connecting', port: %d, since: %d}`, d.Record.Port, now))
	check("connecting", "Connecting to Tether")
	setStatus(fmt.Sprintf(`{state: 'pairing', port: %d, since: %d, pairing: 'Approve this browser in Tether.', pairingCode: 'K7M4PX'}`, d.Record.Port, now))
	check("pairing", "K7M4PX")
	setStatus(fmt.Sprintf(`{state: 'disconnected', port: %d, since: %d, halted: true, lastRefusal: {code: 'pairing_denied', message: 'You denied this browser in Tether.', at: %d}}`, d.Record.Port, now, now))
	check("refused", "You denied this browser in Tether.")

	// Tether stops: the popup says how to start it.
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	check("not-running", "Start Tether from your applications menu")

	if dir := os.Getenv("TETHER_POPUP_SCREENSHOTS"); dir != "" {
		for name, shot := range shots {
			if err := os.WriteFile(filepath.Join(dir, "popup-"+name+".png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if out := os.Getenv("TETHER_POPUP_SCREENSHOT"); out != "" {
		if err := os.WriteFile(out, shots["connected-light"], 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", out)
	}
}

// popupText is the popup page's visible text.
func popupText(t *testing.T, popup context.Context) string {
	t.Helper()
	text, err := chromedp.Run(popup, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// waitPopupText waits until the popup page's visible text contains want.
func waitPopupText(t *testing.T, popup context.Context, want string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		text := popupText(t, popup)
		if strings.Contains(text, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the popup never said %q:\n%s", want, text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// axeViolations runs axe-core (loaded into the page) on the popup, with its
// settings folded or open, and returns its violations, one a line ("" for none).
func axeViolations(t *testing.T, popup context.Context, settingsOpen bool) string {
	t.Helper()
	js := fmt.Sprintf(`(async () => {
	  document.getElementById('settings').open = %v;
	  await new Promise((r) => setTimeout(r, 300)); // the colours' transitions end
	  const r = await axe.run(document, {resultTypes: ['violations']});
	  return JSON.stringify(r.violations.map((v) => ({id: v.id, nodes: v.nodes.map((n) => n.target.join(' ') + ' ' + n.failureSummary)})));
	})()`, settingsOpen)
	out, err := chromedp.Run(popup, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe-core: %v", err)
	}
	var vs []struct {
		ID    string   `json:"id"`
		Nodes []string `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, v := range vs {
		lines = append(lines, v.ID+": "+strings.Join(v.Nodes, "; "))
	}
	return strings.Join(lines, "\n")
}
