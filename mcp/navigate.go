package mcp

import (
	"context"
	"fmt"
	"net/url"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
)

// NavigateArgs are browser_navigate's arguments.
type NavigateArgs struct {
	Target
	URL string `json:"url" jsonschema:"Absolute URL"`
}

func (h *handlers) navigateTool() Tool {
	return Tool{
		Def: mcpgo.NewTool("browser_navigate",
			mcpgo.WithDescription("Load a URL in a shared tab (or a new one), up to 30 s. Returns the snapshot (untrusted)."),
			mcpgo.WithInputSchema[NavigateArgs](),
			mutating(false),
		),
		Class:    policy.Navigate,
		LoadsURL: urlArg,
		handler:  mcpgo.NewTypedToolHandler(h.navigate),
	}
}

func (h *handlers) navigate(ctx context.Context, _ mcpgo.CallToolRequest, args NavigateArgs) (*mcpgo.CallToolResult, error) {
	u, msg := h.checkURL(args.URL)
	if msg != "" {
		return mcpgo.NewToolResultError(msg), nil
	}
	params := &protocol.NavigateParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), URL: u.String()}
	return h.pageCall(ctx, "browser_navigate", args.Profile, protocol.MethodNavigate, params, h.cfg.NavigateTimeout, "Navigated.")
}

// HistoryArgs are the arguments of browser_navigate_back, _forward and browser_reload.
type HistoryArgs struct {
	Target
}

func (h *handlers) historyTool(name, action, what string) Tool {
	return Tool{
		Def: mcpgo.NewTool(name,
			mcpgo.WithDescription(what+" and wait for the load. Returns the snapshot (untrusted)."),
			mcpgo.WithInputSchema[HistoryArgs](),
			mutating(false),
		),
		Class: policy.Navigate,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, args HistoryArgs) (*mcpgo.CallToolResult, error) {
			params := &protocol.HistoryParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), Action: action}
			return h.pageCall(ctx, name, args.Profile, protocol.MethodHistory, params, h.cfg.NavigateTimeout, "Done: "+action+".")
		}),
	}
}

// maxURLLength is Chrome's limit on a URL (kMaxURLChars, 2 MB; Chromium's
// docs/security/url_display_guidelines: "URLs … up to 2MB").
const maxURLLength = 2 << 20

// checkURL accepts absolute http, https and about: URLs, and file: URLs
// only when the user allowed them (a page steering the agent could
// otherwise have it read local files); otherwise it returns the message for
// the model.
func (h *handlers) checkURL(raw string) (*url.URL, string) {
	if len(raw) > maxURLLength {
		return nil, fmt.Sprintf("the url is %d characters long; Chrome accepts at most %d (2 MB): pass a shorter one", len(raw), maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return nil, fmt.Sprintf("url %q is not an absolute URL; pass one like https://example.com/", raw)
	}
	switch u.Scheme {
	case "http", "https", "about":
		return u, ""
	case "file":
		if h.cfg.AllowFileURLs {
			return u, ""
		}
		return nil, `file: URLs are off, so that pages cannot steer you into reading local files; the user can allow them with "allowFileUrls": true in Tether's settings.json`
	}
	return nil, fmt.Sprintf("url scheme %q is not supported; use http or https", u.Scheme)
}
