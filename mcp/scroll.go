package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
)

// ScrollArgs are browser_scroll's arguments.
type ScrollArgs struct {
	Target
	Ref string `json:"ref,omitempty" jsonschema:"Container (default: page)"`
	To  string `json:"to,omitempty" jsonschema:"top, bottom, left, right, view (ref)"`
	DY  int    `json:"dy,omitempty" jsonschema:"Pixels down, negative up (dx: right)"`
	DX  int    `json:"dx,omitempty"`
}

func (h *handlers) scrollTool() Tool {
	return Tool{
		Def: mcpgo.NewTool("browser_scroll",
			mcpgo.WithDescription("Scroll the page or container ref by pixels or to an edge, or ref into view. Says what moved; returns the snapshot (untrusted)."),
			mcpgo.WithInputSchema[ScrollArgs](),
			mutating(false),
		),
		Class:   policy.Interact,
		handler: mcpgo.NewTypedToolHandler(h.scroll),
	}
}

func (h *handlers) scroll(ctx context.Context, _ mcpgo.CallToolRequest, args ScrollArgs) (*mcpgo.CallToolResult, error) {
	switch args.To {
	case "", "top", "bottom", "left", "right":
	case "view":
		if msg := needRef(args.Ref); msg != "" {
			return mcpgo.NewToolResultError("to view: " + msg), nil
		}
	default:
		return mcpgo.NewToolResultError(fmt.Sprintf("to %q is not top, bottom, left, right or view", args.To)), nil
	}
	if args.To == "" && args.DX == 0 && args.DY == 0 {
		return mcpgo.NewToolResultError("pass dy or dx (pixels; negative scrolls up or left), or to: top, bottom, left, right, or view with a ref"), nil
	}
	params := &protocol.ScrollParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(),
		Ref: args.Ref, To: args.To, DX: args.DX, DY: args.DY}
	var res protocol.PageResult
	ctx = withReached(ctx)
	if err := h.browser.Call(ctx, args.Profile, protocol.MethodScroll, params, &res, h.cfg.ActionTimeout); err != nil {
		return browserError("browser_scroll", err), nil
	}
	return mcpgo.NewToolResultText(h.resultText(ctx, args.Profile, protocol.MethodScroll, params, scrollLead(args, res.Tab, res.Scrolled), res)), nil
}

// scrollLead says what a scroll did: how far, where it is now, what
// appeared, and whether the tab was hidden (and so did not render).
func scrollLead(args ScrollArgs, tab int, r *protocol.ScrollReport) string {
	if r == nil {
		return "Scrolled."
	}
	what := "the page"
	if !r.Page {
		// The container ref names, or the nearest one around it.
		what = "the container at " + args.Ref
	}
	var sb strings.Builder
	switch {
	case args.To == "view":
		fmt.Fprintf(&sb, "Scrolled %s into view", args.Ref)
		if r.DX != 0 || r.DY != 0 {
			fmt.Fprintf(&sb, "; %s moved %s", what, moves(r.DX, r.DY))
		}
	case r.DX == 0 && r.DY == 0:
		fmt.Fprintf(&sb, "%s did not move (already at that edge, or nothing there scrolls)", upper(what))
	default:
		fmt.Fprintf(&sb, "Scrolled %s %s", what, moves(r.DX, r.DY))
	}
	fmt.Fprintf(&sb, ". Now at %s.", edges(r))
	switch {
	case r.Added > 0 || r.Grew > 0:
		fmt.Fprintf(&sb, " New content: %d element(s) appeared", r.Added)
		if r.Removed > 0 {
			fmt.Fprintf(&sb, ", %d went", r.Removed)
		}
		if r.Grew > 0 {
			fmt.Fprintf(&sb, "; it grew %d px", r.Grew)
		}
		sb.WriteString(".")
	case r.DX != 0 || r.DY != 0:
		sb.WriteString(" No new content appeared.")
	}
	if r.Hidden {
		sb.WriteString(fmt.Sprintf(" Tab %d is hidden (in the background or minimized), where Chrome draws nothing: content the page renders on an animation frame may be missing. To show it, call browser_tabs {action: \"select\", tab: %d}, then scroll again.", tab, tab))
	}
	return sb.String()
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// moves says "down 600 px", "up 40 px and right 10 px".
func moves(dx, dy int) string {
	var parts []string
	if dy > 0 {
		parts = append(parts, fmt.Sprintf("down %d px", dy))
	} else if dy < 0 {
		parts = append(parts, fmt.Sprintf("up %d px", -dy))
	}
	if dx > 0 {
		parts = append(parts, fmt.Sprintf("right %d px", dx))
	} else if dx < 0 {
		parts = append(parts, fmt.Sprintf("left %d px", -dx))
	}
	return strings.Join(parts, " and ")
}

// edges describes the scroll position: "top 600 of 4500 (the bottom)".
func edges(r *protocol.ScrollReport) string {
	s := fmt.Sprintf("top %d of %d px", r.Top, max(r.Height-r.ViewHeight, 0))
	switch {
	case r.Height <= r.ViewHeight+1:
		s += " (nothing to scroll vertically)"
	case r.Top <= 0:
		s += " (the top)"
	case r.Top+r.ViewHeight >= r.Height-1:
		s += " (the bottom)"
	}
	if r.Width > r.ViewWidth+1 {
		s += fmt.Sprintf(", left %d of %d px", r.Left, r.Width-r.ViewWidth)
	}
	return s
}
