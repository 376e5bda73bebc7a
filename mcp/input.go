package mcp

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
)

// ClickArgs are browser_click's arguments.
type ClickArgs struct {
	Target
	Ref     string `json:"ref" jsonschema:"Element ref, e.g. e12"`
	Trusted bool   `json:"trusted,omitempty" jsonschema:"Trusted input (if enabled)"`
}

// TypeArgs are browser_type's arguments.
type TypeArgs struct {
	Target
	Ref    string `json:"ref" jsonschema:"Field"`
	Text   string `json:"text" jsonschema:"New value"`
	Submit bool   `json:"submit,omitempty" jsonschema:"Then press Enter"`
}

func actionTool(name, description string, schema mcpgo.ToolOption) mcpgo.Tool {
	return mcpgo.NewTool(name,
		mcpgo.WithDescription(description+" Returns the new snapshot (untrusted page data)."),
		schema,
		mutating(true),
	)
}

func needRef(ref string) string {
	if ref == "" {
		return "ref is required: take a browser_snapshot and pass an element's ref, e.g. e12"
	}
	return ""
}

func (h *handlers) clickTool() Tool {
	return Tool{
		Def:   actionTool("browser_click", "Click an element by its ref.", mcpgo.WithInputSchema[ClickArgs]()),
		Class: policy.Interact,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, args ClickArgs) (*mcpgo.CallToolResult, error) {
			if msg := needRef(args.Ref) + h.trustedRefused(args.Trusted); msg != "" {
				return mcpgo.NewToolResultError(msg), nil
			}
			params := &protocol.ClickParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), Ref: args.Ref, Trusted: args.Trusted}
			return h.pageCall(ctx, "browser_click", args.Profile, protocol.MethodClick, params, h.cfg.ActionTimeout, fmt.Sprintf("Clicked %s.", args.Ref))
		}),
	}
}

func (h *handlers) typeTool() Tool {
	return Tool{
		Def:      actionTool("browser_type", "Replace a field's value; a slider takes a number.", mcpgo.WithInputSchema[TypeArgs]()),
		Class:    policy.Interact,
		Redacted: []string{"text"}, // it may be a password: the daemon cannot tell what field a ref names
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, args TypeArgs) (*mcpgo.CallToolResult, error) {
			if msg := needRef(args.Ref); msg != "" {
				return mcpgo.NewToolResultError(msg), nil
			}
			params := &protocol.TypeParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), Ref: args.Ref, Text: args.Text, Submit: args.Submit}
			lead := fmt.Sprintf("Typed %d characters into %s.", len([]rune(args.Text)), args.Ref)
			if args.Submit {
				lead = fmt.Sprintf("Typed %d characters into %s and pressed Enter.", len([]rune(args.Text)), args.Ref)
			}
			return h.pageCall(ctx, "browser_type", args.Profile, protocol.MethodType, params, h.cfg.ActionTimeout, lead)
		}),
	}
}

// SelectOptionArgs are browser_select_option's arguments.
type SelectOptionArgs struct {
	Target
	Ref    string   `json:"ref"`
	Values []string `json:"values"`
}

func (h *handlers) selectOptionTool() Tool {
	return Tool{
		Def:   actionTool("browser_select_option", "Pick options of a native select by value or label.", mcpgo.WithInputSchema[SelectOptionArgs]()),
		Class: policy.Interact,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, args SelectOptionArgs) (*mcpgo.CallToolResult, error) {
			if msg := needRef(args.Ref); msg != "" {
				return mcpgo.NewToolResultError(msg), nil
			}
			if len(args.Values) == 0 {
				return mcpgo.NewToolResultError("values is required: the option values or labels to select"), nil
			}
			params := &protocol.SelectOptionParams{RefParams: protocol.RefParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), Ref: args.Ref}, Values: args.Values}
			return h.pageCall(ctx, "browser_select_option", args.Profile, protocol.MethodSelectOption, params, h.cfg.ActionTimeout, fmt.Sprintf("Selected %q in %s.", args.Values, args.Ref))
		}),
	}
}

// HoverArgs are browser_hover's arguments.
type HoverArgs struct {
	Target
	Ref     string `json:"ref" jsonschema:"Element ref"`
	Trusted bool   `json:"trusted,omitempty" jsonschema:"Trusted input (if enabled)"`
}

func (h *handlers) hoverTool() Tool {
	return Tool{
		Def:   actionTool("browser_hover", "Move the pointer over an element.", mcpgo.WithInputSchema[HoverArgs]()),
		Class: policy.Interact,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, args HoverArgs) (*mcpgo.CallToolResult, error) {
			if msg := needRef(args.Ref) + h.trustedRefused(args.Trusted); msg != "" {
				return mcpgo.NewToolResultError(msg), nil
			}
			params := &protocol.RefParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), Ref: args.Ref, Trusted: args.Trusted}
			return h.pageCall(ctx, "browser_hover", args.Profile, protocol.MethodHover, params, h.cfg.ActionTimeout, fmt.Sprintf("Hovered %s.", args.Ref))
		}),
	}
}

// DragArgs are browser_drag's arguments.
type DragArgs struct {
	Target
	FromRef string `json:"from_ref" jsonschema:"Dragged element"`
	ToRef   string `json:"to_ref" jsonschema:"Drop target"`
}

func (h *handlers) dragTool() Tool {
	return Tool{
		Def:   actionTool("browser_drag", "Drag one element onto another (HTML5 drag and drop).", mcpgo.WithInputSchema[DragArgs]()),
		Class: policy.Interact,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, args DragArgs) (*mcpgo.CallToolResult, error) {
			if args.FromRef == "" || args.ToRef == "" {
				return mcpgo.NewToolResultError("from_ref and to_ref are required: refs from the latest snapshot"), nil
			}
			params := &protocol.DragParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), FromRef: args.FromRef, ToRef: args.ToRef}
			return h.pageCall(ctx, "browser_drag", args.Profile, protocol.MethodDrag, params, h.cfg.ActionTimeout, fmt.Sprintf("Dragged %s onto %s.", args.FromRef, args.ToRef))
		}),
	}
}

// PressKeyArgs are browser_press_key's arguments.
type PressKeyArgs struct {
	Target
	Key     string `json:"key" jsonschema:"Enter, a, ArrowDown, Control+A, Shift+Tab…"`
	Trusted bool   `json:"trusted,omitempty" jsonschema:"Trusted input (if enabled)"`
}

func (h *handlers) pressKeyTool() Tool {
	return Tool{
		Def:   actionTool("browser_press_key", "Press a key or combo in the focused element.", mcpgo.WithInputSchema[PressKeyArgs]()),
		Class: policy.Interact,
		Plain: []string{"key"},
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, args PressKeyArgs) (*mcpgo.CallToolResult, error) {
			if strings.TrimSpace(args.Key) == "" {
				return mcpgo.NewToolResultError("key is required, e.g. Enter or Control+A"), nil
			}
			if msg := h.trustedRefused(args.Trusted); msg != "" {
				return mcpgo.NewToolResultError(msg), nil
			}
			params := &protocol.PressKeyParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), Key: args.Key, Trusted: args.Trusted}
			return h.pageCall(ctx, "browser_press_key", args.Profile, protocol.MethodPressKey, params, h.cfg.ActionTimeout, fmt.Sprintf("Pressed %s.", args.Key))
		}),
	}
}

// FileUploadArgs are browser_file_upload's arguments.
type FileUploadArgs struct {
	Target
	Ref   string   `json:"ref" jsonschema:"File input, or the button or label opening it"`
	Paths []string `json:"paths" jsonschema:"Absolute local paths"`
}

func (h *handlers) fileUploadTool() Tool {
	return Tool{
		Def:     actionTool("browser_file_upload", "Set local files on a file input, or the control that opens one.", mcpgo.WithInputSchema[FileUploadArgs]()),
		Class:   policy.Sensitive, // it can send local files to a site
		Whole:   []string{"paths"},
		prepare: h.prepareUpload,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, args FileUploadArgs) (*mcpgo.CallToolResult, error) {
			if msg := needRef(args.Ref); msg != "" {
				return mcpgo.NewToolResultError(msg), nil
			}
			files, msg := h.readUploads(args.Paths)
			if msg != "" {
				return mcpgo.NewToolResultError(msg), nil
			}
			params := &protocol.FileUploadParams{RefParams: protocol.RefParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), Ref: args.Ref}, Files: files}
			return h.pageCall(ctx, "browser_file_upload", args.Profile, protocol.MethodFileUpload, params, h.cfg.ActionTimeout, fmt.Sprintf("Set %d file(s) on %s.", len(files), args.Ref))
		}),
	}
}

// WaitForArgs are browser_wait_for's arguments.
type WaitForArgs struct {
	Target
	Text     string  `json:"text,omitempty" jsonschema:"Text to appear"`
	TextGone string  `json:"text_gone,omitempty" jsonschema:"Text to disappear"`
	Time     float64 `json:"time,omitempty" jsonschema:"Seconds to wait (≤ 60)"`
}

// waitTimeError is the tool error for a time outside (0, limit]: time is
// in seconds, more than 0 and at most limit.
func waitTimeError(got float64, limit time.Duration) string {
	return fmt.Sprintf("time is a number of seconds, more than 0 and at most %g (got %g); for example time: 2 waits two seconds",
		limit.Seconds(), got)
}

func (h *handlers) waitForTool() Tool {
	return Tool{
		Def: mcpgo.NewTool("browser_wait_for",
			mcpgo.WithDescription("Wait (60 s at most) for text to appear or disappear, or for a time. Returns the snapshot (untrusted page data)."),
			mcpgo.WithInputSchema[WaitForArgs](),
			readOnly(),
		),
		Class: policy.Read,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, req mcpgo.CallToolRequest, args WaitForArgs) (*mcpgo.CallToolResult, error) {
			limit := h.cfg.WaitTimeout
			_, timePassed := req.GetArguments()["time"]
			noText := args.Text == "" && args.TextGone == ""
			if args.Time < 0 || args.Time > limit.Seconds() || (noText && timePassed && args.Time == 0) {
				return mcpgo.NewToolResultError(waitTimeError(args.Time, limit)), nil
			}
			if noText && args.Time == 0 {
				return mcpgo.NewToolResultError("pass text, text_gone or time (seconds)"), nil
			}
			params := &protocol.WaitForParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(),
				Text: args.Text, TextGone: args.TextGone, TimeMs: int(math.Ceil(args.Time * 1000))}
			// The extension gets the whole limit to wait, plus time to answer.
			return h.pageCall(ctx, "browser_wait_for", args.Profile, protocol.MethodWaitFor, params, limit+5*time.Second, "Waited.")
		}),
	}
}

// HandleDialogArgs are browser_handle_dialog's arguments.
type HandleDialogArgs struct {
	Target
	Accept     bool   `json:"accept" jsonschema:"OK (true) or Cancel"`
	PromptText string `json:"prompt_text,omitempty" jsonschema:"Answer to a prompt"`
	Times      int    `json:"times,omitempty" jsonschema:"Dialogs covered (default 1)"`
}

func (h *handlers) handleDialogTool() Tool {
	return Tool{
		Def: mcpgo.NewTool("browser_handle_dialog",
			mcpgo.WithDescription("Arm the answer to the next alert/confirm/prompt, before an action that may open one. Unarmed: alerts accepted, confirms and prompts dismissed. Dialog text is untrusted."),
			mcpgo.WithInputSchema[HandleDialogArgs](),
			mutating(false),
		),
		Class: policy.Interact,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, _ mcpgo.CallToolRequest, args HandleDialogArgs) (*mcpgo.CallToolResult, error) {
			if args.Times < 0 || args.Times > 100 {
				return mcpgo.NewToolResultError("times is between 1 and 100"), nil
			}
			var res protocol.DialogArmResult
			params := &protocol.HandleDialogParams{TabParams: protocol.TabParams{Tab: args.Tab}, Accept: args.Accept, PromptText: args.PromptText, Times: args.Times}
			if err := h.browser.Call(ctx, args.Profile, protocol.MethodHandleDialog, params, &res, h.cfg.ActionTimeout); err != nil {
				return browserError("browser_handle_dialog", err), nil
			}
			answer := "dismiss"
			if args.Accept {
				answer = "accept"
			}
			times := max(args.Times, 1)
			text := fmt.Sprintf("Tab %d: %d more dialog(s) will %s; %d armed answer(s) wait in all, used oldest first by the tab's next dialogs.", res.Tab, times, answer, res.Armed)
			if len(res.Dialogs) > 0 {
				text += " Dialogs since the last call (untrusted page text):\n" + h.fenced(dialogLines(res.Dialogs))
			}
			return mcpgo.NewToolResultText(text), nil
		}),
	}
}
