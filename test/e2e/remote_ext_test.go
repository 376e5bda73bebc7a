//go:build !windows

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/test/mcpclient"
)

// popupPage is the extension's popup, opened as a tab.
const popupPage = "chrome-extension://" + broker.DefaultExtensionID + "/popup.html"

// useBroker types url into the popup's Remote broker field and presses Use,
// as a user does ("" clears it: the local daemon).
func useBroker(t *testing.T, popup context.Context, url string) {
	t.Helper()
	js := fmt.Sprintf(`(() => {
	  document.getElementById('settings').open = true;
	  const input = document.getElementById('broker');
	  input.focus();
	  input.value = %q;
	  input.dispatchEvent(new Event('input', {bubbles: true}));
	  document.getElementById('broker-save').click();
	  return true;
	})()`, url)
	if _, err := chromedp.Run(popup, chromedp.Evaluate[bool](js)); err != nil {
		t.Fatalf("popup broker field: %v", err)
	}
}

// waitPopupID waits until the popup element id is shown with text containing want.
func waitPopupID(t *testing.T, popup context.Context, id, want string) string {
	t.Helper()
	js := fmt.Sprintf(`new Promise((resolve, reject) => {
	  const get = () => { const e = document.getElementById(%q); return e && !e.hidden && e.textContent.includes(%q) ? e.textContent : ''; };
	  if (get()) { resolve(get()); return; }
	  const mo = new MutationObserver(() => { if (get()) { mo.disconnect(); resolve(get()); } });
	  mo.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
	  setTimeout(() => reject(new Error('#' + %q + ' never said ' + %q + ': ' + document.body.innerText)), 30000);
	})`, id, want, id, want)
	text, err := chromedp.Run(popup, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("popup: %v", err)
	}
	return text
}

// addToken runs the server's `tether token add name` and returns the token
// it prints once (the last field of its standard output).
func addToken(t *testing.T, d *Daemon, name string) string {
	t.Helper()
	cmd := exec.Command(d.Bin, "token", "add", name)
	cmd.Env = d.Env()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("tether token add %s: %v\n%s%s", name, err, out, stderr)
	}
	fields := strings.Fields(string(out))
	if len(fields) == 0 {
		t.Fatalf("tether token add %s printed no token", name)
	}
	return fields[len(fields)-1]
}

// remoteMCPClient is a real MCP client (mcp-go, streamable HTTP) for
// https://tether.test:PORT/mcp through c with a named token, trusting
// Caddy's root alone.
func remoteMCPClient(t *testing.T, ctx context.Context, c *Caddy, token, app string) *client.Client {
	t.Helper()
	mc, err := client.NewStreamableHttpClient(c.URL("/mcp"),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}),
		transport.WithHTTPBasicClient(c.HTTPClient()))
	if err != nil {
		t.Fatal(err)
	}
	if err := mc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mc.Close() })
	initClientAs(t, ctx, mc, app)
	return mc
}

// countingListener accepts TCP connections on 127.0.0.1 and counts them:
// the proof that nothing dialled its port.
func countingListener(t *testing.T) (port int, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	accepted = new(atomic.Int64)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conn.Close()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, accepted
}

// TestRemoteExtension: issue 19's loop in real Chromium. A Chromium whose
// extension is paired with the Tether on its own computer switches, in its
// popup, to a remote broker: `tether serve` in remote mode behind real
// Caddy (`tls internal`) at wss://tether.test:PORT/extension, Caddy's root
// imported into the NSS database of Chromium's HOME (no certificate flag).
// The popup shows a code, the server's `tether profiles approve CODE`
// pairs it, and the popup names the broker and the slug there. A real MCP
// client with a named token navigates, snapshots, types and clicks through
// https://tether.test:PORT/mcp. Caddy dies while a call of a local client
// (whose own link does not cross Caddy) is in flight: the call fails at
// once and is not replayed; Caddy comes back on its port and the extension
// reconnects by itself, and the remote client carries on. Then the popup
// refuses ws:// to a non-loopback host (nothing is dialled, also when the
// URL is put in storage behind the popup's back), and a broker whose
// certificate Chromium does not trust gets the clear message. Last, back
// to the local Tether and again to the broker: each pairing was kept.
func TestRemoteExtension(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	RequireCaddy(t)
	d, c := startRemote(t, `{"hosts": ["`+RemoteHost+`"]}`, "--unattended=allow", "--enable-tools=browser_evaluate")
	home := t.TempDir()
	c.ImportRoot(t, home)
	local := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	b := StartBrowser(t, local, BrowserOptions{Label: "Work", Env: []string{"HOME=" + home}, HostResolverRules: RemoteHostResolverRules})
	alloc := b.DevTools(t)
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	ctx := Context(t, 4*time.Minute)

	popup := OpenTab(t, alloc, popupPage)
	waitPopupID(t, popup, "state", "Connected to Tether")
	waitPopupID(t, popup, "broker-name", "this computer")

	// The switch, and pairing by code with the server's CLI.
	brokerHost := RemoteHost + ":" + strconv.Itoa(c.Port)
	from := d.Log.Len()
	useBroker(t, popup, c.WSURL("/extension"))
	code := waitPopupID(t, popup, "pairing-code", "")
	if _, _, err := d.Log.WaitFor(from, 30*time.Second, "new browser profile waiting for approval", "label=Work", "code="+code); err != nil {
		t.Fatalf("the broker did not log the popup's code %s: %v", code, err)
	}
	waitPopupID(t, popup, "next-step", "tether profiles approve "+code)
	waitPopupID(t, popup, "broker-name", brokerHost)
	if out := tetherCLI(t, d, "profiles", "approve", code); !strings.Contains(out, `approved "Work"`) {
		t.Fatalf("tether profiles approve %s: %s", code, out)
	}
	if _, _, err := d.Log.WaitFor(from, 30*time.Second, "browser profile approved", "code="+code, "slug=work"); err != nil {
		t.Fatal(err)
	}
	waitPopupID(t, popup, "state", "Connected to "+brokerHost)
	waitPopupID(t, popup, "slug", "work")

	// A real MCP client on another machine, with a named token, through
	// https://tether.test:PORT/mcp: navigate, snapshot, type, click.
	token := addToken(t, d, "e2e-agent")
	agent := remoteMCPClient(t, ctx, c, token, "remote-agent")
	greeterFlow(t, ctx, agent, fixtures.URL+"/form.html")

	// Link fault: a call in flight when Caddy dies. It runs for a local
	// client of the same server (its link does not cross Caddy), in its
	// own tab, and counts its runs in the page.
	lc := httpClient(t, ctx, d, d.Token)
	mustCall(t, ctx, lc, "browser_navigate", map[string]any{"url": fixtures.URL + "/page2.html"})
	type result struct {
		text  string
		isErr bool
		err   error
		at    time.Time
	}
	done := make(chan result, 1)
	go func() {
		text, isErr, err := mcpclient.Call(ctx, lc, "browser_evaluate", map[string]any{
			"expression": "document.documentElement.dataset.runs = String(Number(document.documentElement.dataset.runs || 0) + 1); new Promise((r) => setTimeout(() => r('finished'), 60000))"}, nil)
		done <- result{text, isErr, err, time.Now()}
	}()
	waitPopupText(t, popup, "AI acting")
	// The page has run the call (read over CDP, not through Tether) before
	// the link dies: only then does a count of 1 afterwards prove that it
	// was not sent again.
	page, _ := PageTab(t, alloc, "/page2.html")
	pageRuns := func() string {
		v, err := chromedp.Run(page, chromedp.Evaluate[string](`document.documentElement.dataset.runs || "0"`))
		if err != nil {
			t.Fatalf("read the page's run count over CDP: %v", err)
		}
		return v
	}
	if _, err := chromedp.Run(page, chromedp.Poll[bool](`document.documentElement.dataset.runs === "1"`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the call in flight did not run in the page: %v (runs %s)", err, pageRuns())
	}
	from = d.Log.Len()
	killed := time.Now()
	c.Stop()
	var res result
	select {
	case res = <-done:
	case <-time.After(50 * time.Second):
		t.Fatal("the call in flight when the link died did not fail (it waited for its own timeout)")
	}
	if res.err != nil || !res.isErr || strings.Contains(res.text, "finished") || !strings.Contains(res.text, "disconnected") || !strings.Contains(res.text, "does not send it again") {
		t.Fatalf("the call in flight when Caddy died: err=%v isError=%v %s; want a tool error saying the extension disconnected and the call is not sent again", res.err, res.isErr, res.text)
	}
	t.Logf("the call in flight failed %s after Caddy was killed: %s", res.at.Sub(killed).Round(time.Millisecond), res.text)
	if _, _, err := d.Log.WaitFor(from, 30*time.Second, "extension disconnected", "slug=work"); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	c.Restart(t)
	if _, _, err := d.Log.WaitFor(from, 60*time.Second, "extension connected", "slug=work"); err != nil {
		t.Fatalf("the extension did not reconnect after Caddy came back: %v", err)
	}
	t.Logf("the extension reconnected %s after Caddy was started again", time.Since(restarted).Round(time.Millisecond))
	// A call through the reconnected link first, so that a replay, had
	// there been one, would have reached the page by now.
	mustCall(t, ctx, lc, "browser_snapshot", nil)
	if runs := pageRuns(); runs != "1" {
		t.Fatalf("the page counted %s runs of the call cut by the link fault; want 1 (never replayed)", runs)
	}
	// The remote client's session carries on through the new Caddy.
	if out := mustCall(t, ctx, agent, "browser_snapshot", nil); !strings.Contains(out, "Hello, Ada Lovelace!") {
		t.Fatalf("snapshot through the restarted Caddy:\n%s", out)
	}

	// ws:// to a host that is not this computer: refused in the popup, nothing dialled.
	plainPort, dialled := countingListener(t)
	plain := fmt.Sprintf("ws://%s:%d/extension", RemoteHost, plainPort)
	useBroker(t, popup, plain)
	waitPopupID(t, popup, "broker-error", "Refused: ws:// is not encrypted")
	waitPopupID(t, popup, "state", "Connected to "+brokerHost)
	// Put in storage behind the popup's back, the offscreen document refuses it too.
	from = d.Log.Len()
	if _, err := chromedp.Run(popup, chromedp.Evaluate[bool](fmt.Sprintf(`chrome.storage.local.set({brokerUrl: %q})
	  .then(() => chrome.runtime.sendMessage({target: 'background', kind: 'popup-reconnect'})).then(() => true)`, plain), chromedp.EvalAwaitPromise)); err != nil {
		t.Fatal(err)
	}
	waitPopupID(t, popup, "refusal", "Refused: ws:// is not encrypted")
	waitPopupID(t, popup, "state", "Cannot reach ws://")

	// A broker whose certificate Chromium does not trust: another Caddy, set
	// up as the first but with its own root, not imported.
	untrusted := StartCaddy(t, d.Record.Port)
	useBroker(t, popup, untrusted.WSURL("/extension"))
	untrustedHost := RemoteHost + ":" + strconv.Itoa(untrusted.Port)
	waitPopupID(t, popup, "refusal", "Could not connect to "+untrustedHost+" securely: check the address and that its certificate is valid")
	waitPopupID(t, popup, "state", "Cannot reach "+untrustedHost)

	// Back to the Tether on this computer, then to the broker again: both pairings kept.
	fromLocal := local.Log.Len()
	if _, err := chromedp.Run(popup, chromedp.Evaluate[bool](`document.getElementById('broker-local').click(); true`)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := local.Log.WaitFor(fromLocal, 30*time.Second, "extension connected", "slug=work", "named_proof=true"); err != nil {
		t.Fatalf("back to the local Tether: %v", err)
	}
	waitPopupID(t, popup, "broker-name", "this computer")
	from = d.Log.Len()
	useBroker(t, popup, c.WSURL("/extension"))
	if _, _, err := d.Log.WaitFor(from, 30*time.Second, "extension connected", "slug=work", "named_proof=true"); err != nil {
		t.Fatalf("back to the broker: %v", err)
	}
	if line, _, err := d.Log.WaitFor(from, 0, "waiting for approval"); err == nil { // the lines so far
		t.Errorf("the broker asked for approval again (its pairing was not kept): %s", line)
	}
	if n := dialled.Load(); n != 0 {
		t.Errorf("the ws:// broker's port was dialled %d times", n)
	}
	waitPopupID(t, popup, "state", "Connected to "+brokerHost)

	// Network changes, as the offscreen document sees them (navigator.onLine
	// and its online/offline events, overridden through DevTools): the link
	// drops while offline, and the popup says so instead of counting
	// failures; back online, the extension dials at once.
	off := offscreenDocument(t, alloc)
	setOnline(t, off, false)
	from = d.Log.Len()
	c.Stop()
	waitPopupID(t, popup, "state", "Offline")
	waitPopupID(t, popup, "next-step", "as soon as it is back online")
	c.Restart(t)
	online := time.Now()
	setOnline(t, off, true)
	if _, _, err := d.Log.WaitFor(from, 30*time.Second, "extension connected", "slug=work"); err != nil {
		t.Fatalf("back online, the extension did not reconnect: %v", err)
	}
	t.Logf("back online, the extension reconnected after %s", time.Since(online).Round(time.Millisecond))
	waitPopupID(t, popup, "state", "Connected to "+brokerHost)
}

// offscreenDocument attaches to the extension's offscreen document (which
// owns the WebSocket) until the test ends.
func offscreenDocument(t *testing.T, alloc context.Context) context.Context {
	t.Helper()
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	targets, err := chromedp.Targets(bctx)
	if err != nil {
		t.Fatal(err)
	}
	want := "chrome-extension://" + broker.DefaultExtensionID + "/offscreen.html"
	for _, ti := range targets {
		if ti.URL == want {
			ctx, cancel := chromedp.NewContext(alloc, chromedp.WithTargetID(ti.TargetID), chromedp.WithDetachOnCancel())
			t.Cleanup(cancel)
			return ctx
		}
	}
	t.Fatal("the extension has no offscreen document")
	return nil
}

// setOnline overrides navigator.onLine in the target (DevTools'
// Network.overrideNetworkState, which fires the online/offline events) and
// waits until the document sees it.
func setOnline(t *testing.T, target context.Context, online bool) {
	t.Helper()
	if _, err := chromedp.Call(target, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: !online, DownloadThroughput: -1, UploadThroughput: -1}); err != nil {
		t.Fatalf("Network.overrideNetworkState: %v", err)
	}
	js := fmt.Sprintf(`new Promise((resolve) => { if (navigator.onLine === %t) resolve(true); else addEventListener(%q, () => resolve(true), {once: true}); })`, online, map[bool]string{true: "online", false: "offline"}[online])
	if _, err := chromedp.Run(target, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("navigator.onLine %v: %v", online, err)
	}
}
