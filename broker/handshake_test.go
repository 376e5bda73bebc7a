package broker

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
)

// open opens the extension socket as the extension does in protocol 4,
// naming named ("" for none), and returns it with its challenge read.
func open(t *testing.T, wsURL, named string) *exthandshake.Socket {
	t.Helper()
	s, _, err := exthandshake.Open(nil, wsURL, http.Header{"Origin": {testOrigin}}, named)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.WS.Close() })
	return s
}

// The daemon's first frame proves it holds its pairing key, and the named
// profile's key when it knows that profile, over this socket's nonces and
// the endpoint the extension dialled (the port it listens on).
func TestChallengeProvesTheDaemon(t *testing.T) {
	key := bytes.Repeat([]byte{0x5a}, 32)
	b, wsURL := newTestBroker(t, Config{AutoApprove: true, PairingKey: key})
	u, _ := url.Parse(wsURL)
	port, _ := strconv.Atoi(u.Port())
	endpoint := protocol.LocalEndpoint(port)
	pairingProof := func(s *exthandshake.Socket, k []byte) string {
		return protocol.DaemonProof(k, endpoint, s.Named, s.Nonce, s.Challenge.Nonce)
	}

	s := open(t, wsURL, "")
	if s.Endpoint != endpoint {
		t.Fatalf("endpoint %q, want %q", s.Endpoint, endpoint)
	}
	ch := s.Challenge
	if ch.Type != protocol.TypeChallenge || ch.Protocol != protocol.Version || !protocol.ValidNonce(ch.Nonce) || ch.Nonce == s.Nonce {
		t.Fatalf("challenge %+v", ch)
	}
	if ch.PairingProof != pairingProof(s, key) || ch.ProfileProof != "" {
		t.Fatalf("challenge %+v: want the pairing key's proof and no profile proof", ch)
	}
	// Another key (another daemon) gives another proof.
	if ch.PairingProof == pairingProof(s, bytes.Repeat([]byte{0x5b}, 32)) {
		t.Fatal("the pairing proof does not depend on the key")
	}
	// Every socket gets a fresh nonce, so a fresh proof.
	if s2 := open(t, wsURL, ""); s2.Challenge.Nonce == ch.Nonce || s2.Challenge.PairingProof == ch.PairingProof {
		t.Fatalf("two sockets got the same nonce or proof: %+v %+v", ch, s2.Challenge)
	}

	// Once paired, a socket naming the profile gets its proof too, and
	// the pairing proof covers the id it named.
	connect(t, b, wsURL, "ch-paired", "Work")
	secret := secretOf("ch-paired")
	s = open(t, wsURL, "ch-paired")
	if !s.DaemonProvedProfile(secret) {
		t.Fatalf("challenge %+v does not prove the profile's key", s.Challenge)
	}
	if s.Challenge.PairingProof != pairingProof(s, key) {
		t.Fatal("the pairing proof of a named socket does not cover the name")
	}
	if s.DaemonProvedProfile("another secret") {
		t.Fatal("the profile proof holds for another secret")
	}
	// The proof is the daemon's, never the extension's (each side's has its own first line).
	if s.Challenge.ProfileProof == protocol.ExtensionProof(protocol.ProfileKey(secret), endpoint, "ch-paired", s.Nonce, s.Challenge.Nonce) {
		t.Fatal("the daemon's proof is the extension's")
	}
	// A profile the daemon does not know: no profile proof.
	if s = open(t, wsURL, "ch-unknown"); s.Challenge.ProfileProof != "" || s.Challenge.PairingProof != pairingProof(s, key) {
		t.Fatalf("challenge for an unknown profile %+v", s.Challenge)
	}
	// Nothing in the challenge is a secret: no key, no hash of one.
	for _, v := range []string{secret, hashSecret(secret), string(key)} {
		if strings.Contains(s.Challenge.Nonce+s.Challenge.PairingProof+s.Challenge.ProfileProof, v) {
			t.Fatalf("the challenge holds a secret: %+v", s.Challenge)
		}
	}
}

// A paired profile's hello is accepted only with the proof of its secret
// for this very socket: not without one, not with a proof recorded on
// another socket (its nonces), for another endpoint (a relay through
// another port) or for another profile id, not with the daemon's own
// proof sent back, not with the secret or its hash in place of the proof.
// Each refusal is unauthorized and leaves the connected socket working.
func TestHelloProofIsBoundToItsSocket(t *testing.T) {
	b, wsURL := newTestBroker(t, Config{AutoApprove: true})
	const id = "bound-1"
	live, _ := connect(t, b, wsURL, id, "Work")
	secret := secretOf(id)
	profKey := protocol.ProfileKey(secret)
	earlier := open(t, wsURL, id)
	recorded := earlier.Proof(id, secret)
	earlier.WS.Close()
	connect(t, b, wsURL, "bound-2", "Other")
	for _, tc := range []struct {
		name  string
		named string
		proof func(s *exthandshake.Socket) string
	}{
		{"no proof", id, func(*exthandshake.Socket) string { return "" }},
		{"no proof, profile not named", "", func(*exthandshake.Socket) string { return "" }},
		{"proof recorded on another socket", id, func(*exthandshake.Socket) string { return recorded }},
		{"proof for another endpoint", id, func(s *exthandshake.Socket) string {
			return protocol.ExtensionProof(profKey, "127.0.0.1:1", id, s.Nonce, s.Challenge.Nonce)
		}},
		{"proof for another profile id", "", func(s *exthandshake.Socket) string {
			return protocol.ExtensionProof(profKey, s.Endpoint, "bound-2", s.Nonce, s.Challenge.Nonce)
		}},
		{"proof of another profile's secret", id, func(s *exthandshake.Socket) string { return s.Proof(id, secretOf("bound-2")) }},
		{"nonces swapped", id, func(s *exthandshake.Socket) string {
			return protocol.ExtensionProof(profKey, s.Endpoint, id, s.Challenge.Nonce, s.Nonce)
		}},
		{"the daemon's proof sent back", id, func(s *exthandshake.Socket) string { return s.Challenge.ProfileProof }},
		{"the daemon's proof for the extension's fields", id, func(s *exthandshake.Socket) string {
			return protocol.DaemonProof(profKey, s.Endpoint, id, s.Nonce, s.Challenge.Nonce)
		}},
		{"the secret itself", id, func(*exthandshake.Socket) string { return secret }},
		{"the secret's hash", id, func(*exthandshake.Socket) string { return hashSecret(secret) }},
		{"upper-case proof", id, func(s *exthandshake.Socket) string { return strings.ToUpper(s.Proof(id, secret)) }},
		{"proof cut short", id, func(s *exthandshake.Socket) string { return s.Proof(id, secret)[:63] }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t, wsURL, tc.named)
			f := &fakeExt{t: t, ws: s.WS, s: s}
			f.send(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: id, Label: "Work", Proof: tc.proof(s)})
			if r := f.readRefused(); r.Code != protocol.CodeUnauthorized || !strings.Contains(r.Message, "did not prove") {
				t.Fatalf("got %+v, want unauthorized", r)
			}
		})
	}
	if p, ok := profileBySlug(b, "work"); !ok || !p.Connected {
		t.Fatalf("the live profile after the refusals: %+v", p)
	}
	_ = live.ws.SetReadDeadline(time.Time{})
	go live.serve(protocol.TabsListResult{})
	if err := b.Call(t.Context(), "work", protocol.MethodTabsList, &protocol.TabsListParams{}, nil, 5*time.Second); err != nil {
		t.Fatalf("the live profile stopped working: %v", err)
	}
	// The right proof, with or without naming the profile, is accepted.
	for _, named := range []string{id, ""} {
		s := open(t, wsURL, named)
		f := &fakeExt{t: t, ws: s.WS, s: s}
		f.send(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: id, Label: "Work", Proof: s.Proof(id, secret)})
		var ack protocol.HelloAck
		f.read(&ack)
		if ack.Type != protocol.TypeHelloAck || ack.AssignedSlug != "work" || ack.Secret != "" {
			t.Fatalf("named %q: got %+v, want hello_ack without a new secret", named, ack)
		}
	}
}
