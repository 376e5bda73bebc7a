//go:build !windows

package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-browser/tether/apitype"
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
	RequireCaddy(t)
	d, c := startRemote(t, `{"hosts": ["`+RemoteHost+`"]}`)
	code, body := get(t, c, "/health", "")
	var h struct{ Name string }
	if code != http.StatusOK || json.Unmarshal([]byte(body), &h) != nil || h.Name != "tether" {
		t.Fatalf("GET /health through caddy: %d %s", code, body)
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
}
