package mcp

import (
	"strings"
	"testing"
)

func TestNavigateValidatesURL(t *testing.T) {
	fb := &fakeBrowser{}
	c := newClient(t, fb)
	for _, u := range []string{"example.com", "javascript:alert(1)", "chrome://settings", "", "file:///etc/passwd"} {
		text, isErr := callTool(t, c, "browser_navigate", map[string]any{"url": u})
		if !isErr || !strings.Contains(text, "http") && !strings.Contains(text, "allowFileUrls") {
			t.Errorf("url %q: (isError=%v) %s; want an error naming the accepted forms", u, isErr, text)
		}
	}
	long := "https://example.com/?q=" + strings.Repeat("a", maxURLLength)
	if text, isErr := callTool(t, c, "browser_navigate", map[string]any{"url": long}); !isErr || !strings.Contains(text, "Chrome accepts at most") {
		t.Errorf("a 2 MB URL: (isError=%v) %.200s", isErr, text)
	}
	if len(fb.calls) != 0 {
		t.Fatalf("invalid URLs reached the browser: %+v", fb.calls)
	}
}
