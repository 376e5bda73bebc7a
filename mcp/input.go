package mcp

import (
	"context"
	"encoding/json"
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
	Ref       string  `json:"ref,omitempty"`
	X         float64 `json:"x,omitempty" jsonschema:"Viewport CSS px"`
	Y         float64 `json:"y,omitempty"`
	FullPage  bool    `json:"full_page,omitempty" jsonschema:"x/y in page px"`
	Button    string  `json:"button,omitempty" jsonschema:"left/right/middle"`
	Double    bool    `json:"double,omitempty"`
	Modifiers string  `json:"modifiers,omitempty" jsonschema:"Control+Shift"`
	Trusted   bool    `json:"trusted,omitempty" jsonschema:"Real input via debugger (opt-in)"`
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
		mcpgo.WithDescription(description+" Returns the snapshot (untrusted)."),
		schema,
		noEmptyRequired(),
		mutating(true),
	)
}

// noEmptyRequired drops an empty "required" list from the input schema: it
// says nothing, and every tools/list pays for it.
func noEmptyRequired() mcpgo.ToolOption {
	return func(t *mcpgo.Tool) {
		raw := t.RawInputSchema
		if len(raw) == 0 {
			b, err := json.Marshal(t.InputSchema)
			if err != nil {
				return
			}
			raw = b
		}
		var schema map[string]json.RawMessage
		if json.Unmarshal(raw, &schema) != nil || string(schema["required"]) != "[]" {
			return
		}
		delete(schema, "required")
		if raw, err := json.Marshal(schema); err == nil {
			t.RawInputSchema = raw
		}
	}
}

func needRef(ref string) string {
	if ref == "" {
		return "ref is required: take a browser_snapshot and pass an element's ref, e.g. e12"
	}
	return ""
}

func (h *handlers) clickTool() Tool {
	return Tool{
		Def:   actionTool("browser_click", "Click an element or x/y.", mcpgo.WithInputSchema[ClickArgs]()),
		Class: policy.Interact,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, req mcpgo.CallToolRequest, args ClickArgs) (*mcpgo.CallToolResult, error) {
			at, msg := pointArgs(req.GetArguments(), args.Ref != "", "x", "y")
			if msg == "" && at == nil && args.Ref == "" {
				msg = needRef("") + " (or x and y)"
			}
			button, count := args.Button, 1
			switch button {
			case "", "left", "right", "middle":
			default:
				msg += "button is left, right or middle"
			}
			if args.Double {
				count = 2
			}
			mods, bad := parseModifiers(args.Modifiers)
			if bad != "" {
				msg += fmt.Sprintf("modifiers: %q is not Alt, Control, Meta or Shift; join them with +, e.g. Control+Shift", bad)
			}
			if msg += h.trustedRefused(args.Trusted); msg != "" {
				return mcpgo.NewToolResultError(msg), nil
			}
			if button == "left" {
				button = ""
			}
			params := &protocol.ClickParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), Ref: args.Ref, Trusted: args.Trusted,
				Button: button, Modifiers: mods, At: at, FullPage: at != nil && args.FullPage}
			if count > 1 {
				params.ClickCount = count
			}
			return h.pageCall(ctx, "browser_click", args.Profile, protocol.MethodClick, params, h.cfg.ActionTimeout, clickLead(args, at, mods))
		}),
	}
}

// clickLead is browser_click's summary: "Double-right-clicked e4 with Shift."
func clickLead(args ClickArgs, at *protocol.Point, mods []string) string {
	verb := "Clicked"
	switch {
	case args.Button == "right" && args.Double:
		verb = "Double-right-clicked"
	case args.Button == "right":
		verb = "Right-clicked"
	case args.Button == "middle" && args.Double:
		verb = "Double-middle-clicked"
	case args.Button == "middle":
		verb = "Middle-clicked"
	case args.Double:
		verb = "Double-clicked"
	}
	lead := verb + " " + pointOrRef(args.Ref, at, args.FullPage)
	if len(mods) > 0 {
		lead += " with " + strings.Join(mods, "+")
	}
	return lead + "."
}

// pointOrRef names what an action aimed at: a ref, or a point.
func pointOrRef(ref string, at *protocol.Point, fullPage bool) string {
	if at == nil {
		return ref
	}
	where := "the viewport"
	if fullPage {
		where = "the page"
	}
	return fmt.Sprintf("(%g, %g) in %s", at.X, at.Y, where)
}

// pointArgs reads a point from the arguments xKey and yKey: nil when
// neither is given, or a message for the AI when only one is, when a ref
// is given too (hasRef), or when one is negative or not finite.
func pointArgs(args map[string]any, hasRef bool, xKey, yKey string) (*protocol.Point, string) {
	xv, hasX := args[xKey]
	yv, hasY := args[yKey]
	if !hasX && !hasY {
		return nil, ""
	}
	if !hasX || !hasY {
		return nil, fmt.Sprintf("pass both %s and %s (CSS pixels), or neither", xKey, yKey)
	}
	if hasRef {
		return nil, fmt.Sprintf("pass a ref or %s/%s, not both", xKey, yKey)
	}
	x, okX := xv.(float64)
	y, okY := yv.(float64)
	if !okX || !okY || x < 0 || y < 0 || math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsNaN(x) || math.IsNaN(y) {
		return nil, fmt.Sprintf("%s and %s are CSS pixels from the top-left corner, 0 or more", xKey, yKey)
	}
	return &protocol.Point{X: x, Y: y}, ""
}

// parseModifiers reads "Control+Shift" (also "Ctrl", "Cmd", commas) into
// the canonical key names, in the order Alt, Control, Meta, Shift; bad is
// the first name it does not know.
func parseModifiers(s string) (mods []string, bad string) {
	held := map[string]bool{}
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '+' || r == ',' || r == ' ' }) {
		switch strings.ToLower(part) {
		case "alt", "option":
			held["Alt"] = true
		case "control", "ctrl":
			held["Control"] = true
		case "meta", "cmd", "command":
			held["Meta"] = true
		case "shift":
			held["Shift"] = true
		default:
			return nil, part
		}
	}
	for _, m := range []string{"Alt", "Control", "Meta", "Shift"} {
		if held[m] {
			mods = append(mods, m)
		}
	}
	return mods, ""
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
		Def:   actionTool("browser_select_option", "Pick a native select's options by value or label (ARIA combobox: click it).", mcpgo.WithInputSchema[SelectOptionArgs]()),
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
	Ref      string  `json:"ref,omitempty"`
	X        float64 `json:"x,omitempty"`
	Y        float64 `json:"y,omitempty"`
	FullPage bool    `json:"full_page,omitempty"`
	Trusted  bool    `json:"trusted,omitempty" jsonschema:"Real :hover via debugger (opt-in)"`
}

func (h *handlers) hoverTool() Tool {
	return Tool{
		Def:   actionTool("browser_hover", "Hover an element or x/y.", mcpgo.WithInputSchema[HoverArgs]()),
		Class: policy.Interact,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, req mcpgo.CallToolRequest, args HoverArgs) (*mcpgo.CallToolResult, error) {
			at, msg := pointArgs(req.GetArguments(), args.Ref != "", "x", "y")
			if msg == "" && at == nil && args.Ref == "" {
				msg = needRef("") + " (or x and y)"
			}
			if msg += h.trustedRefused(args.Trusted); msg != "" {
				return mcpgo.NewToolResultError(msg), nil
			}
			params := &protocol.HoverParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), Ref: args.Ref, Trusted: args.Trusted,
				At: at, FullPage: at != nil && args.FullPage}
			return h.pageCall(ctx, "browser_hover", args.Profile, protocol.MethodHover, params, h.cfg.ActionTimeout, fmt.Sprintf("Hovered %s.", pointOrRef(args.Ref, at, args.FullPage)))
		}),
	}
}

// DragArgs are browser_drag's arguments.
type DragArgs struct {
	Target
	FromRef  string  `json:"from_ref,omitempty"`
	ToRef    string  `json:"to_ref,omitempty"`
	X        float64 `json:"x,omitempty"`
	Y        float64 `json:"y,omitempty"`
	ToX      float64 `json:"to_x,omitempty"`
	ToY      float64 `json:"to_y,omitempty"`
	FullPage bool    `json:"full_page,omitempty"`
}

func (h *handlers) dragTool() Tool {
	return Tool{
		Def:   actionTool("browser_drag", "Drag an element onto another, or from x/y to to_x/to_y.", mcpgo.WithInputSchema[DragArgs]()),
		Class: policy.Interact,
		handler: mcpgo.NewTypedToolHandler(func(ctx context.Context, req mcpgo.CallToolRequest, args DragArgs) (*mcpgo.CallToolResult, error) {
			from, msg := pointArgs(req.GetArguments(), args.FromRef != "", "x", "y")
			to, msg2 := pointArgs(req.GetArguments(), args.ToRef != "", "to_x", "to_y")
			msg += msg2
			if msg == "" && (from == nil) != (to == nil) {
				msg = "drag either by refs (from_ref, to_ref) or by points (x, y, to_x, to_y), not a mix"
			}
			if msg == "" && from == nil && (args.FromRef == "" || args.ToRef == "") {
				msg = "from_ref and to_ref are required (refs from the latest snapshot), or x, y, to_x and to_y"
			}
			if msg != "" {
				return mcpgo.NewToolResultError(msg), nil
			}
			params := &protocol.DragParams{TabParams: protocol.TabParams{Tab: args.Tab}, SnapshotOptions: h.snapshotOptions(), FromRef: args.FromRef, ToRef: args.ToRef,
				From: from, To: to, FullPage: from != nil && args.FullPage}
			lead := fmt.Sprintf("Dragged %s onto %s.", args.FromRef, args.ToRef)
			if from != nil {
				lead = fmt.Sprintf("Dragged from %s to %s.", pointOrRef("", from, args.FullPage), pointOrRef("", to, args.FullPage))
			}
			return h.pageCall(ctx, "browser_drag", args.Profile, protocol.MethodDrag, params, h.cfg.ActionTimeout, lead)
		}),
	}
}

// PressKeyArgs are browser_press_key's arguments.
type PressKeyArgs struct {
	Target
	Key     string `json:"key" jsonschema:"Enter, a, Control+A"`
	Trusted bool   `json:"trusted,omitempty" jsonschema:"Real input via debugger (opt-in)"`
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
	Ref   string   `json:"ref" jsonschema:"File input or its opener"`
	Paths []string `json:"paths" jsonschema:"Absolute paths"`
}

func (h *handlers) fileUploadTool() Tool {
	return Tool{
		Def:     actionTool("browser_file_upload", "Set local files on a file input or its opener.", mcpgo.WithInputSchema[FileUploadArgs]()),
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
	Text     string  `json:"text,omitempty"`
	TextGone string  `json:"text_gone,omitempty"`
	Time     float64 `json:"time,omitempty" jsonschema:"Seconds"`
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
			mcpgo.WithDescription("Wait ≤ 60 s for text (or text_gone), or a time. Returns the snapshot (untrusted)."),
			mcpgo.WithInputSchema[WaitForArgs](),
			noEmptyRequired(),
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
	PromptText string `json:"prompt_text,omitempty" jsonschema:"Prompt answer"`
	Times      int    `json:"times,omitempty" jsonschema:"Dialogs covered"`
}

func (h *handlers) handleDialogTool() Tool {
	return Tool{
		Def: mcpgo.NewTool("browser_handle_dialog",
			mcpgo.WithDescription("Arm the answer to the next dialog(s), before the action opening one. Unarmed: alerts accepted, others dismissed. Untrusted text."),
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
