package mcp

import (
	"context"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/protocol"
)

func TestResources(t *testing.T) {
	page := protocol.PageResult{Tab: 2, URL: "https://example.com/", Title: "Example", Snapshot: `- heading "Hi" [level=1]`}
	fb := &fakeBrowser{results: map[protocol.Method]any{
		protocol.MethodSnapshot: page,
		protocol.MethodRead:     protocol.ReadResult{Tab: 2, URL: "https://example.com/", Title: "Example", HTML: "<html><body><h1>Hi</h1><p>Some <a href='/x'>text</a>.</p></body></html>"},
	}}
	c := newClient(t, fb)
	list, err := c.ListResources(context.Background(), mcpgo.ListResourcesRequest{})
	if err != nil || len(list.Resources) != 3 {
		t.Fatalf("resources: %v %+v", err, list)
	}
	for uri, want := range map[string]string{
		ResourcePage:     `"url":"https://example.com/"`,
		ResourceSnapshot: `heading "Hi"`,
		ResourceMarkdown: "[text](https://example.com/x)",
	} {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		text := res.Contents[0].(mcpgo.TextResourceContents).Text
		if !strings.Contains(text, want) {
			t.Errorf("%s: %q lacks %q", uri, text, want)
		}
	}
}

// refusingGuard refuses every call (as the pause switch, a site rule or a
// named token over its rate limit does) and records what it was asked.
type refusingGuard struct {
	mu    sync.Mutex
	calls []ToolCall
}

func (g *refusingGuard) Check(_ context.Context, call ToolCall) (Verdict, error) {
	g.mu.Lock()
	g.calls = append(g.calls, call)
	g.mu.Unlock()
	return Verdict{Outcome: "paused", Message: call.Tool + " refused: Tether is paused"}, nil
}

// Attack: a client (e.g. a remote one with a named token) reads the page
// through resources/read instead of a tool call, to get past the pause
// switch, the site policy, its rate limit and the timeline. Each resource
// read is judged by the Guard as its tool (browser_snapshot, browser_read)
// and a refused one never reaches the browser.
func TestResourceReadsGoThroughTheGuard(t *testing.T) {
	fb := &fakeBrowser{results: map[protocol.Method]any{
		protocol.MethodSnapshot: protocol.PageResult{Tab: 2, URL: "https://example.com/", Title: "Example"},
		protocol.MethodRead:     protocol.ReadResult{Tab: 2, URL: "https://example.com/", HTML: "<p>secret</p>"},
	}}
	g := &refusingGuard{}
	c := newClientWith(t, fb, Config{Version: "test", Fence: "FENCE", Guard: g})
	want := map[string]string{ResourcePage: "browser_snapshot", ResourceSnapshot: "browser_snapshot", ResourceMarkdown: "browser_read"}
	for _, uri := range []string{ResourcePage, ResourceSnapshot, ResourceMarkdown} {
		req := mcpgo.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(context.Background(), req)
		if err == nil {
			t.Errorf("%s: read while the guard refuses: %+v", uri, res)
		} else if !strings.Contains(err.Error(), "refused: Tether is paused") {
			t.Errorf("%s: error %q does not give the guard's reason", uri, err)
		}
	}
	fb.mu.Lock()
	if len(fb.calls) != 0 {
		t.Errorf("refused resource reads reached the browser: %+v", fb.calls)
	}
	fb.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.calls) != 3 {
		t.Fatalf("the guard judged %d resource reads, want 3", len(g.calls))
	}
	for i, uri := range []string{ResourcePage, ResourceSnapshot, ResourceMarkdown} {
		if g.calls[i].Tool != want[uri] {
			t.Errorf("%s judged as %q, want %q", uri, g.calls[i].Tool, want[uri])
		}
	}
}
