package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

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
	return []mcpgo.ResourceContents{mcpgo.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: h.pageText("", res, 0)}}, nil
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

// resourceTools names, for each resource, the tool whose browser call its
// read makes: the read is judged and recorded as that tool (resourceGuard).
var resourceTools = map[string]string{
	ResourcePage:     "browser_snapshot",
	ResourceSnapshot: "browser_snapshot",
	ResourceMarkdown: "browser_read",
}

// resourceGuard runs every resources/read through what a tool call goes
// through (guardMiddleware): the tool being off (disabled), the Guard
// (pause switch, site policy, approvals, a named token's rate limit) and
// the Recorder (the timeline), as the tool of resourceTools with no
// arguments. Without it a client would read the user's page while Tether
// is paused, on a blocked site, past its rate limit and off the record. A
// refused read is a JSON-RPC error carrying the Guard's message; an
// unknown resource is refused.
func resourceGuard(disabled func(tool string) string, g Guard, r Recorder) server.ResourceHandlerMiddleware {
	return func(next server.ResourceHandlerFunc) server.ResourceHandlerFunc {
		return func(ctx context.Context, req mcpgo.ReadResourceRequest) ([]mcpgo.ResourceContents, error) {
			tool, ok := resourceTools[req.Params.URI]
			if !ok {
				return nil, fmt.Errorf("read %s refused: Tether does not know this resource (resources/list names them)", req.Params.URI)
			}
			caller := CallerOf(ctx)
			call := ToolCall{Tool: tool, Args: map[string]any{}, Client: caller.App, Session: caller.Session, MCPSession: caller.MCPSession,
				Token: TokenOf(ctx), Started: time.Now()}
			v := Verdict{Allow: true}
			finish := func(end CallEnd) {
				if r != nil {
					end.Duration = time.Since(call.Started)
					r.Finished(call, v, end)
				}
			}
			if msg := disabled(tool); msg != "" {
				finish(CallEnd{Outcome: "error", Error: msg})
				return nil, fmt.Errorf("read %s refused: %s", req.Params.URI, msg)
			}
			if g != nil {
				var err error
				if v, err = g.Check(ctx, call); err != nil {
					finish(CallEnd{Outcome: "error", Error: err.Error()})
					return nil, err
				}
			}
			if !v.Allow {
				finish(CallEnd{Outcome: v.Outcome})
				return nil, fmt.Errorf("read %s: %s", req.Params.URI, v.Message)
			}
			if r != nil {
				r.Started(call, v)
			}
			res, err := next(context.WithValue(ctx, verdictKey{}, v), req)
			end := CallEnd{Outcome: "ok"}
			if err != nil {
				end.Outcome, end.Error = "error", err.Error()
			}
			finish(end)
			return res, err
		}
	}
}
