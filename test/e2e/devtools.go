//go:build !windows

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// DevTools attaches the test harness to the browser over CDP. Only the
// harness uses CDP — to act as the user (open the popup, click its toggle)
// and to force failures (stop the service worker); the product never does.
func (b *Browser) DevTools(t testing.TB) context.Context {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(b.UserDataDir, "DevToolsActivePort"))
	if err != nil {
		t.Fatalf("DevToolsActivePort: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 2 {
		t.Fatalf("DevToolsActivePort: %q", raw)
	}
	alloc, cancel := remote.NewAllocator(context.Background(), "ws://127.0.0.1:"+lines[0]+lines[1])
	t.Cleanup(cancel)
	return alloc
}

// OpenTab opens url in a new tab, as the user would, and returns its
// chromedp context.
func OpenTab(t testing.TB, alloc context.Context, url string) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	return ctx
}

// StopServiceWorkers stops every service worker, as Chrome does to an idle
// one, through a page's CDP session.
func StopServiceWorkers(t testing.TB, page context.Context) {
	t.Helper()
	if _, err := chromedp.Call(page, serviceworker.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("ServiceWorker.enable: %v", err)
	}
	if _, err := chromedp.Call(page, serviceworker.StopAllWorkers, cdp.Empty{}); err != nil {
		t.Fatalf("ServiceWorker.stopAllWorkers: %v", err)
	}
}

// PageText returns textContent of selector in the top document of the page
// whose URL contains urlPart, read over CDP by the harness (the page's own
// state proves its handlers ran).
func PageText(t testing.TB, alloc context.Context, urlPart, selector string) string {
	t.Helper()
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	targets, err := chromedp.Targets(bctx)
	if err != nil {
		t.Fatalf("list targets: %v", err)
	}
	for _, ti := range targets {
		if ti.Type != "page" || !strings.Contains(ti.URL, urlPart) {
			continue
		}
		pctx, cancel := chromedp.NewContext(alloc, chromedp.WithTargetID(ti.TargetID), chromedp.WithDetachOnCancel())
		defer cancel()
		js := fmt.Sprintf(`(() => { const el = document.querySelector(%q); return el ? el.textContent : null; })()`, selector)
		v, err := chromedp.Run(pctx, chromedp.Evaluate[*string](js))
		if err != nil {
			t.Fatalf("read %s in %s: %v", selector, ti.URL, err)
		}
		if v == nil {
			t.Fatalf("no element %s in %s", selector, ti.URL)
		}
		return *v
	}
	var urls []string
	for _, ti := range targets {
		urls = append(urls, string(ti.Type)+" "+ti.URL)
	}
	t.Fatalf("no page whose URL contains %q; targets: %v", urlPart, urls)
	return ""
}
