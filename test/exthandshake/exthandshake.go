// Package exthandshake opens the extension socket the way Tether's
// extension does in protocol 4 (protocol/proof.go): it offers a fresh
// nonce and, once paired, its profile id, reads the daemon's challenge, and
// computes the hello's proof. The fake extensions of unit and integration
// tests, the benchmarks and the attack tests use it; it imports only the
// protocol package, so the broker's own tests can use it too.
package exthandshake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/protocol"
)

// Socket is an extension socket whose challenge has been read.
type Socket struct {
	WS *websocket.Conn
	// Endpoint is what the socket dialled (protocol.LocalEndpoint or
	// RemoteEndpoint): the URL's host.
	Endpoint string
	// Named is the profile id the handshake named ("" when none).
	Named string
	// Nonce is the extension's nonce; Challenge the daemon's first frame.
	Nonce     string
	Challenge protocol.Challenge
}

// Open dials rawURL (ws://127.0.0.1:PORT/extension or a wss:// one) with
// header (Origin) and dialer (nil: websocket.DefaultDialer), naming the
// profile named when it is not empty, and reads the challenge (5 s at most).
// On a refused upgrade it returns the response with the error. It names
// the profile without a proof of its key (OpenAs adds one).
func Open(dialer *websocket.Dialer, rawURL string, header http.Header, named string) (*Socket, *http.Response, error) {
	return OpenAs(dialer, rawURL, header, named, "")
}

// OpenAs is Open as the real paired extension opens its socket: when
// secret is not empty, the profile subprotocol also carries
// protocol.NamedProof, so the daemon keeps the socket out of the bound on
// silent sockets.
func OpenAs(dialer *websocket.Dialer, rawURL string, header http.Header, named, secret string) (*Socket, *http.Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, nil, err
	}
	if dialer == nil {
		dialer = websocket.DefaultDialer
	}
	s := &Socket{Endpoint: protocol.RemoteEndpoint(u.Host), Named: named, Nonce: protocol.NewNonce()}
	d := *dialer
	d.Subprotocols = []string{protocol.Subprotocol, protocol.NonceSubprotocolPrefix + s.Nonce}
	if named != "" {
		sub := protocol.ProfileSubprotocolPrefix + named
		if secret != "" {
			sub += "." + protocol.NamedProof(protocol.ProfileKey(secret), s.Endpoint, named, s.Nonce)
		}
		d.Subprotocols = append(d.Subprotocols, sub)
	}
	ws, resp, err := d.Dial(rawURL, header)
	if err != nil {
		return nil, resp, err
	}
	s.WS = ws
	_ = ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := ws.ReadMessage()
	_ = ws.SetReadDeadline(time.Time{})
	if err != nil {
		ws.Close()
		return nil, resp, fmt.Errorf("waiting for the daemon's challenge: %w", err)
	}
	if err := json.Unmarshal(data, &s.Challenge); err != nil || s.Challenge.Type != protocol.TypeChallenge {
		ws.Close()
		return nil, resp, fmt.Errorf("the daemon's first frame is not a challenge: %.200s", data)
	}
	return s, resp, nil
}

// DaemonProvedProfile reports whether the challenge proves the daemon
// holds the key of the profile whose secret is secret.
func (s *Socket) DaemonProvedProfile(secret string) bool {
	want := protocol.DaemonProof(protocol.ProfileKey(secret), s.Endpoint, s.Named, s.Nonce, s.Challenge.Nonce)
	return protocol.ProofMatches(s.Challenge.ProfileProof, want)
}

// Proof is the hello's proof for profileID holding secret ("" when secret
// is empty: a profile not paired yet).
func (s *Socket) Proof(profileID, secret string) string {
	if secret == "" {
		return ""
	}
	return protocol.ExtensionProof(protocol.ProfileKey(secret), s.Endpoint, profileID, s.Nonce, s.Challenge.Nonce)
}
