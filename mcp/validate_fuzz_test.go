package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// argTypes maps each tool to the Go type its handler binds the arguments
// to (what mcp-go's NewTypedToolHandler decodes into).
var argTypes = map[string]any{
	"browser_navigate": NavigateArgs{}, "browser_navigate_back": HistoryArgs{}, "browser_navigate_forward": HistoryArgs{},
	"browser_reload": HistoryArgs{}, "browser_snapshot": SnapshotArgs{}, "browser_find": FindArgs{}, "browser_read": ReadArgs{},
	"browser_read_url": ReadURLArgs{}, "browser_console_messages": ConsoleArgs{}, "browser_network": NetworkArgs{}, "browser_click": ClickArgs{},
	"browser_type": TypeArgs{}, "browser_select_option": SelectOptionArgs{}, "browser_hover": HoverArgs{},
	"browser_drag": DragArgs{}, "browser_press_key": PressKeyArgs{}, "browser_file_upload": FileUploadArgs{},
	"browser_wait_for": WaitForArgs{}, "browser_handle_dialog": HandleDialogArgs{},
	"browser_take_screenshot": ScreenshotArgs{}, "browser_evaluate": EvaluateArgs{}, "browser_tabs": TabsArgs{},
	"browser_scroll": ScrollArgs{},
}

// jsonFields returns t's JSON field names (embedded structs flattened) and
// whether each is required (no omitempty), as the schema reflector sees them.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for k, v := range jsonFields(f.Type) {
				out[k] = v
			}
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = !strings.Contains(opts, "omitempty")
	}
	return out
}

func fuzzValidator(t testing.TB) (*argValidator, []string) {
	h := &handlers{cfg: Config{EnabledTools: []string{"browser_evaluate"}}}
	tools := h.tools()
	v, err := newArgValidator(tools)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		if argTypes[tl.Def.Name] == nil {
			t.Fatalf("argTypes lacks %s", tl.Def.Name)
		}
		names = append(names, tl.Def.Name)
	}
	return v, names
}

// FuzzArgValidator feeds the MCP argument validator (the guard's schema
// check of every tools/call) arbitrary JSON as the arguments of the tool
// names[tool % len(names)]. Invariants: no panic; a refusal names the tool,
// is valid UTF-8, says where the problem is and how to go on, and is at
// most maxArgErrorLen bytes; accepted arguments are a JSON object whose
// keys are all fields of the tool's Go argument type, with every required
// field present, and they bind to that type (the handler never gets a
// "failed to bind" error).
func FuzzArgValidator(f *testing.F) {
	for _, seed := range []struct {
		tool uint8
		args string
	}{
		{0, `{"url":"https://example.com/","profile":"work","tab":2}`},
		{4, `{"ref":"d2e1","depth":3,"urls":true}`},
		{9, `{"ref":"f1d2e12","trusted":true}`},
		{16, `{"text":"Done","time":2.5}`},
		{16, `{"time":-5}`},
		{4, `{"tab":"2"}`},
		{4, `{"bogus":true}`},
		{4, `{"tab":1e300}`},
		{0, `[]`},
	} {
		f.Add(seed.tool, []byte(seed.args))
	}
	v, names := fuzzValidator(f)
	f.Fuzz(func(t *testing.T, tool uint8, data []byte) {
		var args any
		if json.Unmarshal(data, &args) != nil {
			return // mcp-go refuses the request before any tool sees it
		}
		name := names[int(tool)%len(names)]
		req := mcpgo.CallToolRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		msg := v.check(req)
		if msg != "" {
			switch {
			case !strings.HasPrefix(msg, "Invalid arguments for "+name+": "):
				t.Fatalf("refusal does not name the tool: %q", msg)
			case !strings.HasSuffix(msg, "call again."):
				t.Fatalf("refusal does not say how to go on: %q", msg)
			case len(msg) > maxArgErrorLen:
				t.Fatalf("refusal is %d bytes, more than %d", len(msg), maxArgErrorLen)
			case !utf8.ValidString(msg):
				t.Fatalf("refusal is not valid UTF-8: %q", msg)
			}
			return
		}
		obj, ok := args.(map[string]any)
		if !ok && args != nil {
			t.Fatalf("accepted non-object arguments %s", data)
		}
		typ := reflect.TypeOf(argTypes[name])
		fields := jsonFields(typ)
		for k := range obj {
			if _, ok := fields[k]; !ok {
				t.Fatalf("accepted unknown argument %q for %s", k, name)
			}
		}
		for k, required := range fields {
			if _, ok := obj[k]; required && !ok {
				t.Fatalf("accepted %s without its required %q: %s", name, k, data)
			}
		}
		b, _ := json.Marshal(obj)
		if err := json.Unmarshal(b, reflect.New(typ).Interface()); err != nil {
			t.Fatalf("accepted arguments do not bind to %s: %v\n%s", typ.Name(), err, data)
		}
	})
}
