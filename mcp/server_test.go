package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/mcpclient"
)

// fakeBrowser records calls and answers them from a map.
type fakeBrowser struct {
	mu       sync.Mutex
	calls    []fakeCall
	results  map[protocol.Method]any
	err      error
	profiles []Profile
}

func (f *fakeBrowser) Profiles(context.Context) []Profile { return f.profiles }

// resolve is the id of the profile a call naming name reaches, as the
// broker picks it: "" the first profile, else an exact id or slug, else a
// slug's prefix; "" when none of f.profiles matches.
func (f *fakeBrowser) resolve(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.profiles {
		if name == "" || name == p.ID || name == p.Slug {
			return p.ID
		}
	}
	for _, p := range f.profiles {
		if strings.HasPrefix(p.Slug, name) {
			return p.ID
		}
	}
	return ""
}

type fakeCall struct {
	profile string
	method  protocol.Method
	params  string
	timeout time.Duration
	key     string // the idempotency key the call's context carried
	idem    protocol.IdempotentCall
}

func (f *fakeBrowser) Call(ctx context.Context, profile string, method protocol.Method, params, result any, timeout time.Duration) error {
	p, _ := json.Marshal(params)
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{profile, method, string(p), timeout, protocol.IdempotentCallFrom(ctx).Key, protocol.IdempotentCallFrom(ctx)})
	f.mu.Unlock()
	if f.err != nil {
		return f.err
	}
	if id := f.resolve(profile); id != "" {
		ReportProfile(ctx, id)
	}
	raw, _ := json.Marshal(f.results[method])
	return json.Unmarshal(raw, result)
}

func newClient(t *testing.T, b Browser) *client.Client {
	t.Helper()
	return newClientWith(t, b, Config{Version: "test", Fence: "FENCE"})
}

func newClientWith(t *testing.T, b Browser, cfg Config) *client.Client {
	t.Helper()
	return newClientOf(t, NewServer(b, cfg))
}

// newClientOf is a new MCP session of srv's, over mcp-go's in-process
// client.
func newClientOf(t *testing.T, srv *server.MCPServer) *client.Client {
	t.Helper()
	return newClientAs(t, srv, "test", mcpgo.LATEST_PROTOCOL_VERSION)
}

// newClientAs is newClientOf for a client named app (clientInfo.name)
// asking for protocol version.
func newClientAs(t *testing.T, srv *server.MCPServer, app, version string) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpclient.InitializeVersion(ctx, c, app, version); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func callTool(t *testing.T, c *client.Client, name string, args map[string]any) (string, bool) {
	t.Helper()
	text, isErr, err := mcpclient.Call(context.Background(), c, name, args, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return text, isErr
}

// listTools is the default tools/list.
func listTools(t *testing.T) []mcpgo.Tool {
	t.Helper()
	return listToolsOf(t, newClient(t, &fakeBrowser{}))
}

// listAllTools is tools/list with every tool that is off by default
// enabled.
func listAllTools(t *testing.T) []mcpgo.Tool {
	t.Helper()
	var off []string
	for _, tl := range Tools() {
		if tl.OffByDefault {
			off = append(off, tl.Name())
		}
	}
	return listToolsOf(t, newClientWith(t, &fakeBrowser{}, Config{Version: "test", Fence: "FENCE", EnabledTools: off}))
}

func listToolsOf(t *testing.T, c *client.Client) []mcpgo.Tool {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tools
}

// TestToolSchemaSnapshots compares every tool's JSON, off-by-default ones
// included, with its golden file in __toolsnaps__. UPDATE_TOOLSNAPS=1
// rewrites them; a missing one fails, and so does one for no tool.
func TestToolSchemaSnapshots(t *testing.T) {
	update := os.Getenv("UPDATE_TOOLSNAPS") != ""
	tools := listAllTools(t)
	if len(tools) != len(Tools()) {
		t.Fatalf("tools/list with every tool enabled has %d tools, want %d", len(tools), len(Tools()))
	}
	snaps, _ := filepath.Glob(filepath.Join("__toolsnaps__", "*.snap"))
	for _, s := range snaps {
		name := strings.TrimSuffix(filepath.Base(s), ".snap")
		if !slices.ContainsFunc(tools, func(tl mcpgo.Tool) bool { return tl.Name == name }) {
			t.Errorf("%s is the snapshot of no tool; remove it", s)
		}
	}
	for _, tool := range tools {
		got, err := json.MarshalIndent(tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join("__toolsnaps__", tool.Name+".snap")
		if update {
			if err := os.MkdirAll("__toolsnaps__", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%s: no snapshot (%v); run UPDATE_TOOLSNAPS=1 go test ./mcp and review the diff", tool.Name, err)
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%s: schema changed; run UPDATE_TOOLSNAPS=1 go test ./mcp and review the diff\ngot:\n%s", tool.Name, got)
		}
	}
}

// TestEveryTool checks what every tool must have: a browser_ name, a short
// description that calls page content untrusted, explicit annotations, and
// an object input schema.
func TestEveryTool(t *testing.T) {
	tools := listTools(t)
	if len(tools) == 0 {
		t.Fatal("no tools")
	}
	for _, tool := range tools {
		if !strings.HasPrefix(tool.Name, "browser_") {
			t.Errorf("%s: tool names start with browser_", tool.Name)
		}
		if d := tool.Description; d == "" || len(d) > 300 || !strings.Contains(strings.ToLower(d), "untrusted") {
			t.Errorf("%s: description must be non-empty, under 300 characters and say page content is untrusted: %q", tool.Name, d)
		}
		a := tool.Annotations
		if a.ReadOnlyHint == nil && a.DestructiveHint == nil {
			t.Errorf("%s: set readOnlyHint or destructiveHint", tool.Name)
		}
		var schema struct {
			Type string `json:"type"`
		}
		raw, _ := json.Marshal(tool.InputSchema)
		if tool.RawInputSchema != nil {
			raw = tool.RawInputSchema
		}
		if err := json.Unmarshal(raw, &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: input schema type %q, want object", tool.Name, schema.Type)
		}
	}
}

// TestToolsListSize keeps tools/list small: every MCP request pays for it in
// context. It measures the "tools" array as the server writes it on the
// wire (a client that parses and re-encodes it adds empty "required" lists).
// Playwright MCP's is 20 296 characters.
func TestToolsListSize(t *testing.T) {
	resp := NewServer(&fakeBrowser{}, Config{Version: "test", Fence: "FENCE"}).HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	wire, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var msg struct {
		Result struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(wire, &msg); err != nil || len(msg.Result.Tools) == 0 {
		t.Fatalf("tools/list response %s: %v", wire, err)
	}
	raw := msg.Result.Tools
	if n := len(listTools(t)); !strings.Contains(string(raw), "browser_click") || n < 20 {
		t.Fatalf("tools/list on the wire lacks the tools (%d listed through a client): %.300s", n, raw)
	}
	if len(raw) > 10000 {
		t.Fatalf("tools/list is %d characters; keep it under 10 000", len(raw))
	}
	t.Logf("tools/list: %d characters", len(raw))
}

func TestBrowserErrorsBecomeToolErrors(t *testing.T) {
	fb := &fakeBrowser{err: errors.New("stale_ref: Element ref e9 is gone. Call browser_snapshot again.")}
	c := newClient(t, fb)
	text, isErr := callTool(t, c, "browser_click", map[string]any{"ref": "e9"})
	if !isErr || !strings.Contains(text, "browser_click failed") || !strings.Contains(text, "browser_snapshot again") {
		t.Fatalf("(isError=%v) %s", isErr, text)
	}
	text, isErr = callTool(t, c, "browser_click", map[string]any{})
	if !isErr || !strings.Contains(text, "ref") {
		t.Fatalf("missing ref: (isError=%v) %s", isErr, text)
	}
}

func TestFenceIsRandomPerServer(t *testing.T) {
	if a, b := newFence(), newFence(); a == b || len(a) < 20 {
		t.Fatalf("fences %q and %q", a, b)
	}
}

// TestRawSchemaSendsTheSameJSON: a tool registered with its schema as
// JSON (rawSchema, for mcp-go's per-call header check) is the same on
// the wire, byte for byte, as the tool it was made from.
func TestRawSchemaSendsTheSameJSON(t *testing.T) {
	for _, tool := range Tools() {
		want, err := json.Marshal(tool.Def)
		if err != nil {
			t.Fatal(err)
		}
		raw := rawSchema(tool.Def)
		if len(raw.RawInputSchema) == 0 || raw.InputSchema.Type != "" {
			t.Fatalf("%s: not registered with a raw schema", tool.Name())
		}
		got, err := json.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s on the wire:\n got %s\nwant %s", tool.Name(), got, want)
		}
	}
}
