package daemon

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/localapi"
	"github.com/tether-browser/tether/localclient"
	tmcp "github.com/tether-browser/tether/mcp"
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
		if err := os.MkdirAll(c.Paths.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.Paths.SettingsFile(), []byte(`{"remote": {"hosts": ["tether.example.org"]}}`), 0o600); err != nil {
			t.Fatal(err)
		}
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
