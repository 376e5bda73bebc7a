//go:build !windows

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/mcpclient"
)

// startRemote starts `tether serve` in remote mode for RemoteHost (its
// settings.json's remote block is remote, JSON) behind real Caddy with
// `tls internal`, as docs/remote.md sets it up.
func startRemote(t *testing.T, remote string, args ...string) (*Daemon, *Caddy) {
	t.Helper()
	bin := Binary(t)
	dir := filepath.Join(t.TempDir(), "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"remote": `+remote+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := StartDaemonAt(t, bin, dir, 0, args...)
	return d, StartCaddy(t, d.Record.Port)
}

// get sends a GET through c with auth (a bearer token, or "") and returns
// the status and body.
func get(t *testing.T, c *Caddy, path, auth string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.URL(path), nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRemoteProxyRefusals: through real Caddy, /health answers, and the
// local API (even with the control token) and /mcp with the local MCP
// token are refused, each with a message that says what to do.
func TestRemoteProxyRefusals(t *testing.T) {
	parallel(t)
	RequireCaddy(t)
	d, c := startRemote(t, `{"hosts": ["`+RemoteHost+`"]}`)
	// Caddy's root goes into an NSS database as Chromium on Linux reads it.
	home := t.TempDir()
	c.ImportRoot(t, home)
	if out, err := exec.Command("certutil", "-d", "sql:"+filepath.Join(home, ".pki", "nssdb"), "-L").CombinedOutput(); err != nil || !strings.Contains(string(out), "Caddy test root") || !strings.Contains(string(out), "C,,") {
		t.Errorf("certutil -L after ImportRoot: %v\n%s", err, out)
	}
	code, body := get(t, c, "/health", "")
	var h struct{ Name string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &h) != nil || h.Name != "tether" {
		t.Fatalf("GET /health through caddy: %d %s", code, body)
	}
	// Without a token, the internet learns only that Tether answers.
	for _, field := range []string{"version", "uptimeSeconds", "profiles"} {
		if strings.Contains(body, `"`+field+`"`) {
			t.Errorf("GET /health through caddy tells %s: %s", field, body)
		}
	}
	ctl, err := d.Paths.ReadControlToken()
	if err != nil {
		t.Fatal(err)
	}
	code, body = get(t, c, apitype.PathState, ctl)
	if code != http.StatusForbidden || !strings.Contains(body, "the local API is never served through a proxy") {
		t.Errorf("local API through caddy: %d %s; want 403", code, body)
	}
	code, body = get(t, c, "/mcp", d.Token)
	if code != http.StatusForbidden || !strings.Contains(body, "tether token add NAME") {
		t.Errorf("/mcp with the local token through caddy: %d %s; want 403 naming tether token add", code, body)
	}
	// The extension's socket goes through the proxy, behind the same
	// exact-origin gate.
	dialer := websocket.Dialer{NetDialContext: c.DialContext, TLSClientConfig: &tls.Config{RootCAs: c.Roots}, Subprotocols: []string{protocol.Subprotocol}}
	for _, tc := range []struct {
		origin string
		want   int
	}{
		{"chrome-extension://" + broker.DefaultExtensionID, http.StatusSwitchingProtocols},
		{"https://evil.example", http.StatusForbidden},
	} {
		ws, resp, err := dialer.Dial(c.WSURL("/extension"), http.Header{"Origin": {tc.origin}})
		if ws != nil {
			ws.Close()
		}
		if resp == nil || resp.StatusCode != tc.want {
			t.Errorf("wss /extension through caddy with Origin %s: %v %v; want %d", tc.origin, resp, err, tc.want)
		}
	}
	// A link fault and its end: Caddy stopped, then started again on the
	// same port with the same CA (the clients' trust still holds).
	root, _ := os.ReadFile(c.RootCert)
	c.Stop()
	if _, err := c.HTTPClient().Get(c.URL("/health")); err == nil {
		t.Error("/health answered with Caddy stopped")
	}
	c.Restart(t)
	if again, _ := os.ReadFile(c.RootCert); string(again) != string(root) {
		t.Error("Caddy's root changed across a restart")
	}
	if code, body := get(t, c, "/health", ""); code != http.StatusOK {
		t.Errorf("GET /health after Caddy's restart: %d %s", code, body)
	}
}

// remoteMCP is an MCP client of the SDK over streamable HTTP to
// https://tether.test:<port>/mcp through c, with bearer token secret.
func remoteMCP(t *testing.T, ctx context.Context, c *Caddy, secret string) *client.Client {
	t.Helper()
	mc, err := tryRemoteMCP(ctx, c, secret)
	if err != nil {
		t.Fatalf("initialize through caddy: %v", err)
	}
	t.Cleanup(func() { mc.Close() })
	return mc
}

// tryRemoteMCP is remoteMCP returning its error; the caller closes the
// client.
func tryRemoteMCP(ctx context.Context, c *Caddy, secret string) (*client.Client, error) {
	mc, err := client.NewStreamableHttpClient(c.URL("/mcp"),
		transport.WithHTTPBasicClient(c.HTTPClient()),
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + secret}))
	if err != nil {
		return nil, err
	}
	if err := mc.Start(ctx); err != nil {
		return nil, err
	}
	if _, err := mcpclient.InitializeVersion(ctx, mc, "remote-agent", mcp.ProtocolVersion20251125); err != nil {
		mc.Close()
		return nil, err
	}
	return mc, nil
}

// callText calls tool with args and returns its text and whether it was
// a tool error.
func callText(t *testing.T, ctx context.Context, mc *client.Client, tool string, args map[string]any) (string, bool, error) {
	t.Helper()
	res, err := mc.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError, nil
}

// TestRemoteNamedToken: an MCP client of the SDK on "another machine"
// reaches `tether serve` in remote mode through real Caddy with a named
// token: it lists the tools, a call gets its answer (no browser is
// connected: the tool says so), the timeline shows the token's name, a
// call over the token's rate limit is refused naming the limit, and once
// the token is revoked the next request gets 401.
func TestRemoteNamedToken(t *testing.T) {
	parallel(t)
	RequireCaddy(t)
	d, c := startRemote(t, `{"hosts": ["`+RemoteHost+`"], "callsPerMinute": 4}`)
	ctx := Context(t, 2*time.Minute)

	cmd := exec.Command(d.Bin, "token", "add", "ci-agent")
	cmd.Env = d.Env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tether token add: %v", err)
	}
	secret := strings.TrimSpace(string(out))
	if !strings.HasPrefix(secret, "tt_") || strings.Contains(secret, "\n") {
		t.Fatalf("tether token add printed %q on stdout; want the token alone", out)
	}
	if b, _ := os.ReadFile(filepath.Join(d.Paths.Dir, "tokens.json")); strings.Contains(string(b), secret) {
		t.Fatal("tokens.json holds the token itself")
	}

	mc := remoteMCP(t, ctx, c, secret)
	tools, err := mc.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) < 5 {
		t.Fatalf("tools/list through caddy: %v (%d tools)", err, len(tools.Tools))
	}
	// The limit is 4 a minute, with a burst of 4: initialize took one
	// (each starts a session), 3 tool calls are left.
	for i := range 3 {
		text, isErr, err := callText(t, ctx, mc, "browser_tabs", map[string]any{"action": "list"})
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		if strings.Contains(text, "over its limit") {
			t.Fatalf("call %d of 3 refused: %s", i+1, text)
		}
		if i == 0 {
			t.Logf("browser_tabs list with no browser (tool error %v): %s", isErr, text)
			if !strings.Contains(text, "No browser is connected") {
				t.Errorf("browser_tabs list with no browser: %q; want it to say no browser is connected", text)
			}
		}
	}
	text, isErr, err := callText(t, ctx, mc, "browser_tabs", map[string]any{"action": "list"})
	if err != nil || !isErr || !strings.Contains(text, "token ci-agent is over its limit of 4 calls per minute; wait ") {
		t.Fatalf("the 4th call in a minute: %v, error %v, %q; want the limit named", err, isErr, text)
	}
	// A new session is over the limit too.
	if again, err := tryRemoteMCP(ctx, c, secret); err == nil || !strings.Contains(err.Error(), "over its limit") {
		if again != nil {
			again.Close()
		}
		t.Fatalf("initialize over the limit: %v; want it refused naming the limit", err)
	}

	tl := tetherCLI(t, d, "timeline", "--limit", "10")
	if !strings.Contains(tl, "remote-agent [token ci-agent]") || !strings.Contains(tl, "over its limit") {
		t.Errorf("tether timeline does not show the token's name and the refusal:\n%s", tl)
	}
	if l := tetherCLI(t, d, "token", "list"); !strings.Contains(l, "ci-agent") || strings.Contains(l, "never") {
		t.Errorf("tether token list after use:\n%s", l)
	}

	if out := tetherCLI(t, d, "token", "revoke", "ci-agent"); !strings.Contains(out, `revoked "ci-agent"`) {
		t.Fatalf("tether token revoke: %s", out)
	}
	_, err = mc.ListTools(ctx, mcp.ListToolsRequest{})
	if !errors.Is(err, transport.ErrAuthorizationRequired) {
		t.Fatalf("a request after revocation: %v; want the SDK's 401 error", err)
	}
	// The same through plain HTTP, to see the status and the message.
	req, _ := http.NewRequest(http.MethodPost, c.URL("/mcp"), strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.HTTPClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(string(b), "unknown or was revoked") {
		t.Errorf("revoked token: %d %s; want 401 saying it was revoked", resp.StatusCode, b)
	}
}
