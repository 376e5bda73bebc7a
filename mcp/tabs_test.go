package mcp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/protocol"
)

func TestTabsList(t *testing.T) {
	live := []protocol.TabInfo{
		{Tab: 1, Title: "Inbox", URL: "https://mail.example/", Current: true},
		{Tab: 2, Title: "Docs", URL: "https://docs.example/"},
	}
	fb := &fakeBrowser{
		profiles: []Profile{
			{ID: "3f2a1b2c-0000", Label: "Work", Slug: "work", Connected: true, Tabs: live},
			{ID: "9c8d7e6f-1111", Label: "Home", Slug: "home"},
			{ID: "77aa88bb-2222", Label: "Far", Slug: "far", Connected: true, RTT: 84 * time.Millisecond},
			{ID: "66cc55dd-3333", Label: "Ship", Slug: "ship", Connected: true, RTT: 1500 * time.Millisecond, SlowLink: true},
		},
		results: map[protocol.Method]any{protocol.MethodTabsList: protocol.TabsListResult{Tabs: live}},
	}
	c := newClient(t, fb)
	text, isErr := callTool(t, c, "browser_tabs", nil)
	for _, want := range []string{
		`Work — profile "work" (3f2a1b2c…), connected`,
		"  [1] (current) Inbox — https://mail.example/",
		"  [2] Docs — https://docs.example/",
		`Home — profile "home" (9c8d7e6f…), disconnected (a call addressed to it waits up to 5 s for its extension to reconnect)`,
		"  shared tabs unknown until it reconnects",
		`Far — profile "far" (77aa88bb…), connected, link round trip 84 ms`,
		`Ship — profile "ship" (66cc55dd…), connected, link round trip 1500 ms (slow link: its calls take longer, and a timeout there is the network's, not the page's)`,
	} {
		if isErr || !strings.Contains(text, want) {
			t.Fatalf("list lacks %q: (isError=%v)\n%s", want, isErr, text)
		}
	}
	if len(fb.calls) != 0 {
		t.Fatalf("listing every profile made browser calls %+v; the registry answers it", fb.calls)
	}
	text, _ = callTool(t, c, "browser_tabs", map[string]any{"profile": "work"})
	if !strings.Contains(text, "[2] Docs — https://docs.example/") || fb.calls[0].profile != "work" {
		t.Fatalf("list of one profile: %s", text)
	}
	text, isErr = callTool(t, c, "browser_tabs", map[string]any{"action": "close"})
	if !isErr || !strings.Contains(text, "needs tab") {
		t.Fatalf("close without tab: (isError=%v) %s", isErr, text)
	}
	text, isErr = callTool(t, c, "browser_tabs", map[string]any{"action": "explode"})
	if !isErr {
		t.Fatalf("unknown action: (isError=%v) %s", isErr, text)
	}
}

func TestTabsNewCloseSelect(t *testing.T) {
	fb := &fakeBrowser{results: map[protocol.Method]any{
		protocol.MethodTabNew:    protocol.PageResult{Tab: 5, URL: "https://example.com/", Title: "Example"},
		protocol.MethodTabClose:  protocol.TabsListResult{},
		protocol.MethodTabSelect: protocol.TabsListResult{Tabs: []protocol.TabInfo{{Tab: 2, Title: "Docs", URL: "https://docs.example/"}}},
	}}
	c := newClient(t, fb)
	text, isErr := callTool(t, c, "browser_tabs", map[string]any{"action": "new", "url": "https://example.com/", "profile": "work"})
	if isErr || !strings.HasPrefix(text, "Opened tab 5.") {
		t.Fatalf("new: %s", text)
	}
	if _, isErr = callTool(t, c, "browser_tabs", map[string]any{"action": "new", "url": "javascript:alert(1)"}); !isErr {
		t.Fatal("new accepted a javascript: URL")
	}
	text, _ = callTool(t, c, "browser_tabs", map[string]any{"action": "close", "tab": 5})
	if !strings.HasPrefix(text, "Closed tab 5.") {
		t.Fatalf("close: %s", text)
	}
	text, _ = callTool(t, c, "browser_tabs", map[string]any{"action": "select", "tab": 2})
	if !strings.HasPrefix(text, "Selected tab 2.") {
		t.Fatalf("select: %s", text)
	}
	want := []string{"tab_new work {\"url\":\"https://example.com/\"}", "tab_close  {\"tab\":5}", "tab_select  {\"tab\":2}"}
	for i, w := range want {
		c := fb.calls[i]
		if got := fmt.Sprintf("%s %s %s", c.method, c.profile, c.params); got != w {
			t.Errorf("call %d = %s, want %s", i, got, w)
		}
	}
}
