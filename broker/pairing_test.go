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
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
)

// readPairing reads the pairing frame a held hello gets.
func (f *fakeExt) readPairing() protocol.Pairing {
	f.t.Helper()
	typ, data := f.readFrame()
	var p protocol.Pairing
	if err := json.Unmarshal(data, &p); err != nil || typ != protocol.TypePairing {
		f.t.Fatalf("got %s, want pairing", data)
	}
	for _, r := range p.Code {
		if !strings.ContainsRune(CodeAlphabet, r) {
			f.t.Fatalf("code %q has %q, outside %s", p.Code, r, CodeAlphabet)
		}
	}
	return p
}

// waitSilent waits until n sockets are counted as waiting for their hello.
func waitSilent(t *testing.T, b *Broker, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b.mu.Lock()
		got := len(b.silent)
		b.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d silent sockets counted, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// readRefused reads a refused frame and checks that the socket closes after it.
func (f *fakeExt) readRefused() protocol.Refused {
	f.t.Helper()
	typ, data := f.readFrame()
	var r protocol.Refused
	if err := json.Unmarshal(data, &r); err != nil || typ != protocol.TypeRefused {
		f.t.Fatalf("got %s, want refused", data)
	}
	_ = f.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := f.ws.ReadMessage(); err == nil {
		f.t.Fatal("socket still open after refused")
	} else if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
		f.t.Fatal("socket not closed within 5 s of refused")
	}
	return r
}

func pendingCodes(b *Broker) map[string]string {
	out := map[string]string{}
	for _, p := range b.Pending() {
		out[p.ID] = p.Code
	}
	return out
}

// The attack of issue 12: while the real profile waits, a forger says hello
// with the 8-character prefix Tether printed. It must be refused, and that
// prefix must approve nobody.
func TestPrefixHijackIsRefused(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	const real = "0721cbc6-5d1e-4b7a-9c3e-2f1a7b8c9d0e"
	r := hello(t, url, real, "Work")
	code := r.readPairing().Code

	for _, forged := range []string{
		"0721cbc6",                             // the printed prefix
		"0721cbc",                              // a shorter prefix
		"0721cbc6-5d1e",                        // a longer one
		"0721cbc6-ffff-4fff-8fff-ffffffffffff", // same displayed prefix, different id
		strings.ToLower(code),                  // spells the real entry's code
	} {
		f := hello(t, url, forged, "Work")
		if got := f.readRefused(); got.Code != protocol.CodeBadRequest || !strings.Contains(got.Message, "refused") {
			t.Errorf("forged id %q: got %+v", forged, got)
		}
	}
	if p := b.Pending(); len(p) != 1 || p[0].ID != real {
		t.Fatalf("pending = %+v, want only the real profile", p)
	}
	for _, name := range []string{"0721cbc6", "0721", "work", "Work"} {
		if _, err := b.Approve(name); !errors.Is(err, ErrUnknownProfile) {
			t.Errorf("approve %q: %v, want ErrUnknownProfile", name, err)
		}
	}
	if _, err := b.Approve(code); err != nil {
		t.Fatal(err)
	}
	var ack protocol.HelloAck
	r.read(&ack)
	if ack.Type != protocol.TypeHelloAck || ack.Secret == "" {
		t.Fatalf("the real profile got %+v", ack)
	}

	// Paired, it is protected the same way: a prefix of its id, or its
	// displayed prefix, is refused before any pairing.
	for _, forged := range []string{"0721cbc6", real[:20], "0721cbc6-0000"} {
		f := hello(t, url, forged, "Work")
		if got := f.readRefused(); got.Code != protocol.CodeBadRequest {
			t.Errorf("forged id %q after pairing: got %+v", forged, got)
		}
	}
	if n := len(b.Pending()); n != 0 {
		t.Fatalf("%d pending after forged hellos", n)
	}
}

// Two entries with the same label are told apart by their codes, and only
// the code the browser shows approves it.
func TestCodeMismatchCannotBeApproved(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	realExt := hello(t, url, "aaaa1111-0000-4000-8000-000000000001", "Work")
	realCode := realExt.readPairing().Code
	forger := hello(t, url, "bbbb2222-0000-4000-8000-000000000002", "Work")
	forgedCode := forger.readPairing().Code
	if realCode == forgedCode {
		t.Fatalf("two waiting entries share the code %s", realCode)
	}
	codes := pendingCodes(b)
	if len(codes) != 2 || codes["aaaa1111-0000-4000-8000-000000000001"] != realCode {
		t.Fatalf("pending codes %v", codes)
	}
	// A code no entry has approves nothing.
	wrong := "222222"
	if wrong == realCode || wrong == forgedCode {
		wrong = "333333"
	}
	if _, err := b.Approve(wrong); !errors.Is(err, ErrUnknownProfile) {
		t.Fatalf("approve of a code nobody has: %v", err)
	}
	if _, err := b.Approve(realCode); err != nil {
		t.Fatal(err)
	}
	var ack protocol.HelloAck
	realExt.read(&ack)
	if ack.Type != protocol.TypeHelloAck || ack.Secret == "" {
		t.Fatalf("real got %+v", ack)
	}
	// The forger is still waiting, untouched, and the used code is gone.
	if codes := pendingCodes(b); len(codes) != 1 || codes["bbbb2222-0000-4000-8000-000000000002"] != forgedCode {
		t.Fatalf("pending codes after approval %v", codes)
	}
	// Approving it again says it is paired already, not to try again later.
	if _, err := b.Approve(realCode); !errors.Is(err, ErrAlreadyPaired) || !strings.HasPrefix(err.Error(), "browser profile already paired: ") || !strings.Contains(err.Error(), `is of "Work" (its slug is "work")`) {
		t.Fatalf("second approval of the same code: %v", err)
	}
	if _, err := b.Deny(forgedCode); err != nil {
		t.Fatal(err)
	}
	if r := forger.readRefused(); r.Code != protocol.CodePairingDenied {
		t.Fatalf("forger got %+v", r)
	}
}

// A hello repeating a waiting id replaces that socket (only the real
// extension knows the full id) and keeps its code, so the popup and
// Tether's list still agree after the extension reconnects.
func TestRepeatedPendingIDReplacesSocket(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	const id = "cccc3333-0000-4000-8000-000000000003"
	first := hello(t, url, id, "Home")
	oldCode := first.readPairing().Code
	since := b.Pending()[0].Since
	second := hello(t, url, id, "Home")
	if newCode := second.readPairing().Code; newCode != oldCode {
		t.Fatalf("the code changed from %s to %s on reconnect", oldCode, newCode)
	}
	_ = first.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := first.ws.ReadMessage(); err == nil {
		t.Fatal("the replaced socket is still open")
	}
	if p := b.Pending(); len(p) != 1 || p[0].Code != oldCode || !p[0].Since.Equal(since) {
		t.Fatalf("pending %+v, want one entry with code %s since %v", p, oldCode, since)
	}
	if _, err := b.Approve(id); err != nil { // the full id works too
		t.Fatal(err)
	}
	var ack protocol.HelloAck
	second.read(&ack)
	if ack.Type != protocol.TypeHelloAck {
		t.Fatalf("got %+v", ack)
	}
}

func TestPairingExpires(t *testing.T) {
	b, url := newTestBroker(t, Config{PairingTTL: 300 * time.Millisecond})
	f := hello(t, url, "dddd4444-0000-4000-8000-000000000004", "Home")
	p := f.readPairing()
	if got := b.Pending(); len(got) != 1 || got[0].Expires.Sub(got[0].Since) != 300*time.Millisecond {
		t.Fatalf("pending = %+v", got)
	}
	r := f.readRefused()
	if r.Code != protocol.CodePairingExpired || !strings.Contains(r.Message, "asks again when it reconnects") {
		t.Fatalf("got %+v", r)
	}
	waitChange(t, b, func() bool { return len(b.Pending()) == 0 })
	if _, err := b.Approve(p.Code); !errors.Is(err, ErrUnknownProfile) {
		t.Fatalf("an expired code approves: %v", err)
	}
	// It asks again and gets a new entry.
	f2 := hello(t, url, "dddd4444-0000-4000-8000-000000000004", "Home")
	f2.readPairing()
	if n := len(b.Pending()); n != 1 {
		t.Fatalf("%d pending after asking again", n)
	}
}

// Issue 12: sixteen forged hellos with random ids filled the waiting list
// for good and a genuine new profile got too_many_profiles. Now the oldest
// waiting entry is pushed out instead (pairing_displaced), and entries
// expire.
func TestForgedHellosDoNotLockOutANewProfile(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	var forged []*fakeExt
	for i := range MaxPendingPairings + 4 {
		f := hello(t, url, fmt.Sprintf("%08x-forged", 0x10000000+i*0x01000000), "Work")
		f.readPairing()
		forged = append(forged, f)
	}
	for i := range 4 { // the four oldest made room
		if r := forged[i].readRefused(); r.Code != protocol.CodePairingDisplaced || !strings.Contains(r.Message, "keeps its code") {
			t.Fatalf("forged %d got %+v", i, r)
		}
	}
	genuine := hello(t, url, "eeee5555-0000-4000-8000-000000000005", "Work")
	code := genuine.readPairing().Code
	if n := len(b.Pending()); n != MaxPendingPairings {
		t.Fatalf("%d pending, want %d", n, MaxPendingPairings)
	}
	if _, err := b.Approve(code); err != nil {
		t.Fatal(err)
	}
	var ack protocol.HelloAck
	genuine.read(&ack)
	if ack.Type != protocol.TypeHelloAck || ack.Secret == "" {
		t.Fatalf("genuine got %+v", ack)
	}
	secrets.Store("eeee5555-0000-4000-8000-000000000005", ack.Secret)
	// A full waiting list never keeps a paired profile out either.
	forged2 := hello(t, url, "ffff6666-forged", "X")
	forged2.readPairing()
	connect(t, b, url, "eeee5555-0000-4000-8000-000000000005", "Work")
}

// A silent socket (no hello) holds a slot for HelloTimeout at most, and at
// MaxAwaitingHello the oldest one is closed for a newcomer, never the
// newcomer refused.
func TestSilentSocketsMakeRoomForNewcomers(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	var silent []*websocket.Conn
	for i := range MaxAwaitingHello {
		ws, _, err := dial(t, url, testOrigin)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		silent = append(silent, ws)
		// The daemon counts a socket just after its upgrade: wait for it, so
		// the order is known.
		waitSilent(t, b, i+1)
	}
	// The 17th is accepted and says hello; the oldest silent one is closed.
	f, ack := connect(t, nil, url, "h1", "H")
	if ack.AssignedSlug != "h" {
		t.Fatalf("ack %+v", ack)
	}
	_ = f
	_ = silent[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := silent[0].ReadMessage(); err == nil {
		t.Fatal("oldest silent socket still open")
	} else if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
		t.Fatal("oldest silent socket not closed to make room")
	}
	// The next oldest is still open (it was not its turn).
	_ = silent[1].SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, _, err := silent[1].ReadMessage(); err == nil {
		t.Fatal("unexpected frame")
	} else if ne, ok := err.(interface{ Timeout() bool }); !ok || !ne.Timeout() {
		t.Fatalf("second silent socket closed too: %v", err)
	}
}

// Issue 12: silent sockets reopened in a loop kept a paired Chrome out.
// With twice MaxAwaitingHello of them churning (each reopened as soon as
// the daemon closes it), a paired profile naming itself in its handshake
// still connects every time, at the first try.
func TestPairedProfileConnectsWhileSilentSocketsChurn(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true, HelloTimeout: 2 * time.Second})
	first, _ := connect(t, b, url, "churn-paired", "Work")
	first.ws.Close()
	waitChange(t, b, func() bool { p, _ := profileBySlug(b, "work"); return !p.Connected })

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var opened atomic.Int64
	for range 2 * MaxAwaitingHello {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				ws, _, err := websocket.DefaultDialer.DialContext(ctx, url, map[string][]string{"Origin": {testOrigin}})
				if err != nil {
					continue
				}
				opened.Add(1)
				// Silent until the daemon closes it (to make room, or at HelloTimeout).
				_, _, _ = ws.ReadMessage()
				ws.Close()
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	// Wait for the churn to be under way: silent sockets closed to make room.
	for opened.Load() < 3*MaxAwaitingHello {
		time.Sleep(5 * time.Millisecond)
	}
	// The extension names its paired profile in the handshake, with a
	// proof of its key ("tether.profile.<id>.<proof>"): no silent socket can push it out, so every
	// connect succeeds at the first try, and the daemon proves it holds
	// the profile's key before the hello.
	secret := secretOf("churn-paired")
	for i := range 10 {
		s, resp, err := exthandshake.OpenAs(nil, url, map[string][]string{"Origin": {testOrigin}}, "churn-paired", secret)
		if err != nil {
			t.Fatalf("connect %d: %v", i, err)
		}
		if got := resp.Header.Get("Sec-WebSocket-Protocol"); got != protocol.Subprotocol {
			t.Fatalf("selected subprotocol %q, want %q (never the nonce or the profile)", got, protocol.Subprotocol)
		}
		if !s.DaemonProvedProfile(secret) {
			t.Fatalf("connect %d: the challenge does not prove the profile's key: %+v", i, s.Challenge)
		}
		f := &fakeExt{t: t, ws: s.WS, s: s}
		f.send(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: "churn-paired",
			Label: "Work", Proof: s.Proof("churn-paired", secret)})
		var ack protocol.HelloAck
		f.read(&ack)
		if ack.Type != protocol.TypeHelloAck || ack.AssignedSlug != "work" {
			t.Fatalf("connect %d: %+v", i, ack)
		}
		s.WS.Close()
		waitChange(t, b, func() bool { p, _ := profileBySlug(b, "work"); return !p.Connected })
	}
	t.Logf("%d silent sockets opened during the test", opened.Load())
}

// Naming a paired profile with a proof of its key (protocol.NamedProof)
// over a fresh nonce keeps a socket out of the bound on silent sockets,
// for MaxNamedAwaiting sockets per profile at most: past that, and for a
// profile the daemon does not know, a socket naming it without a proof or
// with a proof whose nonce was used before (a replay), a socket is
// counted like any other. A socket stops holding its place once its first
// frame is read or it is gone.
func TestNamedSocketsExemptUpToMaxNamedAwaiting(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "named-paired", "Work")
	f.ws.Close()
	named := func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.namedWaiting["named-paired"]
	}
	waitNamed := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); named() != n; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d sockets naming the profile held out of the bound, want %d", named(), n)
			}
		}
	}
	secret := secretOf("named-paired")
	origin := map[string][]string{"Origin": {testOrigin}}
	// The id alone (a local program can learn it), or a proof of another
	// key: counted like any other socket.
	for _, sec := range []string{"", strings.Repeat("7", 64)} {
		s, _, err := exthandshake.OpenAs(nil, url, origin, "named-paired", sec)
		if err != nil {
			t.Fatal(err)
		}
		waitSilent(t, b, 1)
		s.WS.Close()
		waitSilent(t, b, 0)
	}
	// A valid proof replayed with its nonce (a program that sat on the
	// port collected it): counted.
	replayed := protocol.NewNonce()
	proof := protocol.NamedProof(protocol.ProfileKey(secret), strings.TrimPrefix(url, "ws://"), "named-paired", replayed)
	var replays []*websocket.Conn
	for i := range 2 {
		d := websocket.Dialer{Subprotocols: []string{protocol.Subprotocol, protocol.NonceSubprotocolPrefix + replayed, protocol.ProfileSubprotocolPrefix + "named-paired." + proof}}
		ws, _, err := d.Dial(url, origin)
		if err != nil {
			t.Fatal(err)
		}
		replays = append(replays, ws)
		if i == 0 {
			waitNamed(1)
		} else {
			waitSilent(t, b, 1)
		}
	}
	for _, ws := range replays {
		ws.Close()
	}
	waitNamed(0)
	waitSilent(t, b, 0)
	var held []*exthandshake.Socket
	for i := range MaxNamedAwaiting {
		s, _, err := exthandshake.OpenAs(nil, url, origin, "named-paired", secret)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.WS.Close() })
		held = append(held, s)
		waitNamed(i + 1)
	}
	waitSilent(t, b, 0)
	// One more naming it with a valid proof, and one naming an unknown
	// profile: both counted.
	for i, id := range []string{"named-paired", "named-unknown"} {
		s, _, err := exthandshake.OpenAs(nil, url, origin, id, secret)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.WS.Close() })
		waitSilent(t, b, i+1)
	}
	if n := named(); n != MaxNamedAwaiting {
		t.Fatalf("%d held out of the bound, want %d", n, MaxNamedAwaiting)
	}
	// A held socket that goes away frees its place; one that says hello too.
	held[0].WS.Close()
	waitNamed(MaxNamedAwaiting - 1)
	s := held[1]
	g := &fakeExt{t: t, ws: s.WS, s: s}
	g.send(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: "named-paired",
		Label: "Work", Proof: s.Proof("named-paired", secretOf("named-paired"))})
	var ack protocol.HelloAck
	g.read(&ack)
	if ack.Type != protocol.TypeHelloAck {
		t.Fatalf("got %+v, want hello_ack", ack)
	}
	waitNamed(MaxNamedAwaiting - 2)
}

// A new profile has no paired profile to name in its handshake, so a flood
// of silent sockets can close its socket before its hello is read (the
// window is about two round trips: the challenge, then the hello). It retries, as the extension does, and gets through: the flood
// cannot hold every slot for long, since the oldest is always closed first.
func TestNewProfileGetsThroughSilentSocketChurn(t *testing.T) {
	b, url := newTestBroker(t, Config{HelloTimeout: 2 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var opened atomic.Int64
	for range 2 * MaxAwaitingHello {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				ws, _, err := websocket.DefaultDialer.DialContext(ctx, url, map[string][]string{"Origin": {testOrigin}})
				if err != nil {
					continue
				}
				opened.Add(1)
				_, _, _ = ws.ReadMessage()
				ws.Close()
			}
		}()
	}
	defer func() { cancel(); wg.Wait() }()
	for opened.Load() < 3*MaxAwaitingHello {
		time.Sleep(5 * time.Millisecond)
	}
	const id = "9999aaaa-0000-4000-8000-000000000009"
	for try := 1; ; try++ {
		if try > 20 {
			t.Fatalf("20 sockets in a row closed before the pairing frame (%d silent sockets)", opened.Load())
		}
		f, err := tryHello(t, url, id, "New")
		if err == nil {
			_ = f.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
			var p protocol.Pairing
			if err := f.ws.ReadJSON(&p); err == nil && p.Type == protocol.TypePairing {
				t.Logf("got through at try %d (%d silent sockets)", try, opened.Load())
				break
			}
			f.ws.Close()
		}
		time.Sleep(250 * time.Millisecond) // the extension's first backoff
	}
	if codes := pendingCodes(b); len(codes) != 1 || codes[id] == "" {
		t.Fatalf("pending %v", codes)
	}
}

// flood says hello with a new random profile id from each of n goroutines,
// again and again (each socket is read until the daemon closes it), until
// the test ends (with n > MaxPendingPairings, each new hello pushes an
// older one out): the security tester's attack on a browser waiting for
// approval. It returns how many hellos it sent so far.
func flood(t *testing.T, url string, n int) *atomic.Int64 {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var sent atomic.Int64
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				s, _, err := exthandshake.Open(nil, url, map[string][]string{"Origin": {testOrigin}}, "")
				if err != nil {
					continue
				}
				ws := s.WS
				id := fmt.Sprintf("f%03x%04x-%s", g, i%0x10000, newCode())
				if ws.WriteJSON(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: id, Label: "Work"}) == nil {
					sent.Add(1)
				}
				go func() { <-ctx.Done(); ws.Close() }()
				for {
					if _, _, err := ws.ReadMessage(); err != nil {
						break
					}
				}
				ws.Close()
			}
		}()
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return &sent
}

// The security tester's lockout: while a real new browser waited for
// approval, forged hellos with random ids pushed its entry out of the
// waiting list within a second of each reconnect, each time with a new
// code, so the user could never approve it. Now it keeps its code across
// pushes, and approving that code while it is out pairs it at its next
// hello, at once.
func TestApprovalOutlivesHelloFlood(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	sent := flood(t, url, 41)
	for sent.Load() < 4*MaxPendingPairings {
		time.Sleep(time.Millisecond)
	}
	const id = "7a3f0c2e-1b4d-4e8f-9a6b-5c7d8e9f0a1b"
	code := ""
	// Pushed out and back, three times: always the same code, read from
	// its own socket as the popup does.
	for round := range 3 {
		f := hello(t, url, id, "Work")
		got := f.readPairing().Code
		if code == "" {
			code = got
		} else if got != code {
			t.Fatalf("round %d: code %s, was %s", round, got, code)
		}
		r := f.readRefused()
		if r.Code != protocol.CodePairingDisplaced || !strings.Contains(r.Message, "keeps its code") {
			t.Fatalf("round %d: got %+v, want pairing_displaced", round, r)
		}
	}
	// The user types the code the popup shows while the entry is out of
	// the list.
	p, err := b.Approve(strings.ToLower(code))
	if err != nil {
		t.Fatal(err)
	}
	if !p.PairsOnReconnect || p.ID != id || p.Slug != "" {
		t.Fatalf("approve returned %+v, want PairsOnReconnect for %s", p, id)
	}
	if _, err := b.Approve(code); !errors.Is(err, ErrUnknownProfile) {
		t.Fatalf("the code approves twice: %v", err)
	}
	// Its next hello is paired at once, flood or not.
	f, ack := connect(t, b, url, id, "Work")
	if ack.Secret == "" || ack.AssignedSlug != "work" {
		t.Fatalf("ack %+v", ack)
	}
	f.ws.Close()
	waitChange(t, b, func() bool { p, _ := profileBySlug(b, "work"); return !p.Connected })
	// And it reconnects with its secret like any paired profile.
	connect(t, b, url, id, "Work")
	t.Logf("%d forged hellos", sent.Load())
}

// Approval by code also works while the entry is in the list, under the
// same flood; and a remembered entry the user denies is refused
// (pairing_denied) at its next hello.
func TestDenyOutlivesHelloFlood(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	sent := flood(t, url, 41)
	for sent.Load() < 4*MaxPendingPairings {
		time.Sleep(time.Millisecond)
	}
	const id = "8b4e1d3f-2c5e-4f9a-8b7c-6d8e9fab1c2d"
	f := hello(t, url, id, "Work")
	code := f.readPairing().Code
	if r := f.readRefused(); r.Code != protocol.CodePairingDisplaced {
		t.Fatalf("got %+v", r)
	}
	if _, err := b.Deny(code); err != nil {
		t.Fatal(err)
	}
	f = hello(t, url, id, "Work")
	if r := f.readRefused(); r.Code != protocol.CodePairingDenied {
		t.Fatalf("got %+v, want pairing_denied", r)
	}
	// The denial is used up: asking again (the popup's Reconnect) waits
	// for approval anew.
	f = hello(t, url, id, "Work")
	f.readPairing()
}

// An id's code is derived from it (codeFor), so it stays the same even when
// a flood made the daemon forget the entry it pushed out: more than
// MaxRememberedPairings other entries pushed out after it.
func TestCodeStableBeyondMemory(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	const id = "ad6e3f5b-4e7a-4b1c-8d9e-8fa0b1c2d3e4"
	f := hello(t, url, id, "Work")
	code := f.readPairing().Code
	for i := range MaxRememberedPairings + 2*MaxPendingPairings {
		hello(t, url, fmt.Sprintf("f%07x-stable", i), "Flood").readPairing()
	}
	if r := f.readRefused(); r.Code != protocol.CodePairingDisplaced {
		t.Fatalf("got %+v", r)
	}
	b.mu.Lock()
	_, remembered := b.remembered[id]
	n := len(b.remembered)
	b.mu.Unlock()
	if remembered || n > MaxRememberedPairings {
		t.Fatalf("remembered %v, %d entries: want it forgotten, at most %d", remembered, n, MaxRememberedPairings)
	}
	if c := hello(t, url, id, "Work").readPairing().Code; c != code {
		t.Fatalf("code %s after being forgotten, was %s", c, code)
	}
	// Another daemon (another key) gives other codes.
	b2, _ := newTestBroker(t, Config{})
	if b2.codeFor(id) == b.codeFor(id) && b2.codeFor("x") == b.codeFor("x") {
		t.Fatal("two daemons derive the same codes")
	}
}

// A socket that goes away while waiting (the extension's offscreen document
// restarted) gets the same code when it says hello again.
func TestCodeKeptAcrossReconnect(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	const id = "9c5f2e4a-3d6f-4a0b-9c8d-7e9fa0b1c2d3"
	f := hello(t, url, id, "Home")
	code := f.readPairing().Code
	f.ws.Close()
	waitChange(t, b, func() bool { return len(b.Pending()) == 0 })
	f = hello(t, url, id, "Home")
	if c := f.readPairing().Code; c != code {
		t.Fatalf("code %s after reconnecting, was %s", c, code)
	}
	if _, err := b.Approve(code); err != nil {
		t.Fatal(err)
	}
	var ack protocol.HelloAck
	f.read(&ack)
	if ack.Type != protocol.TypeHelloAck || ack.Secret == "" {
		t.Fatalf("got %+v", ack)
	}
}

// Profile ids are shown in terminals: a forged id with escape sequences,
// CR/LF or a bidirectional override is refused (bad_request) and never
// listed; an id that differs from a waiting one only in case (so shares its
// displayed prefix, case aside) is refused too.
func TestForgedProfileIDs(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	const real = "abcdef12-5d1e-4b7a-9c3e-2f1a7b8c9d0e"
	hello(t, url, real, "Work").readPairing()
	for _, forged := range []string{
		"abcdef12\x1b[1A\x1b[2K", "x\x1b]0;title\x07", "x\r\napproved", "x\u202eevil", "x y", "é",
		strings.ToUpper(real), "ABCDEF12-0000", "ABCDEF1",
	} {
		f := hello(t, url, forged, "Work")
		if r := f.readRefused(); r.Code != protocol.CodeBadRequest {
			t.Errorf("forged id %q: got %+v, want bad_request", forged, r)
		}
	}
	if p := b.Pending(); len(p) != 1 || p[0].ID != real {
		t.Fatalf("pending %+v, want only the real profile", p)
	}
}

// Attack: `tether serve --auto-approve-profiles` (meant for a server's own
// headless Chrome) runs in remote mode; anyone on the internet forges the
// extension's Origin (a WebSocket client sets any header) and would be
// paired at once, to be sent the agents' calls and what they type. A
// socket that came through the reverse proxy (WithRemote) is never
// auto-approved: it gets a pairing code for the operator; a local one
// still pairs at once.
func TestAutoApproveIsLocalOnly(t *testing.T) {
	b, err := New(Config{AutoApprove: true, ExtensionIDs: []string{DefaultExtensionID}, ConnectWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.ServeHTTP(w, r.WithContext(WithRemote(r.Context())))
	}))
	local := httptest.NewServer(b)
	t.Cleanup(func() { b.Close(); remote.Close(); local.Close() })
	f := hello(t, "ws"+strings.TrimPrefix(remote.URL, "http"), "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "Forged")
	if p := f.readPairing(); p.Code == "" {
		t.Fatalf("a remote socket got no pairing code: %+v", p)
	}
	connect(t, b, "ws"+strings.TrimPrefix(local.URL, "http"), "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "Local")
}

// An unpaired socket (any local program can open one, no token needed) may
// send frames of MaxUnpairedFrame bytes at most, like its hello: one over
// that closes it, so MaxPendingPairings of them cannot make the daemon hold
// MaxFrameBytes (32 MiB) each, again and again. Approved, a socket's
// frames may be as large as MaxFrameBytes again, from its next frame on.
func TestUnpairedSocketFramesAreBounded(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	forger := hello(t, url, "cccc3333-0000-4000-8000-000000000003", "Work")
	forger.readPairing()
	big := []byte(`{"type":"tabs_changed","change":"opened","tab":1,"tabs":[],"x":"` + strings.Repeat("A", MaxUnpairedFrame) + `"}`)
	if err := forger.ws.WriteMessage(websocket.TextMessage, big); err != nil {
		t.Fatal(err)
	}
	_ = forger.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, _, err := forger.ws.ReadMessage(); err == nil {
		t.Fatal("the unpaired socket got a frame after its oversized one, want it closed")
	} else if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
		t.Fatal("an unpaired socket's frame over MaxUnpairedFrame was read: the socket stayed open")
	}

	realExt := hello(t, url, "aaaa1111-0000-4000-8000-000000000001", "Work")
	code := realExt.readPairing().Code
	if _, err := b.Approve(code); err != nil {
		t.Fatal(err)
	}
	var ack protocol.HelloAck
	realExt.read(&ack)
	done := make(chan error, 1)
	go func() {
		var r protocol.PageResult
		done <- b.Call(context.Background(), "", protocol.MethodSnapshot, &protocol.TabParams{Tab: 1}, &r, 5*time.Second)
	}()
	r := realExt.readRequest()
	realExt.answer(r.ID, protocol.PageResult{Tab: 1, Snapshot: strings.Repeat("x", 2*MaxUnpairedFrame)})
	if err := <-done; err != nil {
		t.Fatalf("a paired socket's large answer: %v", err)
	}
}
