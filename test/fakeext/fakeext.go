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
)

// Handler answers one request: a result, or an error for the daemon.
type Handler func(req protocol.Request) (any, *protocol.Error)

// Ext is one fake profile's connection.
type Ext struct {
	ProfileID string
	Ack       protocol.HelloAck
	ws        *websocket.Conn
	wmu       sync.Mutex
}

// ErrRefused wraps a refused frame.
var ErrRefused = errors.New("refused")

// Dial connects to the daemon's extension route (ws://127.0.0.1:PORT/extension)
// with the extension's Origin and says hello. It returns after hello_ack;
// a pairing frame is waited through (each onPairing is called with its
// message); refused is an error wrapping ErrRefused.
// onPairing, if non-nil, is called when the daemon answers pairing.
func Dial(url string, hello protocol.Hello, onPairing ...func(message string)) (*Ext, error) {
	h := http.Header{"Origin": {"chrome-extension://" + broker.DefaultExtensionID}}
	ws, _, err := websocket.DefaultDialer.Dial(url, h)
	if err != nil {
		return nil, err
	}
	hello.Type = protocol.TypeHello
	if hello.Protocol == 0 {
		hello.Protocol = protocol.Version
	}
	if hello.Tabs == nil {
		hello.Tabs = []protocol.TabInfo{}
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
			e := &Ext{ProfileID: hello.ProfileID, ws: ws}
			_ = json.Unmarshal(data, &e.Ack)
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
