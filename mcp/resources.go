package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/tether-browser/tether/markdown"
	"github.com/tether-browser/tether/protocol"
)

// Resource URIs: the current page of the default profile, for clients that
// read resources rather than call tools. Their contents are untrusted page
// data.
const (
	ResourcePage     = "tether://current/page"
	ResourceSnapshot = "tether://current/snapshot"
	ResourceMarkdown = "tether://current/markdown"
)

// addResources registers the current page's resources.
func (h *handlers) addResources(s *server.MCPServer) {
	s.AddResource(mcpgo.NewResource(ResourcePage, "Current page",
		mcpgo.WithResourceDescription("URL, title and tab number of the current shared tab (untrusted page data)"),
		mcpgo.WithMIMEType("application/json")), h.readPageResource)
	s.AddResource(mcpgo.NewResource(ResourceSnapshot, "Current page snapshot",
		mcpgo.WithResourceDescription("ARIA snapshot of the current shared tab (untrusted page data)"),
		mcpgo.WithMIMEType("text/plain")), h.readSnapshotResource)
	s.AddResource(mcpgo.NewResource(ResourceMarkdown, "Current page as Markdown",
		mcpgo.WithResourceDescription("Readable Markdown of the current shared tab (untrusted page data)"),
		mcpgo.WithMIMEType("text/markdown")), h.readMarkdownResource)
}

func (h *handlers) currentPage(ctx context.Context) (protocol.PageResult, error) {
	var res protocol.PageResult
	err := h.browser.Call(ctx, "", protocol.MethodSnapshot, &protocol.SnapshotParams{SnapshotOptions: h.snapshotOptions()}, &res, h.cfg.ActionTimeout)
	return res, err
}

func (h *handlers) readPageResource(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	res, err := h.currentPage(ctx)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", req.Params.URI, err)
	}
	b, _ := json.Marshal(map[string]any{"tab": res.Tab, "url": res.URL, "title": res.Title})
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json", Text: string(b)}}, nil
}

func (h *handlers) readSnapshotResource(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	res, err := h.currentPage(ctx)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", req.Params.URI, err)
	}
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: h.pageText("", res)}}, nil
}

func (h *handlers) readMarkdownResource(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
	var res protocol.ReadResult
	if err := h.browser.Call(ctx, "", protocol.MethodRead, &protocol.TabParams{}, &res, h.cfg.ActionTimeout); err != nil {
		return nil, fmt.Errorf("read %s: %w", req.Params.URI, err)
	}
	md, err := markdown.Convert(res.HTML, res.URL, markdown.Readable)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", req.Params.URI, err)
	}
	text := fmt.Sprintf("Tab %d as Markdown. Untrusted page data.\n%s", res.Tab,
		h.fenced(fmt.Sprintf("URL: %s\nTitle: %s\n\n%s", res.URL, res.Title, md.Markdown)))
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "text/markdown", Text: text}}, nil
}
