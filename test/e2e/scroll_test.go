//go:build !windows

package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
)

// TestScrollVirtualList: the 150th row of a virtualized list inside an
// inner scroll container (only rows near the scroll position exist, drawn
// on the animation frame after each scroll event) is reached by scrolling
// the container and clicked; the page's own handler records the click. It
// runs in the focused tab and in a background tab, where the result must
// say that the tab was hidden when the page itself says so.
func TestScrollVirtualList(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	StartBrowser(t, d)
	ctx := Context(t, 3*time.Minute)
	c := stdioClient(t, ctx, d)
	page := fixtures.URL + "/virtual.html"

	t.Run("foreground", func(t *testing.T) {
		mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": page})
		tab := tabNumber(t, mustCall(t, ctx, c, "browser_tabs", nil), "virtual.html")
		// The agent's tab opened in the background: the agent brings it forward.
		mustCall(t, ctx, c, "browser_tabs", map[string]any{"action": "select", "tab": tab})
		snap := mustCall(t, ctx, c, "browser_snapshot", map[string]any{"tab": tab})
		reachRow150(t, ctx, c, tab, snap)
	})
	t.Run("background", func(t *testing.T) {
		mustCall(t, ctx, c, "browser_tabs", map[string]any{"action": "new", "url": page})
		tab := tabNumber(t, mustCall(t, ctx, c, "browser_tabs", nil), "(current) Virtual list")
		// Another tab comes to the front: the list's tab is in the background.
		mustCall(t, ctx, c, "browser_tabs", map[string]any{"action": "new", "url": fixtures.URL + "/page2.html"})
		snap := mustCall(t, ctx, c, "browser_snapshot", map[string]any{"tab": tab})
		if !strings.Contains(snap, "Visibility: hidden") {
			t.Fatalf("the list's tab is not in the background:\n%s", snap)
		}
		reachRow150(t, ctx, c, tab, snap)
	})
}

// reachRow150 scrolls the list of tab by 280 px at a time (less than its
// 300 px height, so no row is skipped) until the snapshot shows Row 150, as
// an agent would, then clicks it. A result that
// says the tab is hidden must come from a tab the page says is hidden; the
// agent then shows it (browser_tabs select) and scrolls again.
func reachRow150(t *testing.T, ctx context.Context, c *client.Client, tab int, snap string) {
	t.Helper()
	if !strings.Contains(snap, `button "Row 1"`) || strings.Contains(snap, `button "Row 150"`) {
		t.Fatalf("the list does not start at its first rows:\n%s", snap)
	}
	list := ref(t, snap, "region", "Rows")
	text := snap
	// What the page says of its visibility, as the agent knows it: a result
	// that carries only changes shows the line when it changed.
	hiddenPage := strings.Contains(snap, "Visibility: hidden")
	for i := 0; i < 25 && !strings.Contains(text, `button "Row 150"`); i++ {
		text = mustCall(t, ctx, c, "browser_scroll", map[string]any{"tab": tab, "ref": list, "dy": 280})
		lead := text[:strings.Index(text, "\n")]
		t.Logf("scroll %d: %s", i+1, lead)
		switch {
		case strings.Contains(text, "Visibility: hidden"):
			hiddenPage = true
		case strings.Contains(text, "Visibility: visible"):
			hiddenPage = false
		}
		saysHidden := strings.Contains(lead, "is hidden")
		if hiddenPage != saysHidden {
			t.Fatalf("the page says hidden=%v, the result says hidden=%v:\n%s", hiddenPage, saysHidden, text)
		}
		if !strings.Contains(lead, "Scrolled the container at "+list+" down 280 px") {
			t.Fatalf("the result does not say how far the list moved:\n%s", text)
		}
		if saysHidden && !strings.Contains(lead, "New content:") {
			// Nothing drawn in the background: show the tab, as the result says.
			mustCall(t, ctx, c, "browser_tabs", map[string]any{"action": "select", "tab": tab})
			text = mustCall(t, ctx, c, "browser_snapshot", map[string]any{"tab": tab})
			hiddenPage = strings.Contains(text, "Visibility: hidden")
			continue
		}
		if !strings.Contains(lead, "New content:") {
			t.Fatalf("rows scrolled in but the result says no new content:\n%s", text)
		}
	}
	row := ref(t, text, "button", "Row 150")
	clicked := mustCall(t, ctx, c, "browser_click", map[string]any{"tab": tab, "ref": row})
	if !strings.Contains(clicked, "Clicked row 150") {
		t.Fatalf("the page's handler did not record the click on row 150:\n%s", clicked)
	}
}
