package daemon

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/localapi"
)

// The local API's routes, every one of them as the daemon mounts it,
// refuse the MCP token (an MCP client holds it) and /mcp refuses the
// control token; Host and Origin checks hold on every route (issue 12,
// "Control actions").
func TestControlRoutesTakeOnlyTheControlToken(t *testing.T) {
	var routes []localapi.Route
	p, addr := startDaemonWith(t, func(c *Config) {
		c.Services = func(s Services) { routes = s.API.Routes() }
	})
	mcpTok, err := p.ReadToken()
	if err != nil {
		t.Fatal(err)
	}
	ctlTok, err := p.ReadControlToken()
	if err != nil {
		t.Fatal(err)
	}
	if mcpTok == ctlTok {
		t.Fatal("the control token is the MCP token")
	}
	do := func(method, path, auth, host, origin string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(method, "http://"+addr+path, strings.NewReader(`{"name":"x","paused":false}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if len(routes) == 0 {
		t.Fatal("the daemon's local API lists no routes")
	}
	for _, r := range routes {
		if code, body := do(r.Method, r.Path, mcpTok, "", ""); code != http.StatusForbidden || !strings.Contains(body, "control-token") {
			t.Errorf("%s %s with the MCP token: %d %q; want 403 naming the control token", r.Method, r.Path, code, body)
		}
		if code, _ := do(r.Method, r.Path, "", "", ""); code != http.StatusUnauthorized {
			t.Errorf("%s %s without a token: %d; want 401", r.Method, r.Path, code)
		}
		if code, _ := do(r.Method, r.Path, ctlTok+"0", "", ""); code != http.StatusUnauthorized {
			t.Errorf("%s %s with a wrong token: %d; want 401", r.Method, r.Path, code)
		}
		if code, _ := do(r.Method, r.Path, ctlTok, "", "https://evil.example"); code != http.StatusForbidden {
			t.Errorf("%s %s with the control token from a web page: %d; want 403", r.Method, r.Path, code)
		}
		if code, _ := do(r.Method, r.Path, ctlTok, "evil.example", ""); code != http.StatusMisdirectedRequest {
			t.Errorf("%s %s with the control token and a rebinding Host: %d; want 421", r.Method, r.Path, code)
		}
	}
	if code, body := do("GET", apitype.PathPause, ctlTok, "", ""); code != http.StatusOK {
		t.Errorf("GET %s with the control token: %d %q; want 200", apitype.PathPause, code, body)
	}
	for _, old := range []string{"/control/profiles", "/control/pause", "/control/window", "/shutdown"} {
		if code, _ := do("POST", old, ctlTok, "", ""); code != http.StatusNotFound {
			t.Errorf("POST %s (removed) with the control token: %d; want 404", old, code)
		}
	}
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(auth string) int {
		req, _ := http.NewRequest("POST", "http://"+addr+PathMCP, strings.NewReader(init))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(ctlTok); code != http.StatusUnauthorized {
		t.Errorf("POST /mcp with the control token: %d; want 401", code)
	}
	if code := post(mcpTok); code != http.StatusOK {
		t.Errorf("POST /mcp with the MCP token: %d; want 200", code)
	}
}
