//go:build !windows

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/test/mcpclient"
)

// initClient initializes an MCP client as an AI app would.
func initClient(t *testing.T, ctx context.Context, c *client.Client) {
	t.Helper()
	initClientAs(t, ctx, c, "tether-e2e")
}

// initClientAs initializes an MCP client that calls itself app (clientInfo.name).
func initClientAs(t *testing.T, ctx context.Context, c *client.Client, app string) {
	t.Helper()
	res, err := mcpclient.Initialize(ctx, c, app)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.ServerInfo.Name != "tether" {
		t.Fatalf("server name %q, want tether", res.ServerInfo.Name)
	}
}

func stdioClient(t *testing.T, ctx context.Context, d *Daemon) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(d.Bin, []string{config.EnvConfigDir + "=" + d.Paths.Dir}, "mcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// NewStdioMCPClient starts only the transport: the client's Start hooks
	// its OnNotification handlers to it (mcp-go v1.2.1, client.go), without
	// which notifications the bridge relays (notifications/progress) are
	// read and dropped. The transport's own Start is a no-op the second time.
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	initClient(t, ctx, c)
	return c
}

func httpClient(t *testing.T, ctx context.Context, d *Daemon, token string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(d.Record.URL()+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initClient(t, ctx, c)
	return c
}

// call runs a tool and returns its text and whether it is an error result.
func call(t *testing.T, ctx context.Context, c *client.Client, tool string, args map[string]any) (string, bool) {
	t.Helper()
	text, isErr, err := mcpclient.Call(ctx, c, tool, args, nil)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return text, isErr
}

func mustCall(t *testing.T, ctx context.Context, c *client.Client, tool string, args map[string]any) string {
	t.Helper()
	text, isErr := call(t, ctx, c, tool, args)
	if isErr {
		t.Fatalf("%s(%v) failed: %s", tool, args, text)
	}
	return text
}

// ref finds the ref of the snapshot line with this role and name.
func ref(t *testing.T, snapshot, role, name string) string {
	t.Helper()
	re := regexp.MustCompile(`- ` + regexp.QuoteMeta(role) + ` "` + regexp.QuoteMeta(name) + `"[^\n]*\[ref=([^\]]+)\]`)
	m := re.FindStringSubmatch(snapshot)
	if m == nil {
		t.Fatalf("no %s %q with a ref in snapshot:\n%s", role, name, snapshot)
	}
	return m[1]
}

// greeterFlow is the acceptance flow: navigate → snapshot → type into a
// React-style controlled input → click → the page's own handler changes a
// status text → the next snapshot shows it; then a stale ref is refused.
func greeterFlow(t *testing.T, ctx context.Context, c *client.Client, pageURL string) {
	snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": pageURL})
	for _, want := range []string{"Title: Greeter", `heading "Greeter" [level=1]`, "Waiting", "untrusted"} {
		if !strings.Contains(snap, want) {
			t.Fatalf("navigate result lacks %q:\n%s", want, snap)
		}
	}
	if strings.Contains(snap, "Hidden button") {
		t.Fatalf("snapshot shows a hidden element:\n%s", snap)
	}
	snap = mustCall(t, ctx, c, "browser_snapshot", nil)
	t.Logf("snapshot:\n%s", snap)
	name := ref(t, snap, "textbox", "Your name")
	greet := ref(t, snap, "button", "Greet")

	typed := mustCall(t, ctx, c, "browser_type", map[string]any{"ref": name, "text": "Ada Lovelace"})
	if !strings.Contains(typed, "Ada Lovelace") {
		t.Fatalf("type result does not show the new value:\n%s", typed)
	}
	if ref(t, typed, "textbox", "Your name") != name {
		t.Fatalf("the textbox's ref changed after typing:\n%s", typed)
	}
	clicked := mustCall(t, ctx, c, "browser_click", map[string]any{"ref": greet})
	if !strings.Contains(clicked, "Hello, Ada Lovelace!") {
		t.Fatalf("click result does not show the page handler's status text (was typing seen by the controlled input?):\n%s", clicked)
	}
	snap = mustCall(t, ctx, c, "browser_snapshot", nil)
	if !strings.Contains(snap, "Hello, Ada Lovelace!") {
		t.Fatalf("next snapshot lacks the status text:\n%s", snap)
	}

	// The page re-renders the Greet button: its old ref must fail, not act on
	// the new button.
	mustCall(t, ctx, c, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Re-render")})
	text, isErr := call(t, ctx, c, "browser_click", map[string]any{"ref": greet})
	if !isErr || !strings.Contains(text, "stale_ref") || !strings.Contains(text, "snapshot") {
		t.Fatalf("click on a re-rendered element's ref: got (isError=%v) %s; want a stale_ref error telling to snapshot again", isErr, text)
	}
	snap = mustCall(t, ctx, c, "browser_snapshot", nil)
	if ref(t, snap, "button", "Greet") == greet {
		t.Fatalf("the new Greet button got the removed button's ref %s", greet)
	}

	tabs := mustCall(t, ctx, c, "browser_tabs", nil)
	if !strings.Contains(tabs, pageURL) || !regexp.MustCompile(`\[\d+\]`).MatchString(tabs) {
		t.Fatalf("browser_tabs does not list the tab:\n%s", tabs)
	}
	// The daemon pinged the profile's socket at hello; Chromium's pong
	// gave the link's round trip (docs/remote.md, "Latency").
	if !regexp.MustCompile(`, connected, link round trip \d+ ms`).MatchString(tabs) {
		t.Errorf("browser_tabs does not show the profile's round trip:\n%s", tabs)
	}
}

func TestEndToEnd(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	bin := Binary(t)
	d := StartDaemon(t, bin, "--auto-approve-profiles")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	StartBrowser(t, d)
	ctx := Context(t, 5*time.Minute)

	t.Run("stdio", func(t *testing.T) {
		c := stdioClient(t, ctx, d)
		greeterFlow(t, ctx, c, fixtures.URL+"/form.html")
	})

	t.Run("streamable HTTP", func(t *testing.T) {
		c := httpClient(t, ctx, d, d.Token)
		greeterFlow(t, ctx, c, fixtures.URL+"/form.html?over=http")
	})

	t.Run("MCP endpoint guards", func(t *testing.T) {
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
		for _, tc := range []struct {
			name   string
			header map[string]string
			host   string
			want   int
		}{
			{"no token", nil, "", http.StatusUnauthorized},
			{"wrong token", map[string]string{"Authorization": "Bearer " + strings.Repeat("0", 64)}, "", http.StatusUnauthorized},
			{"browser origin", map[string]string{"Authorization": "Bearer " + d.Token, "Origin": "http://evil.example"}, "", http.StatusForbidden},
			{"rebound host", map[string]string{"Authorization": "Bearer " + d.Token}, "evil.example:80", http.StatusForbidden},
			{"right token", map[string]string{"Authorization": "Bearer " + d.Token}, "", http.StatusOK},
		} {
			req, _ := http.NewRequest(http.MethodPost, d.Record.URL()+"/mcp", strings.NewReader(init))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("%s: status %d, want %d (%s)", tc.name, resp.StatusCode, tc.want, body)
			}
			if tc.want != http.StatusOK && bytes.Contains(body, []byte(d.Token)) {
				t.Errorf("%s: the refusal leaks the token", tc.name)
			}
		}
		resp, err := http.Get(d.Record.URL() + "/health")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"version"`)) || bytes.Contains(body, []byte(d.Token)) {
			t.Errorf("/health: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("extension socket refuses a web origin", func(t *testing.T) {
		from := d.Log.Len()
		h := http.Header{"Origin": {"http://evil.example"}}
		ws, resp, err := websocket.DefaultDialer.Dial("ws://127.0.0.1:"+fmt.Sprint(d.Record.Port)+"/extension", h)
		if err == nil {
			ws.Close()
			t.Fatal("handshake with Origin http://evil.example accepted")
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("got %v, want 403", resp)
		}
		if _, _, err := d.Log.WaitFor(from, 10*time.Second, "extension socket refused", "origin=http://evil.example"); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a page in the browser cannot open the extension socket", func(t *testing.T) {
		c := stdioClient(t, ctx, d)
		from := d.Log.Len()
		evil := fmt.Sprintf("%s/evil.html?port=%d", fixtures.URL, d.Record.Port)
		mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": evil})
		// The log line names the page's own origin: that proves the origin
		// gate refused it, not a wrong path or a dead port.
		line, _, err := d.Log.WaitFor(from, 20*time.Second, "extension socket refused", "origin="+fixtures.URL)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("daemon: %s", line)
		snap := mustCall(t, ctx, c, "browser_snapshot", nil)
		if strings.Contains(snap, "OPENED") {
			t.Fatalf("the page opened the extension socket:\n%s", snap)
		}
	})
}
