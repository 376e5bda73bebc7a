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
