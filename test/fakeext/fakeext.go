// Package fakeext is a Go stand-in for Tether's browser extension, speaking
// the real protocol over a real WebSocket. Integration tests and the
// concurrency benchmark use it where real Chromium would be too heavy
// (dozens of profiles); end-to-end tests use the real extension.
package fakeext

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
)

// Handler answers one request: a result, or an error for the daemon.
type Handler func(req protocol.Request) (any, *protocol.Error)

// Ext is one fake profile's connection.
type Ext struct {
	ProfileID string
	Ack       protocol.HelloAck
	// Secret is the pairing secret the profile holds after the handshake,
	// as the extension keeps it in chrome.storage.local: the one the ack
	// issued, else the one Dial was given. Pass it to Dial to reconnect.
	Secret string
	// Challenge is the daemon's first frame on this socket.
	Challenge protocol.Challenge
	// ProfileProven: Dial was given a secret and the challenge proved the
	// daemon holds that profile's key (Challenge.ProfileProof), as the
	// extension checks before it says hello.
	ProfileProven bool
	ws            *websocket.Conn
	wmu           sync.Mutex
}

// ErrRefused wraps a refused frame.
var ErrRefused = errors.New("refused")

// Dial connects to the daemon's extension route (ws://127.0.0.1:PORT/extension)
// with the extension's Origin as the extension does in protocol 4
// (test/exthandshake): it offers a fresh nonce and, when secret is not
// empty (a profile paired before, whose secret a hello_ack issued), names
// hello.ProfileID, reads the daemon's challenge, and says hello with the
// proof of secret (unless hello.Proof is set already: a forged one). It
// does not refuse a daemon that fails to prove itself (tests check
// Ext.ProfileProven). It returns after hello_ack; a pairing frame is
// waited through (each onPairing is called with its message); refused is
// an error wrapping ErrRefused.
func Dial(url string, hello protocol.Hello, secret string, onPairing ...func(message string)) (*Ext, error) {
	h := http.Header{"Origin": {"chrome-extension://" + broker.DefaultExtensionID}}
	named := ""
	if secret != "" {
		named = hello.ProfileID
	}
	s, _, err := exthandshake.OpenAs(nil, url, h, named, secret)
	if err != nil {
		return nil, err
	}
	ws := s.WS
	hello.Type = protocol.TypeHello
	if hello.Protocol == 0 {
		hello.Protocol = protocol.Version
	}
	if hello.Tabs == nil {
		hello.Tabs = []protocol.TabInfo{}
	}
	if hello.Proof == "" {
		hello.Proof = s.Proof(hello.ProfileID, secret)
	}
	if err := ws.WriteJSON(hello); err != nil {
		ws.Close()
		return nil, err
	}
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			ws.Close()
			return nil, fmt.Errorf("waiting for hello_ack: %w", err)
		}
		var env protocol.Envelope
		_ = json.Unmarshal(data, &env)
		switch env.Type {
		case protocol.TypePairing:
			var pr protocol.Pairing
			_ = json.Unmarshal(data, &pr)
			for _, f := range onPairing {
				f(pr.Message)
			}
			continue
		case protocol.TypeRefused:
			var r protocol.Refused
			_ = json.Unmarshal(data, &r)
			ws.Close()
			return nil, fmt.Errorf("%w: %s: %s", ErrRefused, r.Code, r.Message)
		case protocol.TypeHelloAck:
			e := &Ext{ProfileID: hello.ProfileID, Secret: secret, Challenge: s.Challenge, ws: ws,
				ProfileProven: secret != "" && s.DaemonProvedProfile(secret)}
			_ = json.Unmarshal(data, &e.Ack)
			if e.Ack.Secret != "" {
				e.Secret = e.Ack.Secret
			}
			return e, nil
		default:
			ws.Close()
			return nil, fmt.Errorf("unexpected %q before hello_ack", env.Type)
		}
	}
}

// Serve answers requests with h, each in its own goroutine (as the real
// extension does), until the socket closes.
func (e *Ext) Serve(h Handler) error {
	for {
		var req protocol.Request
		if err := e.ws.ReadJSON(&req); err != nil {
			return err
		}
		if req.Type != protocol.TypeRequest {
			continue
		}
		go func() {
			result, perr := h(req)
			resp := protocol.Response{Type: protocol.TypeResponse, ID: req.ID, Error: perr}
			if perr == nil {
				resp.Result, _ = json.Marshal(result)
			}
			e.wmu.Lock()
			defer e.wmu.Unlock()
			_ = e.ws.WriteJSON(resp)
		}()
	}
}

// Send writes one frame (e.g. a protocol.TabsChanged).
func (e *Ext) Send(v any) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	return e.ws.WriteJSON(v)
}

// Close closes the socket.
func (e *Ext) Close() error { return e.ws.Close() }
