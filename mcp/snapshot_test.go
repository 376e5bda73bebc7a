package mcp

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tether-browser/tether/protocol"
)

// browser_read's Markdown is capped like snapshots (case 23 of
// ../shared/cases moved to read otherwise), with a note saying how to go on.
func TestReadIsCapped(t *testing.T) {
	var rows strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&rows, "<p>Row %d of the long table</p>", i)
	}
	fb := &fakeBrowser{results: map[protocol.Method]any{
		protocol.MethodRead: protocol.ReadResult{Tab: 1, URL: "https://example.com/", Title: "Long", HTML: "<html><body>" + rows.String() + "</body></html>"},
	}}
	text, isErr := callTool(t, newClient(t, fb), "browser_read", map[string]any{"mode": "full"})
	if isErr || !strings.Contains(text, "The Markdown was cut after") || !strings.Contains(text, "Row 0 of") || strings.Contains(text, "Row 4999 of") {
		t.Fatalf("(isError=%v) %d characters:\n%.400s", isErr, len(text), text)
	}
	if n := utf8.RuneCountInString(text); n > defaultMaxChars+1000 {
		t.Fatalf("%d characters, want about %d", n, defaultMaxChars)
	}
	if got, kept := capText("short", 10); got != "short" || kept != 0 {
		t.Fatalf("capText kept %q (%d)", got, kept)
	}
}

// A snapshot whose walk stopped at the cap's budget says "more than N", one
// cut after a full walk says N; a read that ran into its deadline says it is
// partial and how to reach the rest; so does a search.
func TestPartialAndMoreThanWording(t *testing.T) {
	cases := []struct {
		page      protocol.PageResult
		want, not []string
	}{
		{protocol.PageResult{Tab: 1, Snapshot: "- button \"A\"", Omitted: 4005, OmittedMore: true},
			[]string{"The snapshot was cut: more than 4005 elements left out", "browser_find", "ref"}, []string{"partial"}},
		{protocol.PageResult{Tab: 1, Snapshot: "- button \"A\"", Omitted: 12},
			[]string{"The snapshot was cut: 12 elements left out"}, []string{"more than", "partial"}},
		{protocol.PageResult{Tab: 1, Snapshot: "- button \"A\"", Partial: true},
			[]string{"The snapshot is partial: reading the page ran out of time", "browser_find", "depth"}, []string{"was cut"}},
		{protocol.PageResult{Tab: 1, Snapshot: "- button \"A\""}, nil, []string{"partial", "was cut", "more than"}},
	}
	for i, c := range cases {
		fb := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodSnapshot: c.page}}
		text, isErr := callTool(t, newClient(t, fb), "browser_snapshot", nil)
		if isErr {
			t.Fatalf("case %d: error: %s", i, text)
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("case %d: no %q in:\n%s", i, w, text)
			}
		}
		for _, w := range c.not {
			if strings.Contains(text, w) {
				t.Errorf("case %d: %q in:\n%s", i, w, text)
			}
		}
	}

	for _, partial := range []bool{false, true} {
		fb := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodFind: protocol.FindResult{Tab: 2, Total: 1, Partial: partial, Matches: []protocol.FindMatch{{Line: `- link "Open row 5" [ref=e9]`}}}}}
		text, isErr := callTool(t, newClient(t, fb), "browser_find", map[string]any{"text": "Open row"})
		if isErr || !strings.Contains(text, "Open row 5") || strings.Contains(text, "(partial: the search ran out of time before the end of the page)") != partial {
			t.Errorf("find (partial=%v): (isError=%v)\n%s", partial, isErr, text)
		}
	}
}
