//go:build !windows

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
)

// forgedHello opens the extension socket as any local process can (the
// Origin header is just a header), reads the challenge and says hello
// with id; it returns the socket and the first frame's type and bytes
// after the challenge.
func forgedHello(t *testing.T, d *Daemon, id, label string) (*websocket.Conn, protocol.FrameType, []byte) {
	t.Helper()
	url := fmt.Sprintf("ws://127.0.0.1:%d/extension", d.Record.Port)
	s, _, err := exthandshake.Open(nil, url, http.Header{"Origin": {"chrome-extension://" + broker.DefaultExtensionID}}, "")
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws := s.WS
	t.Cleanup(func() { ws.Close() })
	if err := ws.WriteJSON(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: id, Label: label,
		ExtVersion: "0.2.0", Tabs: []protocol.TabInfo{}}); err != nil {
		t.Fatal(err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, data, err := ws.ReadMessage()
	if err != nil {
		t.Fatalf("forged hello %q: %v", id, err)
	}
	var env protocol.Envelope
	_ = json.Unmarshal(data, &env)
	return ws, env.Type, data
}

func randomID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// TestPairingResistsForgery: issue 12's attacks on pairing, against real
// Chromium. Forged hellos with random ids (more than the waiting list
// holds) do not keep a genuine new profile out; while it waits, a forger
// claiming the 8-character id prefix Tether displays is refused, that
// prefix approves nobody, and the code the browser's popup shows approves
// the browser.
func TestPairingResistsForgery(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t))
	for i := range broker.MaxPendingPairings + 4 {
		if _, typ, data := forgedHello(t, d, randomID(), "Work"); typ != protocol.TypePairing {
			t.Fatalf("forged hello %d: %s", i, data)
		}
	}

	from := d.Log.Len()
	b := StartBrowser(t, d, BrowserOptions{Label: "Work", WaitFor: "-"})
	// The user reads the code in the browser's popup; the daemon logged the
	// same code for a "Work" waiting for approval (forged "Work"s have others).
	code := popupCode(t, b.DevTools(t))
	line, _, err := d.Log.WaitFor(from, 30*time.Second, "new browser profile waiting for approval", "label=Work", "code="+code)
	if err != nil {
		t.Fatal(err)
	}
	prefix := regexp.MustCompile(`profile=([0-9a-f]{8})`).FindStringSubmatch(line)
	if prefix == nil {
		t.Fatalf("no id prefix in %q", line)
	}

	// The hijack: a hello whose id is the displayed prefix is refused.
	if _, typ, data := forgedHello(t, d, prefix[1], "Work"); typ != protocol.TypeRefused || !strings.Contains(string(data), "collides") {
		t.Fatalf("hello with the displayed prefix %s: %s", prefix[1], data)
	}
	// The listing shows every waiting "Work" with its own code; the real one's is there.
	list := tetherCLI(t, d, "profiles")
	if n := strings.Count(list, "waiting for approval"); n != broker.MaxPendingPairings {
		t.Fatalf("%d waiting, want %d (the oldest forged ones let go):\n%s", n, broker.MaxPendingPairings, list)
	}
	if !strings.Contains(list, code) {
		t.Fatalf("tether profiles lacks the browser's code %s:\n%s", code, list)
	}
	// The prefix approves nobody, and says why.
	cmd := exec.Command(d.Bin, "profiles", "approve", prefix[1])
	cmd.Env = d.Env()
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "code") {
		t.Fatalf("approve by id prefix: %v\n%s", err, out)
	}
	if out := tetherCLI(t, d, "profiles", "approve", strings.ToLower(code)); !strings.Contains(out, `approved "Work"`) {
		t.Fatalf("approve by code: %s", out)
	}
	if _, _, err := d.Log.WaitFor(from, 10*time.Second, "browser profile approved", "code="+code, "profile="+prefix[1]); err != nil {
		t.Fatal(err)
	}
	ctx := Context(t, 2*time.Minute)
	c := stdioClient(t, ctx, d)
	// The call reaches the browser (it has no shared tab yet, and says so).
	if out := mustCall(t, ctx, c, "browser_tabs", map[string]any{"profile": "work"}); !strings.Contains(out, "No tab is shared in this profile") {
		t.Fatalf("browser_tabs on the approved browser: %s", out)
	}
}

// TestPairedBrowserConnectsWhileSilentSocketsChurn: issue 12's lock-out.
// Extension-Origin sockets that never say hello, each reopened as soon as
// the daemon closes it, churn: more of them than MaxAwaitingHello (a bare
// 50 would no longer reach the bound), so the daemon keeps closing the
// oldest. Meanwhile the paired Chromium reconnects, three times (the
// popup's Reconnect), and each time connects and serves calls.
func TestPairedBrowserConnectsWhileSilentSocketsChurn(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t))
	b := startPaired(t, d, "Work")
	popup := OpenTab(t, b.DevTools(t), "chrome-extension://"+broker.DefaultExtensionID+"/popup.html")

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var opened atomic.Int64
	const churners = broker.MaxAwaitingHello + 36
	url := fmt.Sprintf("ws://127.0.0.1:%d/extension", d.Record.Port)
	for range churners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				ws, _, err := websocket.DefaultDialer.DialContext(ctx, url, http.Header{"Origin": {"chrome-extension://" + broker.DefaultExtensionID}})
				if err != nil {
					continue
				}
				opened.Add(1)
				_, _, _ = ws.ReadMessage() // silent until the daemon closes it
				ws.Close()
			}
		}()
	}
	stop := func() { cancel(); wg.Wait() }
	defer stop()
	// The churn is under way once sockets were closed to make room.
	for opened.Load() < 3*churners {
		time.Sleep(10 * time.Millisecond)
	}
	for i := range 3 {
		from := d.Log.Len()
		if _, err := chromedp.Run(popup, chromedp.Evaluate[bool](
			`chrome.runtime.sendMessage({target: 'background', kind: 'popup-reconnect'})`, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatalf("reconnect %d: %v", i, err)
		}
		// named_proof: the extension named its paired profile in a
		// subprotocol with a proof of its key that the daemon checked
		// (the same HMAC computed by WebCrypto and by Go), so the daemon
		// never counted it among the silent sockets.
		if _, _, err := d.Log.WaitFor(from, 60*time.Second, "extension connected", "slug=work", "named_proof=true"); err != nil {
			t.Fatalf("reconnect %d: the paired browser did not connect during the churn (%d silent sockets so far): %v", i, opened.Load(), err)
		}
	}
	callCtx := Context(t, 2*time.Minute)
	c := stdioClient(t, callCtx, d)
	if out := mustCall(t, callCtx, c, "browser_tabs", nil); !strings.Contains(out, "Work") {
		t.Fatalf("browser_tabs during the churn: %s", out)
	}
	t.Logf("%d silent sockets opened during the test", opened.Load())
}

// TestPairingUnderHelloFlood: the security tester's lockout, against real
// Chromium. A local program sends forged hellos with random ids, 20 a
// second, each socket kept open until the daemon lets it go (about 40 open
// at a time), so the real browser's entry is pushed out of the waiting list
// within a second of each of its hellos. The browser keeps one code
// throughout (the popup's code is the one the daemon gives back after a
// push), and approving that code pairs it within seconds, flood or not.
func TestPairingUnderHelloFlood(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t))
	url := fmt.Sprintf("ws://127.0.0.1:%d/extension", d.Record.Port)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var sent, displaced atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s, _, err := exthandshake.Open(nil, url, http.Header{"Origin": {"chrome-extension://" + broker.DefaultExtensionID}}, "")
				if err != nil {
					return
				}
				ws := s.WS
				defer ws.Close()
				go func() { <-ctx.Done(); ws.Close() }()
				if ws.WriteJSON(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: randomID(),
					Label: "Flood", ExtVersion: "0.2.0", Tabs: []protocol.TabInfo{}}) != nil {
					return
				}
				sent.Add(1)
				for {
					_, data, err := ws.ReadMessage()
					if err != nil {
						return
					}
					if strings.Contains(string(data), string(protocol.CodePairingDisplaced)) {
						displaced.Add(1)
					}
				}
			}()
		}
	}()
	defer func() { cancel(); wg.Wait() }()
	// The flood is under way once forged entries are pushed out.
	if _, _, err := d.Log.WaitFor(0, 30*time.Second, "pushed out to make room"); err != nil {
		t.Fatal(err)
	}

	from := d.Log.Len()
	b := StartBrowser(t, d, BrowserOptions{Label: "Work", WaitFor: "-"})
	line, _, err := d.Log.WaitFor(from, 30*time.Second, "new browser profile waiting for approval", "label=Work")
	if err != nil {
		t.Fatal(err)
	}
	code := logCode(t, line)
	prefix := regexp.MustCompile(`profile=([0-9a-f]{8})`).FindStringSubmatch(line)
	if prefix == nil {
		t.Fatalf("no id prefix in %q", line)
	}
	// Pushed out by the flood, it asks again within seconds and gets the
	// same code back, twice.
	at := from
	for round := range 2 {
		_, i, err := d.Log.WaitFor(at, 30*time.Second, "pushed out to make room", "profile="+prefix[1])
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		line, i, err = d.Log.WaitFor(i+1, 30*time.Second, "new browser profile waiting for approval", "profile="+prefix[1])
		if err != nil {
			t.Fatalf("round %d: the browser did not ask again within 30 s of being pushed out: %v", round, err)
		}
		if got := logCode(t, line); got != code {
			t.Fatalf("round %d: code %s after the push, was %s", round, got, code)
		}
		at = i + 1
	}
	// The user reads the code in the popup, which kept showing it, and
	// approves it just after the flood pushed the browser out again (the
	// approval waits for its next hello).
	if shown := popupCode(t, b.DevTools(t)); shown != code {
		t.Fatalf("the popup shows %s, the daemon gave %s", shown, code)
	}
	if _, _, err := d.Log.WaitFor(d.Log.Len(), 30*time.Second, "pushed out to make room", "profile="+prefix[1]); err != nil {
		t.Fatal(err)
	}
	approvedAt := d.Log.Len()
	out := tetherCLI(t, d, "profiles", "approve", code)
	if !strings.Contains(out, `approved "Work"`) {
		t.Fatalf("approve by code: %s", out)
	}
	// Paired at its next hello ("approved earlier paired on reconnect"), or
	// at once if it was back in the list already ("browser profile approved").
	if _, _, err := d.Log.WaitFor(approvedAt, 30*time.Second, "approved", "profile="+prefix[1], "slug=work"); err != nil {
		t.Fatalf("approved (%s) but not paired within 30 s: %v", strings.TrimSpace(out), err)
	}
	callCtx := Context(t, 2*time.Minute)
	c := stdioClient(t, callCtx, d)
	if out := mustCall(t, callCtx, c, "browser_tabs", map[string]any{"profile": "work"}); !strings.Contains(out, "No tab is shared in this profile") {
		t.Fatalf("browser_tabs on the approved browser: %s", out)
	}
	t.Logf("approve said %q; %d forged hellos, %d of them pushed out", strings.TrimSpace(out), sent.Load(), displaced.Load())
}
