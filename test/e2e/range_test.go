//go:build !windows

package e2e

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestRangeInput: a native range input is set by typing a number (clamped
// and snapped to its step) and moved by arrow keys by its step; the page's
// input and change handlers record each value.
func TestRangeInput(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	StartBrowser(t, d)
	ctx := Context(t, 2*time.Minute)
	c := stdioClient(t, ctx, d)

	snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": fixtures.URL + "/range.html"})
	vol := ref(t, snap, "slider", "Volume")
	for _, step := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"browser_type", map[string]any{"ref": vol, "text": "33"}, []string{"input: 35", "change: 35"}},
		{"browser_type", map[string]any{"ref": vol, "text": "80"}, []string{"input: 50", "change: 50"}},
		{"browser_press_key", map[string]any{"key": "ArrowLeft"}, []string{"input: 45", "change: 45"}},
		{"browser_press_key", map[string]any{"key": "ArrowDown"}, []string{"input: 40", "change: 40"}},
		{"browser_press_key", map[string]any{"key": "ArrowRight"}, []string{"input: 45", "change: 45"}},
		{"browser_press_key", map[string]any{"key": "Home"}, []string{"input: 0", "change: 0"}},
	} {
		text := mustCall(t, ctx, c, step.tool, step.args)
		for _, w := range step.want {
			if !strings.Contains(text, w) {
				t.Fatalf("%s(%v): the page's handlers did not record %q:\n%s", step.tool, step.args, w, text)
			}
		}
	}
	text, isErr := call(t, ctx, c, "browser_type", map[string]any{"ref": vol, "text": "loud"})
	if !isErr || !strings.Contains(text, "number from 0 to 50") {
		t.Fatalf("typing words into a slider: (isError=%v) %s", isErr, text)
	}
}
