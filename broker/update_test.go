package broker

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// CheckExtension runs for an accepted hello only: its reload frame follows
// hello_ack, and its note is the profile's ExtOutdated until the next hello.
func TestCheckExtension(t *testing.T) {
	checked := make(chan protocol.Hello, 4)
	note := "The extension is outdated: press Reload on Tether."
	b, url := newTestBroker(t, Config{AutoApprove: true, CheckExtension: func(h protocol.Hello) (*protocol.Reload, string) {
		checked <- h
		if h.Label == "Old" {
			return &protocol.Reload{Type: protocol.TypeReload, Version: "0.4.0", VersionName: "0.4.0 build x"}, ""
		}
		return nil, note
	}})

	f, _ := connect(t, b, url, "p-old", "Old")
	var reload protocol.Reload
	f.read(&reload)
	if reload.Type != protocol.TypeReload || reload.VersionName != "0.4.0 build x" {
		t.Fatalf("after hello_ack: %+v, want the reload frame", reload)
	}
	if h := <-checked; h.ProfileID != "p-old" {
		t.Fatalf("checked %+v", h)
	}

	connect(t, b, url, "p-manual", "Manual")
	<-checked
	timeout := time.After(5 * time.Second)
	for {
		changed := b.Changed()
		var got string
		for _, p := range b.Profiles() {
			if p.ID == "p-manual" {
				got = p.ExtOutdated
			}
		}
		if got == note {
			break
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("ExtOutdated = %q, want the note", got)
		}
	}
}

// A hello held for pairing is not checked: nothing is rewritten for a
// profile the user has not approved; once approved, it is, and its reload
// frame follows the hello_ack.
func TestCheckExtensionWaitsForPairing(t *testing.T) {
	checked := make(chan protocol.Hello, 1)
	b, url := newTestBroker(t, Config{CheckExtension: func(h protocol.Hello) (*protocol.Reload, string) {
		checked <- h
		return &protocol.Reload{Type: protocol.TypeReload, Version: "0.4.0"}, ""
	}})
	f := hello(t, url, "p-new", "New")
	var pairing protocol.Pairing
	f.read(&pairing)
	if pairing.Type != protocol.TypePairing {
		t.Fatalf("got %+v, want pairing", pairing)
	}
	select {
	case h := <-checked:
		t.Fatalf("a profile waiting for approval was checked: %+v", h)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := b.Approve(pairing.Code); err != nil {
		t.Fatal(err)
	}
	var ack protocol.HelloAck
	f.read(&ack)
	if ack.Type != protocol.TypeHelloAck {
		t.Fatalf("got %+v, want hello_ack", ack)
	}
	var reload protocol.Reload
	f.read(&reload)
	if reload.Type != protocol.TypeReload {
		t.Fatalf("got %+v, want reload", reload)
	}
	if h := <-checked; h.ProfileID != "p-new" {
		t.Fatalf("checked %+v", h)
	}
}

// legacyHello is a hello of the release before protocol 4: protocol 3,
// the secret itself in it.
func legacyHello(t *testing.T, url, profileID, secret string) *fakeExt {
	t.Helper()
	ws, _, err := dial(t, url, testOrigin)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { ws.Close() })
	f := &fakeExt{t: t, ws: ws}
	f.send(map[string]any{"type": "hello", "protocol": 3, "profileId": profileID, "label": "Old", "extVersion": "0.3.0",
		"secret": secret, "tabs": []any{}})
	return f
}

// An extension of protocol 3 that proves its pairing with its secret (as
// that release did) and whose folder Tether can rewrite is acked, told to
// reload, and sent no request; one with a wrong secret, or whose folder
// is not rewritten, is refused protocol_mismatch (it reloads by hand).
func TestLegacyExtensionUpdatesItself(t *testing.T) {
	var rewrite atomic.Bool
	rewrite.Store(true)
	checked := make(chan protocol.Hello, 4)
	b, url := newTestBroker(t, Config{AutoApprove: true, CheckExtension: func(h protocol.Hello) (*protocol.Reload, string) {
		checked <- h
		if h.Protocol == 3 && rewrite.Load() {
			return &protocol.Reload{Type: protocol.TypeReload, Version: "0.4.0", VersionName: "0.4.0 build x"}, ""
		}
		return nil, ""
	}})
	first, ack := connect(t, b, url, "p-legacy", "Old")
	<-checked
	first.ws.Close()
	if ack.Secret == "" {
		t.Fatal("no secret issued")
	}
	// The broker notices the close on its own time: until it has, the
	// profile shows the first socket as connected, which the check below
	// would take for the legacy one.
	for deadline := time.After(10 * time.Second); ; {
		changed := b.Changed()
		connected := false
		for _, p := range b.Profiles() {
			connected = connected || (p.ID == "p-legacy" && p.Connected)
		}
		if !connected {
			break
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatal("the first socket's close was not noticed")
		}
	}

	f := legacyHello(t, url, "p-legacy", ack.Secret)
	var got protocol.HelloAck
	f.read(&got)
	if got.Type != protocol.TypeHelloAck || got.Secret == "" || got.Secret == ack.Secret || got.AssignedSlug == "" {
		t.Fatalf("legacy hello: %+v, want a hello_ack with a new secret", got)
	}
	var reload protocol.Reload
	f.read(&reload)
	if reload.Type != protocol.TypeReload || reload.VersionName != "0.4.0 build x" {
		t.Fatalf("after the legacy hello_ack: %+v, want the reload frame", reload)
	}
	if h := <-checked; h.ProfileID != "p-legacy" || h.Protocol != 3 {
		t.Fatalf("checked %+v", h)
	}
	for _, p := range b.Profiles() {
		if p.ID == "p-legacy" && p.Connected {
			t.Fatal("the legacy socket was admitted as the profile's connection")
		}
	}

	// The old secret, which that release sent to whatever listened on the
	// port, no longer works: not in a protocol-4 proof, not again here.
	secrets.Store("p-legacy", ack.Secret)
	stale, err := tryHello(t, url, "p-legacy", "Old")
	if err != nil {
		t.Fatal(err)
	}
	var refused protocol.Refused
	stale.read(&refused)
	if refused.Code != protocol.CodeUnauthorized {
		t.Fatalf("a proof of the old secret: %+v, want unauthorized", refused)
	}
	refused = protocol.Refused{}
	legacyHello(t, url, "p-legacy", ack.Secret).read(&refused)
	if refused.Code != protocol.CodeProtocolMismatch {
		t.Fatalf("legacy hello with the old secret: %+v, want protocol_mismatch", refused)
	}
	// The new one does.
	secrets.Store("p-legacy", got.Secret)
	connect(t, b, url, "p-legacy", "Old")
	<-checked
	rewrite.Store(false)
	refused = protocol.Refused{}
	legacyHello(t, url, "p-legacy", got.Secret).read(&refused)
	if refused.Code != protocol.CodeProtocolMismatch {
		t.Fatalf("legacy hello whose folder is not rewritten: %+v, want protocol_mismatch", refused)
	}
}
