package mcp

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/test/mcpclient"
)

// A call to browser_evaluate while it is off is a tool error (on the
// timeline like any call) that says so and names both ways to turn it on,
// instead of "tool not found"; it is not listed and never reaches the
// browser; enabled, it is offered and runs.
func TestDisabledToolSaysHowToEnable(t *testing.T) {
	fb := &fakeBrowser{}
	c := newClient(t, fb)
	text, isErr, err := mcpclient.Call(context.Background(), c, "browser_evaluate", map[string]any{"expression": "1"}, nil)
	if err != nil || !isErr {
		t.Fatalf("browser_evaluate while off: (isError=%v, err=%v) %q; want a tool error", isErr, err, text)
	}
	for _, want := range []string{"browser_evaluate is turned off", `"enabledTools": ["browser_evaluate"]`, "settings.json", "--enable-tools=browser_evaluate"} {
		if !strings.Contains(text, want) {
			t.Errorf("error %q lacks %q", text, want)
		}
	}
	if strings.Contains(text, "not found") {
		t.Errorf("error %q still says not found", text)
	}
	if len(fb.calls) != 0 {
		t.Fatalf("browser_evaluate reached the browser while off: %+v", fb.calls)
	}
	list, err := c.ListTools(context.Background(), mcpgo.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if tl.Name == "browser_evaluate" {
			t.Fatal("tools/list offers browser_evaluate while it is off")
		}
	}
	// An unknown tool is still "not found".
	if _, _, err := mcpclient.Call(context.Background(), c, "browser_bogus", nil, nil); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("unknown tool: %v; want not found", err)
	}
	on, err := client.NewInProcessClient(NewServer(&fakeBrowser{}, Config{Version: "test", EnabledTools: []string{"browser_evaluate"}}))
	if err != nil {
		t.Fatal(err)
	}
	defer on.Close()
	if err := on.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpclient.Initialize(context.Background(), on, "test"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mcpclient.Call(context.Background(), on, "browser_evaluate", map[string]any{"expression": "1"}, nil); err != nil {
		t.Fatalf("enabled browser_evaluate: %v", err)
	}
}
