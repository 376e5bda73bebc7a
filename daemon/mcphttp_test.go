package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/fakeext"
	"github.com/tether-browser/tether/test/mcpclient"
)

func TestMCPSessionsExpireAndEvictOldestIdle(t *testing.T) {
	m := newMCPSessions(time.Hour, 3, slog.New(slog.DiscardHandler))
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return now }
	var ended []string
	m.end = func(id string) { ended = append(ended, id) }
	a := m.Generate()
	now = now.Add(time.Minute)
	b := m.Generate()
	now = now.Add(time.Minute)
	c := m.Generate()
	now = now.Add(time.Minute)
	if _, err := m.Validate(a); err != nil { // a is now the most recently active
		t.Fatal(err)
	}
	if !m.begin(b) { // b is busy (a request or stream open)
		t.Fatal("begin b")
	}
	d := m.Generate() // over 3: c, idle longest, goes
	if m.count() != 3 || len(ended) != 1 || ended[0] != c {
		t.Fatalf("after the 4th session: %d live, ended %v; want c (%s) ended", m.count(), ended, c)
	}
	if _, err := m.Validate(c); err == nil {
		t.Fatal("an evicted session still validates")
	}
	now = now.Add(61 * time.Minute)
	if _, err := m.Validate(a); err == nil {
		t.Fatal("a session idle over an hour still validates")
	}
	if _, err := m.Validate(b); err != nil {
		t.Fatalf("a busy session expired: %v", err)
	}
	m.finish(b)
	if _, err := m.Validate(d); err == nil {
		t.Fatal("d, idle over an hour, still validates")
	}
	if _, err := m.Validate("mcp-session-bogus"); err == nil {
		t.Fatal("a bogus id validates")
	}
	m.Terminate(b)
	if _, err := m.Validate(b); err == nil || m.count() != 0 {
		t.Fatalf("after DELETE: %v, %d live", err, m.count())
	}
}

// When every session is busy, the least recently active one goes: the cap
// holds.
func TestMCPSessionsCapHoldsWhenAllBusy(t *testing.T) {
	m := newMCPSessions(time.Hour, 2, slog.New(slog.DiscardHandler))
	a, b := m.Generate(), m.Generate()
	m.begin(a)
	m.begin(b)
	m.Generate()
	if m.count() != 2 {
		t.Fatalf("%d live sessions, want 2", m.count())
	}
}

func TestRequestIDFromTheBodysStart(t *testing.T) {
	for head, want := range map[string]any{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"aaaa`:        "7",
		`{"jsonrpc":"2.0","method":"x","params":{"a":[1,2,{"b":"}"}]},"id":"s-1"}`: "s-1",
		`{"params":{"x":"aaaa`:            nil,
		`[{"id":1}]`:                      nil,
		`{"id":{"nested":1},"method":""}`: nil,
	} {
		got := requestID([]byte(head))
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("requestID(%s) = %v, want %v", head, got, want)
		}
	}
}

func startDaemonWith(t *testing.T, edit func(*Config)) (config.Paths, string) {
	t.Helper()
	p := config.Paths{Dir: filepath.Join(t.TempDir(), "cfg")}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	cfg := Config{Paths: p, Version: "test", Logger: slog.New(slog.DiscardHandler), Ready: func(a string) { addrc <- a }}
	edit(&cfg)
	go func() { done <- Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	select {
	case a := <-addrc:
		return p, a
	case err := <-done:
		t.Fatalf("daemon: %v", err)
	}
	return p, ""
}

// rawMCP sends one /mcp request and returns status, session header and body.
func rawMCP(t *testing.T, addr, token, method, session, body string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+PathMCP, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set(server.HeaderKeySessionID, session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s /mcp: %v", method, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get(server.HeaderKeySessionID), string(b)
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"limits","version":"1"}}}`
const listBody = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`

func TestMCPEndpointLimits(t *testing.T) {
	p, addr := startDaemonWith(t, func(c *Config) { c.MaxMCPSessions = 3; c.MCPSessionIdle = 300 * time.Millisecond })
	tok, err := p.ReadToken()
	if err != nil {
		t.Fatal(err)
	}

	// GET without a session, or with an unknown one, answers at once.
	start := time.Now()
	if code, _, body := rawMCP(t, addr, tok, "GET", "", ""); code != http.StatusBadRequest || !strings.Contains(body, "Mcp-Session-Id") {
		t.Errorf("GET /mcp without a session: %d %q; want 400 naming the header", code, body)
	}
	if code, _, body := rawMCP(t, addr, tok, "GET", "mcp-session-bogus", ""); code != http.StatusNotFound || !strings.Contains(body, "initialize again") {
		t.Errorf("GET /mcp with a bogus session: %d %q; want 404", code, body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the refused GETs took %s", d)
	}

	// A body over the limit gets 413 and a JSON-RPC error.
	big := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"browser_type","arguments":{"text":"` + strings.Repeat("a", MaxMCPBody) + `"}}}`
	code, _, body := rawMCP(t, addr, tok, "POST", "", big)
	var rpc struct {
		ID    any `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if code != http.StatusRequestEntityTooLarge || json.Unmarshal([]byte(body), &rpc) != nil || !strings.Contains(rpc.Error.Message, "4 MiB") || rpc.ID != float64(3) {
		t.Errorf("a %d-byte body: %d %q; want 413 with a JSON-RPC error naming 4 MiB", len(big), code, body)
	}

	// Sessions: the 4th initialize ends the one idle longest.
	var ids []string
	for i := 0; i < 4; i++ {
		code, id, body := rawMCP(t, addr, tok, "POST", "", initBody)
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize %d: %d %q (session %q)", i, code, body, id)
		}
		ids = append(ids, id)
	}
	if code, _, _ := rawMCP(t, addr, tok, "POST", ids[0], listBody); code != http.StatusNotFound {
		t.Errorf("the evicted oldest session: %d, want 404", code)
	}
	if code, _, body := rawMCP(t, addr, tok, "POST", ids[3], listBody); code != http.StatusOK {
		t.Errorf("the newest session: %d %q", code, body)
	}
	// DELETE ends a session.
	if code, _, _ := rawMCP(t, addr, tok, "DELETE", ids[2], ""); code != http.StatusOK {
		t.Errorf("DELETE: %d", code)
	}
	if code, _, _ := rawMCP(t, addr, tok, "POST", ids[2], listBody); code != http.StatusNotFound {
		t.Errorf("a deleted session: %d, want 404", code)
	}
	// Idle past the limit: 404.
	time.Sleep(400 * time.Millisecond)
	if code, _, _ := rawMCP(t, addr, tok, "POST", ids[3], listBody); code != http.StatusNotFound {
		t.Errorf("a session idle past its limit: %d, want 404", code)
	}
}

// An evicted session's state in mcp-go is dropped too (the memory the issue
// measured: 6 000 sessions held 389 MB).
func TestEvictedSessionsStateIsDropped(t *testing.T) {
	hooks := &server.Hooks{}
	var mu sync.Mutex
	live := map[string]bool{}
	hooks.AddOnRegisterSession(func(_ context.Context, s server.ClientSession) {
		mu.Lock()
		live[s.SessionID()] = true
		mu.Unlock()
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, s server.ClientSession) {
		mu.Lock()
		delete(live, s.SessionID())
		mu.Unlock()
	})
	sessions := newMCPSessions(time.Hour, 2, slog.New(slog.DiscardHandler))
	streamable := server.NewStreamableHTTPServer(server.NewMCPServer("t", "1", server.WithHooks(hooks)),
		server.WithEndpointPath(PathMCP), server.WithSessionIdManager(sessions))
	sessions.end = endVia(streamable)
	var ended []string
	sessions.ended = func(id string) {
		mu.Lock()
		ended = append(ended, id)
		mu.Unlock()
	}
	srv := httptest.NewServer(mcpLimits(sessions, streamable))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for i := 0; i < 5; i++ {
		if code, _, body := rawMCP(t, addr, "", "POST", "", initBody); code != http.StatusOK {
			t.Fatalf("initialize: %d %s", code, body)
		}
	}
	mu.Lock()
	n := len(live)
	mu.Unlock()
	if n != 2 || sessions.count() != 2 {
		t.Fatalf("after 5 sessions with a cap of 2: mcp-go holds %d, Tether tracks %d", n, sessions.count())
	}
	// The rest of Tether (the broker's sessions) hears of each ended one.
	mu.Lock()
	defer mu.Unlock()
	if len(ended) != 3 {
		t.Fatalf("ended sessions reported: %v, want the 3 evicted", ended)
	}
}

// An AI app counts as connected from its initialize, before any tool call,
// until its MCP session ends (here its DELETE); a DELETE naming no session
// ends nothing.
func TestAppListedFromInitializeToDelete(t *testing.T) {
	p, addr := startDaemonWith(t, func(*Config) {})
	tok, err := p.ReadToken()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.NewStreamableHttpClient("http://"+addr+PathMCP,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + tok}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := mcpclient.InitializeVersion(ctx, c, "cursor", mcp.ProtocolVersion20251125); err != nil {
		t.Fatal(err)
	}
	lc := localclient.New(p)
	apps := func() string {
		st, err := lc.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(st.Apps, ",")
	}
	if got := apps(); got != "cursor" {
		t.Fatalf("apps after cursor's initialize: %q", got)
	}
	rawMCP(t, addr, tok, "DELETE", "", "")
	if got := apps(); got != "cursor" {
		t.Fatalf("apps after a DELETE naming no session: %q", got)
	}
	sid := c.GetTransport().(*transport.StreamableHTTP).GetSessionId()
	if code, _, body := rawMCP(t, addr, tok, "DELETE", sid, ""); code != http.StatusOK {
		t.Fatalf("DELETE of cursor's session: %d %s", code, body)
	}
	if got := apps(); got != "" {
		t.Fatalf("apps after cursor's session ended: %q", got)
	}
}

// TestIdleStatelessAppLeaves: a client of MCP 2026-07-28 opens no MCP
// session, so none ends; once it has made no call for the idle time, the
// daemon's sweep ends its session all the same and it is no longer listed.
func TestIdleStatelessAppLeaves(t *testing.T) {
	p, addr := startDaemonWith(t, func(c *Config) {
		c.AutoApproveProfiles = true
		c.MCPSessionIdle = 300 * time.Millisecond
		c.SessionSweep = 50 * time.Millisecond
	})
	e, err := fakeext.Dial("ws://"+addr+PathExtension, protocol.Hello{ProfileID: "11111111-0000-4000-8000-000000000001", Label: "Work",
		Tabs: []protocol.TabInfo{{Tab: 1, Title: "t", URL: "https://example.com/", Current: true, Active: true}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	go e.Serve(echo(e.ProfileID))
	c := mcpClient(t, p, addr) // MCP 2026-07-28: no MCP session
	if text, isErr := toolText(t, c, "browser_snapshot", map[string]any{"tab": 1}); isErr {
		t.Fatal(text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lc := localclient.New(p)
	st, err := lc.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(st.Apps, ","); got != "integration" {
		t.Fatalf("apps after the call: %q, want integration", got)
	}
	for {
		st, err := lc.State(ctx)
		if err != nil {
			t.Fatalf("integration still listed as connected long after its idle time: %v", err)
		}
		if len(st.Apps) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
