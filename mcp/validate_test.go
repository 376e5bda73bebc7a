package mcp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

func TestArgumentsAreValidated(t *testing.T) {
	fb := &fakeBrowser{}
	c := newClient(t, fb)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"tab": "2"}, "tab: got string, want integer"},
		{map[string]any{"bogus": true}, "arguments: additional properties 'bogus' not allowed"},
		{map[string]any{"depth": 1.5}, "depth: got number, want integer"},
	} {
		text, isErr := callTool(t, c, "browser_snapshot", tc.args)
		if !isErr || !strings.HasPrefix(text, "Invalid arguments for browser_snapshot: "+tc.want+".") {
			t.Errorf("%v: (isError=%v) %s; want %q", tc.args, isErr, text, tc.want)
		}
	}
	if len(fb.calls) != 0 {
		t.Fatalf("invalid arguments reached the browser: %+v", fb.calls)
	}
}

// An integer argument the schema accepts but a Go int cannot hold (1e300
// is an integer to JSON Schema) is refused with its range, not bound into
// a "failed to bind arguments" error; a huge error is cut.
func TestIntegerRangeAndErrorCap(t *testing.T) {
	fb := &fakeBrowser{}
	c := newClient(t, fb)
	text, isErr := callTool(t, c, "browser_snapshot", map[string]any{"tab": 1e300})
	if !isErr || !strings.Contains(text, "tab: must be an integer between -9007199254740991 and 9007199254740991") {
		t.Errorf("tab 1e300: (isError=%v) %q", isErr, text)
	}
	if len(fb.calls) != 0 {
		t.Fatalf("reached the browser: %+v", fb.calls)
	}
	if got := argError("browser_x", strings.Repeat("é", 2000)); len(got) > maxArgErrorLen || !strings.HasSuffix(got, "…. Fix them to match the tool's input schema and call again.") || !utf8.ValidString(got) {
		t.Errorf("argError not cut cleanly: %d bytes, %q…", len(got), got[:61])
	}
}

// TestValidatorReadsTheArgumentsAsSent: the check reads the arguments'
// JSON as the client sent it when it is an object, else (no arguments,
// null, a request built in process) the decoded arguments, none being {}.
func TestValidatorReadsTheArgumentsAsSent(t *testing.T) {
	v, err := newArgValidator(Tools())
	if err != nil {
		t.Fatal(err)
	}
	req := func(raw string, args any) mcpgo.CallToolRequest {
		r := mcpgo.CallToolRequest{}
		r.Params.Name, r.Params.RawArguments, r.Params.Arguments = "browser_snapshot", json.RawMessage(raw), args
		return r
	}
	for _, tc := range []struct {
		req  mcpgo.CallToolRequest
		want string // "" valid, else in the error
	}{
		{req(` {"tab": "2"}`, nil), "tab: got string, want integer"},
		{req(`{"tab": 9007199254740993}`, nil), "tab: must be an integer between"},
		{req(`{"tab": 2}`, nil), ""},
		{req(`null`, nil), ""},
		{req(``, nil), ""},
		{req(``, map[string]any{"bogus": true}), "additional properties 'bogus' not allowed"},
	} {
		got := v.check(tc.req)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%q %v: %q; want %q", tc.req.Params.RawArguments, tc.req.Params.Arguments, got, tc.want)
		}
	}
}
