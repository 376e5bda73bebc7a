package mcp

import (
	"strings"
	"testing"

	"github.com/tether-browser/tether/protocol"
)

func TestScrollRoutesAndReports(t *testing.T) {
	page := protocol.PageResult{Tab: 2, URL: "https://example.com/", Title: "List", Snapshot: `- row "Row 40" [ref=e40]`,
		Scrolled: &protocol.ScrollReport{DY: 1200, Top: 1200, Height: 6000, ViewHeight: 300, Added: 38, Removed: 40}}
	fb := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodScroll: page}}
	c := newClient(t, fb)
	text, isErr := callTool(t, c, "browser_scroll", map[string]any{"ref": "e3", "dy": 1200, "tab": 2})
	if isErr {
		t.Fatal(text)
	}
	for _, want := range []string{"Scrolled the container at e3 down 1200 px", "top 1200 of 5700 px", "38 element(s) appeared, 40 went", "Row 40"} {
		if !strings.Contains(text, want) {
			t.Errorf("result lacks %q:\n%s", want, text)
		}
	}
	if got := fb.calls[0]; got.method != protocol.MethodScroll || got.params != `{"tab":2,"ref":"e3","dy":1200}` {
		t.Fatalf("routed as %+v", got)
	}

	// A hidden tab is said to be hidden, with how to show it.
	page.Scrolled = &protocol.ScrollReport{Page: true, DY: 900, Top: 900, Height: 1800, ViewHeight: 900, Hidden: true}
	fb.results[protocol.MethodScroll] = page
	text, _ = callTool(t, c, "browser_scroll", map[string]any{"to": "bottom"})
	for _, want := range []string{"Scrolled the page down 900 px", "(the bottom)", "No new content appeared", "Tab 2 is hidden", `browser_tabs {action: "select", tab: 2}`} {
		if !strings.Contains(text, want) {
			t.Errorf("result lacks %q:\n%s", want, text)
		}
	}
}

func TestScrollRefusesWhatItCannotDo(t *testing.T) {
	fb := &fakeBrowser{}
	c := newClient(t, fb)
	for _, args := range []map[string]any{{}, {"ref": "e3"}, {"to": "view"}, {"to": "middle"}} {
		text, isErr := callTool(t, c, "browser_scroll", args)
		if !isErr {
			t.Errorf("%v: accepted: %s", args, text)
		}
	}
	if len(fb.calls) != 0 {
		t.Fatalf("refused calls reached the browser: %+v", fb.calls)
	}
}

// Under a cap above protocol.PackSnapshotOver, page calls ask for a large
// snapshot packed; under the default cap they do not (it never gets there).
func TestLargeCapAsksForPackedSnapshots(t *testing.T) {
	page := protocol.PageResult{Tab: 1, URL: "https://example.com/", Title: "T", Snapshot: `- button "Go" [ref=e1]`}
	fb := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodSnapshot: page, protocol.MethodClick: page}}
	c := newClientWith(t, fb, Config{SnapshotMaxChars: 10_000_000})
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{"browser_snapshot", map[string]any{}}, {"browser_click", map[string]any{"ref": "e1"}}} {
		if text, isErr := callTool(t, c, call.tool, call.args); isErr {
			t.Fatal(text)
		}
	}
	for _, got := range fb.calls {
		if !strings.Contains(got.params, `"maxChars":10000000`) || !strings.Contains(got.params, `"packOver":131072`) {
			t.Errorf("%s params %s: want maxChars and packOver", got.method, got.params)
		}
	}
	if len(fb.calls) != 2 {
		t.Fatalf("calls: %+v", fb.calls)
	}
}
