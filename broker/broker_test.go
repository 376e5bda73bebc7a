package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
)

const testOrigin = "chrome-extension://" + DefaultExtensionID

func newTestBroker(t *testing.T, cfg Config) (*Broker, string) {
	t.Helper()
	if cfg.ExtensionIDs == nil {
		cfg.ExtensionIDs = []string{DefaultExtensionID}
	}
	if cfg.ConnectWait == 0 {
		cfg.ConnectWait = 200 * time.Millisecond
	}
	b, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(func() { b.Close(); srv.Close() })
	return b, "ws" + strings.TrimPrefix(srv.URL, "http")
}

// fakeExt is a Go stand-in for the extension: a real WebSocket client.
type fakeExt struct {
	t  *testing.T
	ws *websocket.Conn
	// s is the socket's protocol 4 handshake (nil for a raw dial).
	s *exthandshake.Socket
}

func dial(t *testing.T, url, origin string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	h := http.Header{}
	if origin != "" {
		h.Set("Origin", origin)
	}
	return websocket.DefaultDialer.Dial(url, h)
}

// secrets remembers the secret each fake profile was issued, as the
// extension's chrome.storage.local does.
var secrets sync.Map

func secretOf(profileID string) string {
	v, _ := secrets.Load(profileID)
	s, _ := v.(string)
	return s
}

// connect dials, says hello (with the proof of the profile's secret, if it
// has one) and reads the hello_ack. With b, it also checks the challenge's
// pairing proof against b's pairing key.
func connect(t *testing.T, b *Broker, url, profileID, label string, tabs ...protocol.TabInfo) (*fakeExt, protocol.HelloAck) {
	t.Helper()
	f := hello(t, url, profileID, label, tabs...)
	if b != nil {
		s := f.s
		if want := protocol.DaemonProof(b.cfg.PairingKey, s.Endpoint, s.Named, s.Nonce, s.Challenge.Nonce); !protocol.ProofMatches(s.Challenge.PairingProof, want) {
			t.Fatalf("the challenge's pairingProof %q is not the broker's proof %q", s.Challenge.PairingProof, want)
		}
	}
	var ack protocol.HelloAck
	f.read(&ack)
	if ack.Type != protocol.TypeHelloAck {
		t.Fatalf("got %+v, want hello_ack", ack)
	}
	if ack.Secret != "" {
		secrets.Store(profileID, ack.Secret)
	}
	// The ack is sent after registration, so the profile is visible now.
	return f, ack
}

// hello opens the socket as the extension does (offering a nonce, and
// naming the profile when it holds a secret for it), reads the challenge
// and sends a hello with the proof of the profile's secret, returning
// before any answer.
func hello(t *testing.T, url, profileID, label string, tabs ...protocol.TabInfo) *fakeExt {
	t.Helper()
	f, err := tryHello(t, url, profileID, label, tabs...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// tryHello is hello, returning an error when the socket is closed before
// its hello is sent (a flood of silent sockets made room).
func tryHello(t *testing.T, url, profileID, label string, tabs ...protocol.TabInfo) (*fakeExt, error) {
	t.Helper()
	secret := secretOf(profileID)
	named := ""
	if secret != "" {
		named = profileID
	}
	s, _, err := exthandshake.OpenAs(nil, url, http.Header{"Origin": {testOrigin}}, named, secret)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	t.Cleanup(func() { s.WS.Close() })
	if ch := s.Challenge; ch.Protocol != protocol.Version || !protocol.ValidNonce(ch.Nonce) || !protocol.ValidNonce(ch.PairingProof) || ch.Nonce == s.Nonce {
		t.Fatalf("challenge %+v: want protocol %d, a fresh nonce and a pairing proof", ch, protocol.Version)
	}
	f := &fakeExt{t: t, ws: s.WS, s: s}
	if err := f.ws.WriteJSON(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: profileID,
		Label: label, ExtVersion: "test", Proof: s.Proof(profileID, secret), Tabs: tabs}); err != nil {
		return nil, fmt.Errorf("write hello: %w", err)
	}
	return f, nil
}

func (f *fakeExt) send(v any) {
	f.t.Helper()
	if err := f.ws.WriteJSON(v); err != nil {
		f.t.Fatalf("write: %v", err)
	}
}

func (f *fakeExt) read(v any) {
	f.t.Helper()
	_ = f.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	if err := f.ws.ReadJSON(v); err != nil {
		f.t.Fatalf("read: %v", err)
	}
}

func (f *fakeExt) readRequest() protocol.Request {
	f.t.Helper()
	var r protocol.Request
	f.read(&r)
	if r.Type != protocol.TypeRequest {
		f.t.Fatalf("got frame %q, want request", r.Type)
	}
	return r
}

func (f *fakeExt) answer(id string, result any) {
	f.t.Helper()
	raw, _ := json.Marshal(result)
	f.send(protocol.Response{Type: protocol.TypeResponse, ID: id, Result: raw})
}

func TestOriginGate(t *testing.T) {
	_, url := newTestBroker(t, Config{AutoApprove: true})
	for _, origin := range []string{"", "http://evil.example", "chrome-extension://abcdefghijklmnopabcdefghijklmnop", testOrigin + ".evil", "null"} {
		ws, resp, err := dial(t, url, origin)
		if err == nil {
			ws.Close()
			t.Errorf("origin %q: handshake accepted, want refused", origin)
			continue
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("origin %q: got %v, want 403", origin, resp)
		}
	}
	ws, _, err := dial(t, url, testOrigin)
	if err != nil {
		t.Fatalf("allowed origin refused: %v", err)
	}
	ws.Close()
}

func TestCallCorrelatesOutOfOrderResponses(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, ack := connect(t, b, url, "11111111-aaaa", "Work Laptop 💻")
	if ack.AssignedSlug != "work-laptop" || ack.AssignedLabel != "Work Laptop 💻" {
		t.Fatalf("ack = %+v", ack)
	}
	type out struct {
		res protocol.PageResult
		err error
	}
	results := make(chan out, 2)
	for _, tab := range []int{1, 2} {
		go func() {
			var r protocol.PageResult
			err := b.Call(context.Background(), "", protocol.MethodSnapshot, protocol.TabParams{Tab: tab}, &r, 5*time.Second)
			results <- out{r, err}
		}()
	}
	r1, r2 := f.readRequest(), f.readRequest()
	// Answer in reverse order; each caller must get the answer to its own request.
	for _, r := range []protocol.Request{r2, r1} {
		var p protocol.TabParams
		if err := json.Unmarshal(r.Params, &p); err != nil {
			t.Fatal(err)
		}
		if r.TimeoutMs != 5000 {
			t.Errorf("timeoutMs = %d, want 5000", r.TimeoutMs)
		}
		f.answer(r.ID, protocol.PageResult{Tab: p.Tab, Title: "tab" + string(rune('0'+p.Tab))})
	}
	for range 2 {
		o := <-results
		if o.err != nil {
			t.Fatal(o.err)
		}
		if want := "tab" + string(rune('0'+o.res.Tab)); o.res.Title != want {
			t.Errorf("tab %d got title %q, want %q", o.res.Tab, o.res.Title, want)
		}
	}
}

func TestRemoteErrorAndTimeout(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "p1", "Home")
	errc := make(chan error, 1)
	go func() {
		errc <- b.Call(context.Background(), "home", protocol.MethodClick, protocol.ClickParams{Ref: "e1"}, nil, 5*time.Second)
	}()
	r := f.readRequest()
	f.send(protocol.Response{Type: protocol.TypeResponse, ID: r.ID, Error: &protocol.Error{Code: protocol.CodeStaleRef, Message: "snapshot again"}})
	var re *RemoteError
	if err := <-errc; !errors.As(err, &re) || re.Code != protocol.CodeStaleRef {
		t.Fatalf("got %v, want RemoteError stale_ref", err)
	}

	// No answer: the call times out, and a late answer is dropped harmlessly.
	err := b.Call(context.Background(), "", protocol.MethodSnapshot, protocol.TabParams{}, nil, 100*time.Millisecond)
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	late := f.readRequest()
	f.answer(late.ID, protocol.PageResult{})
	// The connection still works.
	go func() {
		errc <- b.Call(context.Background(), "", protocol.MethodTabsList, protocol.TabsListParams{}, nil, 5*time.Second)
	}()
	next := f.readRequest()
	f.answer(next.ID, protocol.TabsListResult{})
	if err := <-errc; err != nil {
		t.Fatalf("call after a late answer: %v", err)
	}
}

func TestDisconnectFailsInFlightCalls(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "p1", "Home")
	errc := make(chan error, 3)
	for range 3 {
		go func() {
			errc <- b.Call(context.Background(), "", protocol.MethodSnapshot, protocol.TabParams{}, nil, time.Minute)
		}()
	}
	for range 3 {
		f.readRequest()
	}
	start := time.Now()
	f.ws.Close()
	for range 3 {
		if err := <-errc; !errors.Is(err, ErrDisconnected) {
			t.Fatalf("got %v, want ErrDisconnected", err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("in-flight calls failed after %s; they must fail at once", d)
	}
}

// TestDisconnectMidActionSaysOutcomeUnknown: a read cut off by a closed
// socket may be retried; an action may already have run, so its error says
// to look before repeating it (an action runs at most once).
func TestDisconnectMidActionSaysOutcomeUnknown(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "p1", "Home")
	errc := make(chan error, 2)
	go func() {
		errc <- b.Call(context.Background(), "", protocol.MethodSnapshot, &protocol.TabParams{}, nil, time.Minute)
	}()
	f.readRequest()
	go func() {
		errc <- b.Call(context.Background(), "", protocol.MethodClick, &protocol.ClickParams{Ref: "e1"}, nil, time.Minute)
	}()
	f.readRequest()
	f.ws.Close()
	var texts []string
	for range 2 {
		err := <-errc
		if !errors.Is(err, ErrDisconnected) {
			t.Fatalf("got %v, want ErrDisconnected", err)
		}
		texts = append(texts, err.Error())
	}
	joined := strings.Join(texts, "\n")
	if !strings.Contains(joined, "nothing was changed: retry once it reconnects") {
		t.Errorf("the read's error does not say it may be retried:\n%s", joined)
	}
	if !strings.Contains(joined, "this click call may or may not have acted on the page, and Tether does not send it again: take a snapshot") {
		t.Errorf("the click's error does not say its outcome is unknown:\n%s", joined)
	}
}

func TestMalformedFrameKeepsConnection(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "p1", "Home")
	if err := f.ws.WriteMessage(websocket.TextMessage, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	f.send(map[string]any{"type": "response"}) // no id
	f.send(map[string]any{"type": "bogus"})
	errc := make(chan error, 1)
	go func() {
		errc <- b.Call(context.Background(), "", protocol.MethodTabsList, protocol.TabsListParams{}, nil, 5*time.Second)
	}()
	r := f.readRequest()
	f.answer(r.ID, protocol.TabsListResult{})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestHelloRefusals(t *testing.T) {
	b, url := newTestBroker(t, Config{DaemonVersion: "9.9", AutoApprove: true})
	connect(t, b, url, "paired-1", "Paired")
	cases := []struct {
		name string
		// nonce: the socket offers a nonce, as protocol 4 does; named is
		// the profile its handshake names.
		nonce bool
		named string
		hello any
		code  protocol.ErrorCode
		text  string
	}{
		// An extension before protocol 4 offers no nonce and gets no challenge: it is told to update.
		{"protocol mismatch", false, "", protocol.Hello{Type: protocol.TypeHello, Protocol: 3, ProfileID: "p"}, protocol.CodeProtocolMismatch, "chrome://extensions"},
		{"protocol mismatch after a challenge", true, "", protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version + 1, ProfileID: "p"}, protocol.CodeProtocolMismatch, "chrome://extensions"},
		{"not a hello", false, "", map[string]any{"type": "response", "id": "1"}, protocol.CodeBadRequest, "hello"},
		{"not a hello after a challenge", true, "", map[string]any{"type": "response", "id": "1"}, protocol.CodeBadRequest, "hello"},
		{"no profile id", false, "", protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version}, protocol.CodeBadRequest, "profileId"},
		{"no profile id after a challenge", true, "", protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version}, protocol.CodeBadRequest, "profileId"},
		// A protocol 4 hello on a socket that offered no nonce: Tether could not prove itself to it.
		{"no nonce", false, "", protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: "p"}, protocol.CodeBadRequest, "nonce"},
		// The hello must be of the profile the handshake named.
		{"another profile than the named one", true, "paired-1", protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: "p"}, protocol.CodeBadRequest, "named"},
		{"named an unknown profile, said hello as another", true, "q", protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: "p"}, protocol.CodeBadRequest, "named"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ws *websocket.Conn
			if tc.nonce {
				s, _, err := exthandshake.Open(nil, url, http.Header{"Origin": {testOrigin}}, tc.named)
				if err != nil {
					t.Fatal(err)
				}
				ws = s.WS
			} else {
				var err error
				if ws, _, err = dial(t, url, testOrigin); err != nil {
					t.Fatal(err)
				}
			}
			defer ws.Close()
			f := &fakeExt{t: t, ws: ws}
			f.send(tc.hello)
			var r protocol.Refused
			f.read(&r)
			if r.Type != protocol.TypeRefused || r.Code != tc.code || !strings.Contains(r.Message, tc.text) {
				t.Fatalf("got %+v, want refused %s mentioning %q", r, tc.code, tc.text)
			}
			if _, _, err := ws.ReadMessage(); err == nil {
				t.Fatal("socket still open after refusal")
			}
		})
	}
	if ps := b.Profiles(); len(ps) != 1 || ps[0].ID != "paired-1" {
		t.Fatalf("profiles after refusals: %+v, want paired-1 alone", ps)
	}
}

func TestHelloTimeout(t *testing.T) {
	b, url := newTestBroker(t, Config{HelloTimeout: 100 * time.Millisecond, AutoApprove: true})
	ws, _, err := dial(t, url, testOrigin)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := ws.ReadMessage(); err == nil {
		t.Fatal("silent socket was not dropped")
	} else if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
		t.Fatal("daemon kept a silent socket open past HelloTimeout")
	}
	// The same after the challenge, whether the socket names a paired
	// profile (kept out of the bound on silent sockets) or not.
	connect(t, b, url, "timeout-1", "Home")
	for _, named := range []string{"", "timeout-1"} {
		s, _, err := exthandshake.Open(nil, url, http.Header{"Origin": {testOrigin}}, named)
		if err != nil {
			t.Fatal(err)
		}
		defer s.WS.Close()
		_ = s.WS.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, _, err := s.WS.ReadMessage(); err == nil {
			t.Fatalf("named %q: a frame after the challenge, want the silent socket dropped", named)
		} else if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
			t.Fatalf("named %q: daemon kept a silent socket open past HelloTimeout after its challenge", named)
		}
	}
}

func TestCallWaitsForAProfile(t *testing.T) {
	b, url := newTestBroker(t, Config{ConnectWait: 5 * time.Second, AutoApprove: true})
	errc := make(chan error, 1)
	go func() {
		errc <- b.Call(context.Background(), "", protocol.MethodTabsList, protocol.TabsListParams{}, nil, 5*time.Second)
	}()
	f, _ := connect(t, b, url, "p1", "Home")
	r := f.readRequest()
	f.answer(r.ID, protocol.TabsListResult{})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	b2, _ := newTestBroker(t, Config{ConnectWait: 50 * time.Millisecond, AutoApprove: true})
	err := b2.Call(context.Background(), "", protocol.MethodTabsList, protocol.TabsListParams{}, nil, time.Second)
	if !errors.Is(err, ErrNoProfile) || !strings.Contains(err.Error(), "tether browser") {
		t.Fatalf("got %v, want ErrNoProfile with advice", err)
	}
}

func TestReconnectReplacesSocket(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	old, _ := connect(t, b, url, "p1", "Home")
	errc := make(chan error, 1)
	go func() {
		errc <- b.Call(context.Background(), "", protocol.MethodSnapshot, protocol.TabParams{}, nil, time.Minute)
	}()
	old.readRequest()
	f, ack := connect(t, b, url, "p1", "Home")
	if ack.AssignedSlug != "home" {
		t.Fatalf("slug %q after reconnect, want home", ack.AssignedSlug)
	}
	if err := <-errc; !errors.Is(err, ErrDisconnected) {
		t.Fatalf("in-flight call on the replaced socket: got %v, want ErrDisconnected", err)
	}
	go func() {
		errc <- b.Call(context.Background(), "home", protocol.MethodTabsList, protocol.TabsListParams{}, nil, 5*time.Second)
	}()
	r := f.readRequest()
	f.answer(r.ID, protocol.TabsListResult{})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n := len(b.Profiles()); n != 1 {
		t.Fatalf("%d profiles, want 1", n)
	}
}

func TestProfileResolution(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	connect(t, b, url, "aaaa-1111", "Work")
	connect(t, b, url, "bbbb-2222", "Work")
	connect(t, b, url, "cccc-3333", "Home")
	got := map[string]string{}
	ps := b.Profiles()
	for _, p := range ps {
		got[p.ID] = p.Slug
	}
	if got["aaaa-1111"] != "work" || got["bbbb-2222"] != "work-2" || got["cccc-3333"] != "home" {
		t.Fatalf("slugs = %v", got)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, tc := range []struct{ name, wantID, wantErr string }{
		{"home", "cccc-3333", ""},
		{"Home", "cccc-3333", ""},
		{"work-2", "bbbb-2222", ""},
		{"bbbb", "bbbb-2222", ""},
		{"aaaa-1111", "aaaa-1111", ""},
		{"wo", "", "ambiguous"},
		{"nope", "", "unknown"},
	} {
		c, err := b.resolveNamedLocked(tc.name)
		// FindProfile (the policy's view of the same name) agrees.
		if p, ok := FindProfile(ps, tc.name); ok != (tc.wantErr == "") || p.ID != tc.wantID {
			t.Errorf("FindProfile(%q) = %s, %v; want %q", tc.name, p.ID, ok, tc.wantID)
		}
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: got %v, want error %q", tc.name, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.name, err)
		case c.stored.ID != tc.wantID:
			t.Errorf("%q resolved to %s, want %s", tc.name, c.stored.ID, tc.wantID)
		}
	}
}

func TestProfileTab(t *testing.T) {
	p := Profile{Tabs: []protocol.TabInfo{{Tab: 3, URL: "https://a.example/"}, {Tab: 5, URL: "https://b.example/", Current: true}}}
	for _, tc := range []struct{ n, want int }{{0, 5}, {3, 3}, {5, 5}, {4, 0}} {
		got, ok := p.Tab(tc.n)
		if ok != (tc.want != 0) || got.Tab != tc.want {
			t.Errorf("Tab(%d) = %d, %v; want %d", tc.n, got.Tab, ok, tc.want)
		}
	}
	if _, ok := (Profile{Tabs: []protocol.TabInfo{{Tab: 1}}}).Tab(0); ok {
		t.Error("Tab(0) without a current tab found one")
	}
}

func TestSlugify(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Work Laptop 💻", "work-laptop"},
		{"", "profile"},
		{"💻", "profile"},
		{"  Home  ", "home"},
		{"Dev/Test_profile.2", "dev-test-profile-2"},
		{"仕事", "profile"},
		{"Ünïcode Straße", "unicode-strae"},
		{"Café Crème", "cafe-creme"},
	} {
		if got := Slugify(tc.in); got != tc.want {
			t.Errorf("Slugify(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	taken := map[string]bool{"work": true, "work-2": true}
	if got := uniqueSlug("work", taken); got != "work-3" {
		t.Errorf("uniqueSlug = %q, want work-3", got)
	}
}
