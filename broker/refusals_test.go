package broker

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
)

// testClock is a settable Config.Now.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// oldHello says hello in protocol version v (an extension of another
// release) and returns the refusal.
func oldHello(t *testing.T, url, id, label string, v int) protocol.Refused {
	t.Helper()
	s, _, err := exthandshake.OpenAs(nil, url, http.Header{"Origin": {testOrigin}}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.WS.Close() })
	if err := s.WS.WriteJSON(map[string]any{"type": "hello", "protocol": v, "profileId": id, "label": label, "extVersion": "0.1.0", "tabs": []any{}}); err != nil {
		t.Fatal(err)
	}
	f := &fakeExt{t: t, ws: s.WS, s: s}
	return f.readRefused()
}

func refusedByID(b *Broker) map[string]RefusedProfile {
	out := map[string]RefusedProfile{}
	for _, r := range b.Refused() {
		out[r.ID] = r
	}
	return out
}

// A denied browser stops asking (the extension halts), so it is listed
// with why and what to do, the way without a popup included; once it asks
// again it is waiting for approval, no longer refused.
func TestDeniedBrowserIsListedUntilItAsksAgain(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	const id = "5e1f0a2b-0000-4000-8000-00000000d001"
	f := hello(t, url, id, "Headless box")
	code := f.readPairing().Code
	if _, err := b.Deny(code); err != nil {
		t.Fatal(err)
	}
	if r := f.readRefused(); r.Code != protocol.CodePairingDenied || !strings.Contains(r.Message, "restart the browser") {
		t.Fatalf("the extension was told %+v", r)
	}
	r, ok := refusedByID(b)[id]
	if !ok {
		t.Fatalf("the denied browser is not listed: %+v", b.Refused())
	}
	if r.Label != "Headless box" || r.Code != protocol.CodePairingDenied || r.Reason != "you denied it" || r.Count != 1 {
		t.Fatalf("listed as %+v", r)
	}
	for _, want := range []string{"Reconnect", "restart the browser", "tether browser --headless", "tether profiles approve CODE", "do nothing"} {
		if !strings.Contains(r.NextStep, want) {
			t.Errorf("next step lacks %q: %s", want, r.NextStep)
		}
	}
	// It asks again (restarted): waiting with the same code, not refused.
	g := hello(t, url, id, "Headless box")
	if again := g.readPairing().Code; again != code {
		t.Fatalf("code after the restart %s, want %s", again, code)
	}
	if n := len(b.Refused()); n != 0 {
		t.Fatalf("%d refused after it asked again: %+v", n, b.Refused())
	}
}

// A denial of an entry pushed out of the waiting list is listed when its
// next hello is refused.
func TestDenialOfARememberedEntryIsListedAtItsRefusal(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	const id = "5e1f0a2b-0000-4000-8000-00000000d002"
	f := hello(t, url, id, "Work")
	code := f.readPairing().Code
	f.ws.Close()
	for len(b.Pending()) != 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := b.Deny(code); err != nil {
		t.Fatal(err)
	}
	if len(b.Refused()) != 0 {
		t.Fatal("listed before it was refused")
	}
	if r := hello(t, url, id, "Work").readRefused(); r.Code != protocol.CodePairingDenied {
		t.Fatalf("got %+v", r)
	}
	if r, ok := refusedByID(b)[id]; !ok || r.Code != protocol.CodePairingDenied {
		t.Fatalf("not listed after its refusal: %+v", b.Refused())
	}
}

// An unauthorized hello is listed with advice that depends on the paired
// profile it claimed: connected (so it was not that browser), paired but
// away (forget it if its data was cleared), or forgotten since.
func TestUnauthorizedBrowserAdviceFollowsTheProfile(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	const id = "5e1f0a2b-0000-4000-8000-00000000d003"
	real, _ := connect(t, b, url, id, "Work")
	secret := secretOf(id)
	secrets.Store(id, "")
	defer secrets.Store(id, secret)
	if r := hello(t, url, id, "Work").readRefused(); r.Code != protocol.CodeUnauthorized || !strings.Contains(r.Message, "Reconnect") {
		t.Fatalf("got %+v", r)
	}
	r := refusedByID(b)[id]
	if r.Code != protocol.CodeUnauthorized || r.Slug != "work" || !strings.Contains(r.Reason, `"work"`) ||
		!strings.HasPrefix(r.NextStep, "nothing:") || !strings.Contains(r.NextStep, "another program") {
		t.Fatalf("while the real one is connected: %+v", r)
	}
	real.ws.Close()
	for b.Profiles()[0].Connected {
		time.Sleep(5 * time.Millisecond)
	}
	r = refusedByID(b)[id]
	if !strings.Contains(r.NextStep, "tether profiles forget work") || !strings.Contains(r.NextStep, "restart the browser") {
		t.Fatalf("while it is away: %+v", r)
	}
	if _, err := b.Forget("work"); err != nil {
		t.Fatal(err)
	}
	r = refusedByID(b)[id]
	if !strings.Contains(r.NextStep, "forgotten since") || !strings.Contains(r.NextStep, "Reconnect") {
		t.Fatalf("once forgotten: %+v", r)
	}
}

// An extension of another protocol is listed (it stops asking too), but
// not under the id of a profile connected now with its proof.
func TestProtocolMismatchIsListedUnlessTheProfileIsConnected(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	const old = "5e1f0a2b-0000-4000-8000-00000000d004"
	if r := oldHello(t, url, old, "Laptop", 2); r.Code != protocol.CodeProtocolMismatch {
		t.Fatalf("got %+v", r)
	}
	r := refusedByID(b)[old]
	if r.Code != protocol.CodeProtocolMismatch || r.Label != "Laptop" || !strings.Contains(r.Reason, "protocol 2") || !strings.Contains(r.NextStep, "chrome://extensions") {
		t.Fatalf("listed as %+v", r)
	}
	const live = "5e1f0a2b-0000-4000-8000-00000000d005"
	connect(t, b, url, live, "Home")
	oldHello(t, url, live, "Home", 2)
	if _, ok := refusedByID(b)[live]; ok {
		t.Fatal("a forged old hello is listed under a connected profile's id")
	}
	oldHello(t, url, "not valid!", "x", 2)
	if n := len(b.Refused()); n != 1 {
		t.Fatalf("%d listed, want only the first (an invalid id is not)", n)
	}
}

// The list is bounded; forged refusals (any program can send an old
// hello) push out each other before a denial, which is the user's own;
// entries go after RefusalTTL.
func TestRefusalsAreBoundedAndDenialsOutlastForgeries(t *testing.T) {
	clock := &testClock{now: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	b, url := newTestBroker(t, Config{Now: clock.Now})
	const denied = "5e1f0a2b-0000-4000-8000-00000000d006"
	f := hello(t, url, denied, "Mine")
	if _, err := b.Deny(f.readPairing().Code); err != nil {
		t.Fatal(err)
	}
	for i := range MaxRefusals + 8 {
		clock.add(time.Second)
		oldHello(t, url, fmt.Sprintf("f0f0f0f0-0000-4000-8000-%012d", i), "Forged", 2)
	}
	got := refusedByID(b)
	if len(got) != MaxRefusals {
		t.Fatalf("%d listed, want %d", len(got), MaxRefusals)
	}
	if _, ok := got[denied]; !ok {
		t.Fatal("forged refusals pushed the denial out")
	}
	if list := b.Refused(); list[0].At.Before(list[len(list)-1].At) {
		t.Fatal("not the most recent first")
	}
	clock.add(RefusalTTL)
	if n := len(b.Refused()); n != 0 {
		t.Fatalf("%d listed after RefusalTTL", n)
	}
}
