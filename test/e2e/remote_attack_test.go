package e2e

import (
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
)

// TestRemoteForgedExtension: through real Caddy, against a broker in
// remote mode that runs with --auto-approve-profiles (for its own
// headless Chrome), a client on the internet forges the extension's Origin
// and says hello: it gets a pairing code for the operator, not a paired
// profile. Path tricks Caddy's matcher cleans to /mcp (/api/../mcp,
// //mcp, /MCP) reach nothing but refusals.
func TestRemoteForgedExtension(t *testing.T) {
	parallel(t)
	RequireCaddy(t)
	d, c := startRemote(t, `{"hosts": ["`+RemoteHost+`"]}`, "--auto-approve-profiles")
	dialer := websocket.Dialer{NetDialContext: c.DialContext, TLSClientConfig: &tls.Config{RootCAs: c.Roots}}
	s, resp, err := exthandshake.Open(&dialer, c.WSURL("/extension"), http.Header{"Origin": {"chrome-extension://" + broker.DefaultExtensionID}}, "")
	if err != nil {
		t.Fatalf("dial through caddy: %v %v", resp, err)
	}
	ws := s.WS
	defer ws.Close()
	if err := ws.WriteJSON(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: "f0e9ed00-e2e", Label: "Work", Tabs: []protocol.TabInfo{}}); err != nil {
		t.Fatal(err)
	}
	_ = ws.SetReadDeadline(time.Now().Add(20 * time.Second))
	var pf protocol.Pairing
	if err := ws.ReadJSON(&pf); err != nil || pf.Type != protocol.TypePairing || pf.Code == "" {
		t.Fatalf("a forged extension through caddy got %+v (%v), want a pairing code", pf, err)
	}
	for _, path := range []string{"/api/../mcp", "//mcp", "/MCP", "/mcp/"} {
		if code, body := get(t, c, path, d.Token); code < 400 {
			t.Errorf("GET %s through caddy with the local token: %d %s; want a refusal", path, code, body)
		}
	}
}
