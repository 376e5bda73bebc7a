package mcp

import (
	"context"
	"strings"
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
