package daemon

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/localapi"
	"github.com/tether-browser/tether/localclient"
	tmcp "github.com/tether-browser/tether/mcp"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
	"github.com/tether-browser/tether/test/fakeext"
	"github.com/tether-browser/tether/test/mcpclient"
)

// rawStatus sends req (a whole HTTP/1.1 request, as written on the wire)
// to addr and returns the response's status code.
func rawStatus(t *testing.T, addr, req string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%q: %v", req, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Attacks on remote mode as they reach the daemon from the reverse proxy
// (a loopback peer, X-Forwarded-Proto: https, the public Host): path,
// Host and request-target tricks never reach the local API, a named
// token never opens a control route, and the control token never works
// through the proxy.
func TestRemoteModeAttacks(t *testing.T) {
	var routes []localapi.Route
	p, addr := startDaemonWith(t, func(c *Config) {
		c.Services = func(s Services) { routes = s.API.Routes() }
		remoteSettings(t, c)
	})
	ctl, err := p.ReadControlToken()
	if err != nil {
		t.Fatal(err)
	}
	issued, err := localclient.New(p).AddToken(context.Background(), "agent")
	if err != nil {
		t.Fatal(err)
	}
	named := issued.Secret
	proxied := "X-Forwarded-Proto: https\r\nX-Forwarded-For: 203.0.113.9\r\n"
	for _, tc := range []struct {
		name, target, host, extra string
	}{
		{"dot-dot from /mcp", "/mcp/../api/tokens", "tether.example.org", proxied},
		{"dot-dot to /mcp (a proxy that cleans the path to match)", "/api/../mcp", "tether.example.org", proxied},
		{"double slash", "//api/tokens", "tether.example.org", proxied},
		{"encoded slash", "/mcp/..%2fapi/tokens", "tether.example.org", proxied},
		{"encoded path", "/%61pi/tokens", "tether.example.org", proxied},
		{"upper case", "/API/tokens", "tether.example.org", proxied},
		{"trailing slash", "/mcp/", "tether.example.org", proxied},
		{"upper-case /MCP", "/MCP", "tether.example.org", proxied},
		{"absolute-form naming loopback", "http://127.0.0.1/api/tokens", "tether.example.org", proxied},
		{"absolute-form naming the public host", "http://tether.example.org/api/tokens", "127.0.0.1", proxied},
		{"loopback Host through the proxy", "/api/tokens", "127.0.0.1", proxied},
		{"loopback Host, Forwarded only", "/api/tokens", "localhost", "Forwarded: for=203.0.113.9;proto=https\r\n"},
		{"trailing-dot Host", "/mcp", "tether.example.org.", proxied},
		{"userinfo in Host", "/mcp", "127.0.0.1@tether.example.org", proxied},
		{"comma-list proto", "/mcp", "tether.example.org", "X-Forwarded-Proto: http, https\r\n"},
		{"http proto first", "/mcp", "tether.example.org", "X-Forwarded-Proto: http\r\nX-Forwarded-Proto: https\r\n"},
	} {
		for _, auth := range []string{ctl, named} {
			req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\n%sAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: 17\r\nConnection: close\r\n\r\n{\"name\":\"stolen\"}",
				tc.target, tc.host, tc.extra, auth)
			if code := rawStatus(t, addr, req); code < 400 {
				t.Errorf("%s (%s): status %d, want a refusal", tc.name, map[bool]string{true: "control token", false: "named token"}[auth == ctl], code)
			}
		}
	}
	if len(routes) == 0 {
		t.Fatal("no routes")
	}
	for _, r := range routes {
		req := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", r.Method, r.Path, named)
		if code := rawStatus(t, addr, req); code != http.StatusUnauthorized {
			t.Errorf("%s %s with a named token: %d, want 401", r.Method, r.Path, code)
		}
	}
	list, err := localclient.New(p).Tokens(context.Background())
	if err != nil || len(list) != 1 || list[0].Name != "agent" {
		t.Errorf("tokens after the attacks: %+v %v; want agent alone", list, err)
	}
}

// Attack: a named token over its calls-per-minute limit reads the page
// through resources/read instead of tool calls. Resource reads count
// against the same limit and are refused with its message.
func TestResourceReadsCountAgainstTheRateLimit(t *testing.T) {
	p, addr := startDaemonWith(t, func(c *Config) {
		if err := os.MkdirAll(c.Paths.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.Paths.SettingsFile(), []byte(`{"remote": {"hosts": ["tether.example.org"], "callsPerMinute": 1}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	issued, err := localclient.New(p).AddToken(context.Background(), "agent")
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewStreamableHttpClient("http://"+addr+PathMCP,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + issued.Secret}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := mcpclient.Initialize(ctx, c, "reader"); err != nil {
		t.Fatal(err)
	}
	if _, isErr, err := mcpclient.Call(ctx, c, "browser_tabs", map[string]any{"action": "list"}, nil); err != nil || isErr {
		t.Fatalf("first call: %v %v", isErr, err)
	}
	req := mcpgo.ReadResourceRequest{}
	req.Params.URI = tmcp.ResourceSnapshot
	_, err = c.ReadResource(ctx, req)
	if err == nil || !strings.Contains(err.Error(), "token agent is over its limit of 1 calls per minute") {
		t.Fatalf("a resource read past the limit: %v; want the limit's refusal", err)
	}
}

// Attack: a program relays an extension's handshake between the local
// endpoint (127.0.0.1:PORT) and remote mode's proxy (the public Host), or
// between Tether and another port. Every proof covers the endpoint the
// extension dialled, as the daemon sees it (its port, or the proxied
// Host): a hello proved for one endpoint is refused (unauthorized) on the
// other, and the daemon's proofs on one do not hold for the other. The
// challenge's pairing proof is keyed on the config dir's pairing key, the
// one Tether writes into the extension folders.
func TestExtensionProofsAreBoundToTheEndpoint(t *testing.T) {
	p, addr := startDaemonWith(t, func(c *Config) {
		c.AutoApproveProfiles = true
		remoteSettings(t, c)
	})
	url := "ws://" + addr + PathExtension
	_, portText, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portText)
	local, public := protocol.LocalEndpoint(port), protocol.RemoteEndpoint("tether.example.org")
	origin := "chrome-extension://" + broker.DefaultExtensionID
	proxied := http.Header{"Origin": {origin}, "Host": {"tether.example.org"}, "X-Forwarded-Proto": {"https"}, "X-Forwarded-For": {"203.0.113.9"}}
	keyHex, err := p.LoadOrCreatePairingKey()
	if err != nil {
		t.Fatal(err)
	}
	pairingKey, _ := protocol.ParseKey(keyHex)

	const id = "e4d0b11d-0000-4000-8000-000000000001"
	e, err := fakeext.Dial(url, protocol.Hello{ProfileID: id, Label: "Work"}, "")
	if err != nil || e.Secret == "" {
		t.Fatalf("pairing locally: %v %+v", err, e)
	}
	e.Close()
	secret := e.Secret

	// say opens a socket (through the proxy or not), checks what the
	// daemon proved and for which endpoint, and says hello with a proof
	// over proofEndpoint; it returns the first answer's type.
	say := func(through http.Header, daemonEndpoint, proofEndpoint string) protocol.FrameType {
		t.Helper()
		s, _, err := exthandshake.Open(nil, url, through, id)
		if err != nil {
			t.Fatal(err)
		}
		defer s.WS.Close()
		ch := s.Challenge
		for _, ep := range []string{local, public} {
			s.Endpoint = ep
			if got, want := s.DaemonProvedProfile(secret), ep == daemonEndpoint; got != want {
				t.Errorf("the daemon's profile proof holds for endpoint %s: %v, want %v", ep, got, want)
			}
			if got, want := ch.PairingProof == protocol.DaemonProof(pairingKey, ep, id, s.Nonce, ch.Nonce), ep == daemonEndpoint; got != want {
				t.Errorf("the daemon's pairing proof holds for endpoint %s: %v, want %v", ep, got, want)
			}
		}
		s.Endpoint = proofEndpoint
		if err := s.WS.WriteJSON(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: id, Label: "Work",
			Proof: s.Proof(id, secret), Tabs: []protocol.TabInfo{}}); err != nil {
			t.Fatal(err)
		}
		_ = s.WS.SetReadDeadline(time.Now().Add(10 * time.Second))
		var r protocol.Refused
		if err := s.WS.ReadJSON(&r); err != nil {
			t.Fatal(err)
		}
		if r.Type == protocol.TypeRefused && r.Code != protocol.CodeUnauthorized {
			t.Errorf("refused %+v, want unauthorized", r)
		}
		return r.Type
	}
	localHeader := http.Header{"Origin": {origin}}
	for _, tc := range []struct {
		name           string
		through        http.Header
		daemonEndpoint string
		proofEndpoint  string
		want           protocol.FrameType
	}{
		{"proof for the public Host, sent locally", localHeader, local, public, protocol.TypeRefused},
		{"proof for the local port, sent through the proxy", proxied, public, local, protocol.TypeRefused},
		{"proof for another local port", localHeader, local, protocol.LocalEndpoint(port + 1), protocol.TypeRefused},
		{"proof for the local port, sent locally", localHeader, local, local, protocol.TypeHelloAck},
		{"proof for the public Host, sent through the proxy", proxied, public, public, protocol.TypeHelloAck},
	} {
		if got := say(tc.through, tc.daemonEndpoint, tc.proofEndpoint); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}

// remoteSettings writes a settings.json turning remote mode on for the
// host tether.example.org into c's config dir, for startDaemonWith.
func remoteSettings(t *testing.T, c *Config) {
	t.Helper()
	if err := os.MkdirAll(c.Paths.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.Paths.SettingsFile(), []byte(`{"remote": {"hosts": ["tether.example.org"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
}
