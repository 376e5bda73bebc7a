package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/extension"
	"github.com/tether-browser/tether/launcher"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/protocol"
)

// squatter is another program listening on Tether's port while Tether is
// not running: it accepts the extension's socket (any local program can
// claim the extension's Origin check does not apply to it), records what
// the extension offers and sends, and tries to make it act.
type squatter struct {
	mu sync.Mutex
	// offered are the subprotocols of each socket; frames what the
	// extension sent on any of them.
	offered [][]string
	frames  []string
	srv     *http.Server
	// challenge: send a challenge with a fresh nonce and made-up proofs
	// first (a program that knows the protocol but no key); else only
	// the frames that follow.
	challenge bool
}

// startSquatter listens on 127.0.0.1:port (waiting up to 10 s for the
// daemon that had it to let it go).
func startSquatter(t *testing.T, port int, challenge bool) *squatter {
	t.Helper()
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("the squatter cannot take port %d: %v", port, err)
	}
	s := &squatter{challenge: challenge}
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }, Subprotocols: []string{protocol.Subprotocol}}
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.offered = append(s.offered, websocket.Subprotocols(r))
		s.mu.Unlock()
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		if s.challenge {
			_ = ws.WriteJSON(protocol.Challenge{Type: protocol.TypeChallenge, Protocol: protocol.Version, Nonce: protocol.NewNonce(),
				PairingProof: protocol.NewNonce(), ProfileProof: protocol.NewNonce()})
		}
		_ = ws.WriteJSON(protocol.HelloAck{Type: protocol.TypeHelloAck, DaemonVersion: "squatter", AssignedLabel: "Squatter", AssignedSlug: "squatter", Secret: strings.Repeat("5", 64)})
		_ = ws.WriteJSON(protocol.Request{Type: protocol.TypeRequest, ID: "1", Method: "tabs_list", Params: json.RawMessage(`{}`), TimeoutMs: 5000})
		_ = ws.WriteJSON(protocol.Request{Type: protocol.TypeRequest, ID: "2", Method: "tab_new", Params: json.RawMessage(`{"url":"http://127.0.0.1:9/squatted"}`), TimeoutMs: 5000})
		for {
			_, data, err := ws.ReadMessage()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.frames = append(s.frames, string(data))
			s.mu.Unlock()
		}
	})}
	go func() { _ = s.srv.Serve(ln) }()
	t.Cleanup(func() { s.stop() })
	return s
}

func (s *squatter) stop() { _ = s.srv.Close() }

// sockets is how many sockets the extension opened to the squatter.
func (s *squatter) sockets() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.offered)
}

// check fails t if the extension sent the squatter anything, or offered a
// subprotocol holding secret (when not empty).
func (s *squatter) check(t *testing.T, secret string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.frames) > 0 {
		t.Errorf("the extension sent the squatter %d frame(s), want none; the first: %.300s", len(s.frames), s.frames[0])
	}
	for _, o := range s.offered {
		for _, p := range o {
			if secret != "" && strings.Contains(p, secret) {
				t.Errorf("the extension offered its pairing secret in a subprotocol: %q", p)
			}
		}
	}
}

// extensionState is the extension's stored connection status and secret,
// read in its service worker.
type extensionState struct {
	Status struct {
		State        string `json:"state"`
		PairAgain    bool   `json:"pairAgain"`
		OtherProgram bool   `json:"otherProgram"`
		LastRefusal  *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
			// At is when, in ms since the epoch.
			At int64 `json:"at"`
		} `json:"lastRefusal"`
	} `json:"status"`
	Secret string `json:"secret"`
}

func readExtensionState(t *testing.T, sw context.Context) extensionState {
	t.Helper()
	raw, err := chromedp.Run(sw, chromedp.Evaluate[string](`Promise.all([chrome.storage.session.get('status'), chrome.storage.local.get('secret')]).then(([s, l]) => JSON.stringify({status: s.status || {}, secret: l.secret || ''}))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("read the extension's state: %v", err)
	}
	var st extensionState
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		t.Fatalf("the extension's state %q: %v", raw, err)
	}
	return st
}

// waitUnverified waits until the extension reports, after since, that the
// program on the port did not prove it is Tether.
func waitUnverified(t *testing.T, sw context.Context, s *squatter, since time.Time) extensionState {
	t.Helper()
	var st extensionState
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st = readExtensionState(t, sw)
		if s.sockets() > 0 && st.Status.LastRefusal != nil && st.Status.LastRefusal.Code == "unverified" && st.Status.LastRefusal.At >= since.UnixMilli() {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("the extension did not report the squatter as unverified (sockets %d): %+v", s.sockets(), st.Status)
		}
	}
}

// TestSquatterOnThePort: while Tether is not running, another program
// takes its port. The paired extension connects to it, learns that it is
// not the Tether it paired with (no valid proof of its key, or no
// challenge at all), and sends it nothing: not its secret, not a hello,
// not an answer to the requests it sends; it opens no tab. The popup's
// status says so. When Tether is back on the port, the extension pairs
// back without the user approving anything.
func TestSquatterOnThePort(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	b := StartBrowser(t, d)
	alloc := b.DevTools(t)
	sw := ExtensionWorker(t, alloc)
	secret := readExtensionState(t, sw).Secret
	if len(secret) != 64 {
		t.Fatalf("the paired extension holds no 64-digit secret: %q", secret)
	}
	port := d.Record.Port
	if err := d.Stop(); err != nil {
		t.Logf("daemon exit: %v", err)
	}

	for _, tc := range []struct {
		name      string
		challenge bool
		// why is in the popup's message.
		why string
	}{{"made-up proofs", true, "could not prove it holds this browser's pairing key"}, {"no challenge", false, "sent no challenge"}} {
		t.Run(tc.name, func(t *testing.T) {
			since := time.Now()
			s := startSquatter(t, port, tc.challenge)
			reconnectExtension(t, alloc)
			st := waitUnverified(t, sw, s, since)
			checkPopupOtherProgram(t, alloc, port)
			s.stop()
			s.check(t, secret)
			if msg := st.Status.LastRefusal.Message; !strings.Contains(msg, "sent it nothing") || !strings.Contains(msg, tc.why) {
				t.Errorf("the popup's message does not say nothing was sent, and why (%q): %q", tc.why, msg)
			}
			if want := "Another program, not Tether, answers on 127.0.0.1:" + strconv.Itoa(port); !strings.Contains(st.Status.LastRefusal.Message, want) || !st.Status.OtherProgram {
				t.Errorf("the popup's message does not say %q (otherProgram %v): %q", want, st.Status.OtherProgram, st.Status.LastRefusal.Message)
			}
			if st.Secret != secret {
				t.Errorf("the extension's stored secret changed after the squatter's hello_ack: %q", st.Secret)
			}
		})
	}
	if _, _, err := findPage(alloc, "squatted"); err == nil {
		t.Error("the extension opened the tab the squatter asked for")
	}

	// A program that speaks HTTP but not Tether's WebSocket: Chrome tells
	// the extension only that the socket closed (1006), as when nothing
	// listens; the extension asks /health and tells the two apart.
	for _, status := range []int{http.StatusNotFound, http.StatusOK} {
		t.Run(fmt.Sprintf("plain HTTP %d", status), func(t *testing.T) {
			since := time.Now()
			h := startPlainHTTP(t, port, status)
			reconnectExtension(t, alloc)
			var st extensionState
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				st = readExtensionState(t, sw)
				if r := st.Status.LastRefusal; r != nil && r.Code == "unverified" && r.At >= since.UnixMilli() && st.Status.OtherProgram {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the extension did not report another program on the port (requests %v): %+v", h.paths(), st.Status)
				}
			}
			msg := st.Status.LastRefusal.Message
			for _, want := range []string{"Another program, not Tether, answers on 127.0.0.1:" + strconv.Itoa(port), fmt.Sprintf("answered HTTP %d", status), "sent it nothing"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the popup's message lacks %q: %q", want, msg)
				}
			}
			checkPopupOtherProgram(t, alloc, port)
			checkCLIOtherProgram(t, d, port)
			h.check(t, secret)
			if token, err := d.Paths.ReadControlToken(); err != nil || token == "" {
				t.Errorf("read the control token: %v", err)
			} else {
				h.check(t, token)
			}

			// The program quits: nothing listens, which is the one case
			// where the popup says Tether is not running.
			h.stop()
			for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				st = readExtensionState(t, sw)
				if st.Status.State == "disconnected" && st.Status.LastRefusal == nil && !st.Status.OtherProgram {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("with nothing on the port, the extension still reports: %+v", st.Status)
				}
			}
			if got := popupCard(t, alloc, "Tether is not running"); !strings.Contains(got.NextStep, "Start Tether") {
				t.Errorf("with nothing on the port, the popup's next step is %q", got.NextStep)
			}
		})
	}

	// Tether again on the same port and config: the extension proves its
	// pairing and connects with no approval (the daemon does not auto-approve now).
	d2 := StartDaemonAt(t, d.Bin, d.Paths.Dir, port)
	from := d2.Log.Len()
	reconnectExtension(t, alloc)
	if _, _, err := d2.Log.WaitFor(from, 30*time.Second, "extension connected"); err != nil {
		t.Fatalf("the extension did not come back to Tether: %v", err)
	}
}

// TestSquatterBeforeFirstPairing: an extension folder Tether wrote holds
// its pairing key (tether.json), so a new profile loaded from it asks to
// pair only a program that proves it holds that key: a squatter on the
// port gets no hello (not even the profile id) and cannot make it act.
func TestSquatterBeforeFirstPairing(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	since := time.Now()
	s := startSquatter(t, port, true)
	dir := filepath.Join(t.TempDir(), "extension")
	if err := launcher.WriteExtension(extension.Dist(), dir, launcher.ExtensionConfig{Port: port, PairingKey: strings.Repeat("ab", 32)}); err != nil {
		t.Fatal(err)
	}
	b := StartChromiumWithExtension(t, dir)
	alloc := b.DevTools(t)
	var sw context.Context
	for deadline := time.Now().Add(30 * time.Second); sw == nil; time.Sleep(100 * time.Millisecond) {
		if workerRunning(alloc) {
			sw = ExtensionWorker(t, alloc)
		} else if time.Now().After(deadline) {
			t.Fatal("the extension's service worker did not start")
		}
	}
	st := waitUnverified(t, sw, s, since)
	s.check(t, "")
	if !strings.Contains(st.Status.LastRefusal.Message, "pairing key") {
		t.Errorf("the popup's message does not name the folder's pairing key: %q", st.Status.LastRefusal.Message)
	}
	if st.Secret != "" {
		t.Errorf("the extension stored the squatter's secret %q", st.Secret)
	}
	if _, _, err := findPage(alloc, "squatted"); err == nil {
		t.Error("the extension opened the tab the squatter asked for")
	}
}

// reconnectExtension asks the extension to connect now, as the popup's
// Reconnect button does (the backoff after a refusal is 30 s).
func reconnectExtension(t *testing.T, alloc context.Context) {
	t.Helper()
	popup := OpenTab(t, alloc, "chrome-extension://"+broker.DefaultExtensionID+"/popup.html")
	_, err := chromedp.Run(popup, chromedp.Evaluate[bool](`chrome.runtime.sendMessage({target: 'background', kind: 'popup-reconnect'}).then(() => true)`, chromedp.EvalAwaitPromise))
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("reconnect the extension: %v", err)
	}
}

// workerRunning reports whether the extension's service worker is a target yet.
func workerRunning(alloc context.Context) bool {
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	targets, err := chromedp.Targets(bctx)
	if err != nil {
		return false
	}
	for _, ti := range targets {
		if ti.Type == "service_worker" && strings.HasPrefix(ti.URL, "chrome-extension://"+broker.DefaultExtensionID+"/") {
			return true
		}
	}
	return false
}

// TestPairAgain: a browser loaded from a folder without a pairing key
// (a release zip, a checkout's extension/dist) cannot tell a Tether that
// forgot it from another program on the port. When Tether forgets it, the
// extension sends nothing, and the popup offers Pair again; pressing it
// drops the old secret and pairs anew (the daemon auto-approves here).
func TestPairAgain(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	dir := filepath.Join(t.TempDir(), "extension")
	if err := launcher.WriteExtension(extension.Dist(), dir, launcher.ExtensionConfig{Port: d.Record.Port}); err != nil {
		t.Fatal(err)
	}
	from := d.Log.Len()
	b := StartChromiumWithExtension(t, dir)
	line, _, err := d.Log.WaitFor(from, 60*time.Second, "extension connected")
	if err != nil {
		t.Fatalf("the extension did not pair: %v", err)
	}
	slug := regexp.MustCompile(`slug=(\S+)`).FindStringSubmatch(line)[1]
	alloc := b.DevTools(t)
	sw := ExtensionWorker(t, alloc)
	old := readExtensionState(t, sw).Secret

	since := time.Now()
	tetherCLI(t, d, "profiles", "forget", slug)
	var st extensionState
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st = readExtensionState(t, sw)
		if r := st.Status.LastRefusal; r != nil && r.Code == "unverified" && r.At >= since.UnixMilli() && st.Status.PairAgain {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after forget, the popup does not offer Pair again: %+v", st.Status)
		}
	}
	if !strings.Contains(st.Status.LastRefusal.Message, "press Pair again") {
		t.Errorf("the popup's message does not say when to press Pair again: %q", st.Status.LastRefusal.Message)
	}

	from = d.Log.Len()
	popup := OpenTab(t, alloc, "chrome-extension://"+broker.DefaultExtensionID+"/popup.html")
	if _, err := chromedp.Run(popup, chromedp.Evaluate[bool](`document.getElementById('pair-again').hidden === false && (document.getElementById('pair-again').click(), true)`)); err != nil {
		t.Fatalf("press Pair again: %v", err)
	}
	if _, _, err := d.Log.WaitFor(from, 30*time.Second, "extension connected"); err != nil {
		t.Fatalf("the extension did not pair again: %v", err)
	}
	// The daemon logs the ack as it sends it; the extension stores it next.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		now := readExtensionState(t, sw).Secret
		if len(now) == 64 && now != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after Pair again the secret is %q, want a new one (old %q)", now, old)
		}
	}
}

// plainHTTP is another program on Tether's port that speaks HTTP but not
// Tether's WebSocket: it answers every request, the extension's upgrade on
// /extension included, with the same status and a short text.
type plainHTTP struct {
	mu   sync.Mutex
	reqs []string // "METHOD path", the query, then the headers and body, one per request
	srv  *http.Server
}

// startPlainHTTP listens on 127.0.0.1:port (waiting up to 10 s for the
// program that had it to let it go) and answers status to everything.
func startPlainHTTP(t *testing.T, port, status int) *plainHTTP {
	t.Helper()
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if ln, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port)); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("the plain HTTP server cannot take port %d: %v", port, err)
	}
	h := &plainHTTP{}
	h.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		_ = r.Header.Write(&b)
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		h.mu.Lock()
		h.reqs = append(h.reqs, r.Method+" "+r.URL.Path+"\n"+r.URL.RawQuery+"\n"+b.String()+string(body))
		h.mu.Unlock()
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "a web server that is not Tether\n")
	})}
	go func() { _ = h.srv.Serve(ln) }()
	t.Cleanup(h.stop)
	return h
}

func (h *plainHTTP) stop() { _ = h.srv.Close() }

// paths lists the first line of each request.
func (h *plainHTTP) paths() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.reqs {
		first, _, _ := strings.Cut(r, "\n")
		out = append(out, first)
	}
	return out
}

// check fails t unless the extension (and the CLI) only asked for the
// socket (/extension) and /health, and no request carried secret or the
// control token.
func (h *plainHTTP) check(t *testing.T, secret string) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.reqs) == 0 {
		t.Error("the extension sent the plain HTTP server no request at all")
	}
	for _, r := range h.reqs {
		first, _, _ := strings.Cut(r, "\n")
		if first != "GET /extension" && first != "GET /health" {
			t.Errorf("the extension sent the plain HTTP server %q, want only the socket's upgrade and /health", first)
		}
		if secret != "" && strings.Contains(r, secret) {
			t.Errorf("a request to the plain HTTP server carries the pairing secret: %q", r)
		}
	}
}

// popupShows is what the popup's connection card says.
type popupShows struct {
	State    string `json:"state"`
	Headline string `json:"headline"`
	NextStep string `json:"nextStep"`
	Refusal  string `json:"refusal"`
}

// popupCard opens the popup and waits until its headline starts with
// headline, then returns its card's texts.
func popupCard(t *testing.T, alloc context.Context, headline string) popupShows {
	t.Helper()
	popup := OpenTab(t, alloc, "chrome-extension://"+broker.DefaultExtensionID+"/popup.html")
	var got popupShows
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		raw, err := chromedp.Run(popup, chromedp.Evaluate[string](`JSON.stringify({state: document.getElementById('connection').dataset.state || '', headline: document.getElementById('state').textContent, nextStep: document.getElementById('next-step').textContent, refusal: document.getElementById('refusal').hidden ? '' : document.getElementById('refusal').textContent})`))
		if err != nil {
			t.Fatalf("read the popup: %v", err)
		}
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("the popup's texts %q: %v", raw, err)
		}
		if strings.HasPrefix(got.Headline, headline) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the popup does not say %q: %+v", headline, got)
		}
	}
}

// checkPopupOtherProgram checks, in the popup itself, that it says another
// program holds the port, that nothing was sent, and the steps that work:
// quit that program, or Tether on another port with the extension's
// folder written again from it.
func checkPopupOtherProgram(t *testing.T, alloc context.Context, port int) {
	t.Helper()
	got := popupCard(t, alloc, fmt.Sprintf("Another program is on Tether's port %d: nothing was sent", port))
	if got.State != "refused" {
		t.Errorf("the popup's state is %q, want refused", got.State)
	}
	for _, want := range []string{"Quit that program", fmt.Sprintf("TETHER_PORT=%d tether", port+1), "Write the extension", "chrome://extensions"} {
		if !strings.Contains(got.NextStep, want) {
			t.Errorf("the popup's next step lacks %q: %q", want, got.NextStep)
		}
	}
	if strings.HasPrefix(got.NextStep, "Start Tether") || !strings.Contains(got.Refusal, "Another program, not Tether, answers on 127.0.0.1:"+strconv.Itoa(port)) {
		t.Errorf("the popup tells to start Tether, or does not name the address: %+v", got)
	}
}

// checkCLIOtherProgram runs the real CLI of d's config dir (Tether
// stopped, its record gone) with another program on port: `tether stop`
// and `tether profiles` say that program, not Tether, answers there,
// naming the port and (Linux) this test process holding it; `tether
// profiles approve` fails saying so, never "the daemon is not running".
func checkCLIOtherProgram(t *testing.T, d *Daemon, port int) {
	t.Helper()
	run := func(args ...string) (string, error) {
		cmd := exec.Command(d.Bin, args...)
		cmd.Env = append(d.Env(), "TETHER_PORT="+strconv.Itoa(port))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	wants := []string{"another program", "not Tether, answers on 127.0.0.1:" + strconv.Itoa(port), "nothing was sent to it", "Quit that program"}
	if runtime.GOOS == "linux" {
		wants = append(wants, fmt.Sprintf("(pid %d, ", os.Getpid()))
	}
	for _, args := range [][]string{{"stop"}, {"profiles"}, {"profiles", "approve", "ABCDEF"}} {
		out, err := run(args...)
		if wantErr := len(args) == 3; (err != nil) != wantErr {
			t.Errorf("tether %v: exit %v:\n%s", args, err, out)
		}
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("tether %v does not say %q:\n%s", args, want, out)
			}
		}
		if strings.Contains(out, "daemon is not running") {
			t.Errorf("tether %v says the daemon is not running, with another program on its port:\n%s", args, out)
		}
	}
}

// TestSquatterMoveTetherToAnotherPort follows the popup's other way out
// when another program keeps Tether's port: run Tether on another port
// and write the extension from its window. The browser loads the folder
// the window writes (chrome-extension/ in the config dir); a web server
// takes Tether's port; Tether starts on another port and writes the
// folder again (what the window's Write the extension does, through the
// same local API call). The extension reads the new port from tether.json
// at its next attempt and connects there, paired as before, with no
// reload and nothing pressed.
func TestSquatterMoveTetherToAnotherPort(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	ctx := context.Background()
	if _, err := localclient.New(d.Paths).WriteExtension(ctx); err != nil {
		t.Fatalf("write the extension from the window's API: %v", err)
	}
	from := d.Log.Len()
	b := StartChromiumWithExtension(t, d.Paths.UnpackedExtension())
	if _, _, err := d.Log.WaitFor(from, 60*time.Second, "extension connected"); err != nil {
		t.Fatalf("the extension did not pair: %v", err)
	}
	alloc := b.DevTools(t)
	var sw context.Context
	for deadline := time.Now().Add(30 * time.Second); sw == nil; time.Sleep(100 * time.Millisecond) {
		if workerRunning(alloc) {
			sw = ExtensionWorker(t, alloc)
		} else if time.Now().After(deadline) {
			t.Fatal("the extension's service worker did not start")
		}
	}
	port := d.Record.Port
	if err := d.Stop(); err != nil {
		t.Logf("daemon exit: %v", err)
	}
	h := startPlainHTTP(t, port, http.StatusNotFound)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if st := readExtensionState(t, sw); st.Status.OtherProgram {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the extension does not report the web server on port %d", port)
		}
	}

	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	other := free.Addr().(*net.TCPAddr).Port
	free.Close()
	d2 := StartDaemonAt(t, d.Bin, d.Paths.Dir, other)
	from = d2.Log.Len()
	if _, err := localclient.New(d2.Paths).WriteExtension(ctx); err != nil {
		t.Fatalf("write the extension again from Tether on port %d: %v", other, err)
	}
	if _, _, err := d2.Log.WaitFor(from, 30*time.Second, "extension connected"); err != nil {
		t.Fatalf("the extension did not follow Tether to port %d: %v", other, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st := readExtensionState(t, sw)
		if st.Status.State == "connected" && !st.Status.OtherProgram {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the extension's status after the move: %+v", st.Status)
		}
	}
	h.check(t, readExtensionState(t, sw).Secret)
}
