package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
)

// crossSiteFixture starts a daemon and a browser and has an MCP client
// open testdata/page?frame=<testdata/framePage on localhost>: the page is
// on 127.0.0.1, so the frame is from another site (an out-of-process
// frame). It returns the client and its context.
func crossSiteFixture(t *testing.T, page, framePage string) (context.Context, *client.Client) {
	t.Helper()
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	pageURL := crossSiteURL(t, page, framePage)
	StartBrowser(t, d)
	ctx := Context(t, 3*time.Minute)
	c := stdioClient(t, ctx, d)
	mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": pageURL})
	return ctx, c
}

// crossSiteURL serves testdata twice and returns the URL of page on
// 127.0.0.1 with ?frame= framePage on localhost (another site).
func crossSiteURL(t *testing.T, page, framePage string) string {
	t.Helper()
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(fixtures.Close)
	other := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(other.Close)
	frameURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) + "/" + framePage
	return fixtures.URL + "/" + page + "?frame=" + url.QueryEscape(frameURL)
}

// snapshotWith takes snapshots until one holds every want (frames load on
// their own time), for 10 s at most, and returns the last one.
func snapshotWith(t *testing.T, ctx context.Context, c *client.Client, wants ...string) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; {
		snap := mustCall(t, ctx, c, "browser_snapshot", nil)
		all := true
		for _, w := range wants {
			all = all && strings.Contains(snap, w)
		}
		if all || time.Now().After(deadline) {
			return snap
		}
		time.Sleep(200 * time.Millisecond)
	}
}
