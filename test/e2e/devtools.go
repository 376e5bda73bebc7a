//go:build !windows

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/serviceworker"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/tether-browser/tether/broker"
)

// DevTools attaches the test harness to the browser over CDP. Only the
// harness uses CDP — to act as the user (open the popup, click its toggle)
// and to force failures (stop the service worker); the product never does.
func (b *Browser) DevTools(t testing.TB) context.Context {
	t.Helper()
	url, err := DevToolsURL(b.UserDataDir, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	alloc, cancel := remote.NewAllocator(context.Background(), url)
	t.Cleanup(cancel)
	return alloc
}

// DevToolsURL waits up to timeout for the browser whose profile folder is
// userDataDir to write its DevTools port (DevToolsActivePort: the port, then
// the browser target's path; the file appears before it is complete) and
// returns the browser's WebSocket URL.
func DevToolsURL(userDataDir string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		raw, err := os.ReadFile(filepath.Join(userDataDir, "DevToolsActivePort"))
		if lines := strings.Split(strings.TrimSpace(string(raw)), "\n"); err == nil && len(lines) == 2 && strings.HasPrefix(lines[1], "/devtools/browser/") {
			return "ws://127.0.0.1:" + lines[0] + lines[1], nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no complete DevToolsActivePort in %s after %v (%q, %v)", userDataDir, timeout, raw, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
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

// ExtensionWorker attaches the harness to the extension's running service
// worker (until the test ends) and returns its chromedp context; it fails
// the test when none runs.
func ExtensionWorker(t testing.TB, alloc context.Context) context.Context {
	t.Helper()
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	targets, err := chromedp.Targets(bctx)
	if err != nil {
		t.Fatal(err)
	}
	var id target.ID
	for _, ti := range targets {
		if ti.Type == "service_worker" && strings.HasPrefix(ti.URL, "chrome-extension://"+broker.DefaultExtensionID+"/") {
			id = ti.TargetID
		}
	}
	if id == "" {
		t.Fatal("no service worker of the extension is running")
	}
	sw, cancelSW := chromedp.NewContext(alloc, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	t.Cleanup(cancelSW)
	// A worker that has just started is a target before its extension
	// APIs are: wait for them (else "chrome is not defined").
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		ready, err := chromedp.Run(sw, chromedp.Evaluate[bool](`typeof chrome === 'object' && !!chrome.storage && !!chrome.runtime`))
		if err == nil && ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the extension's service worker has no extension APIs after 30 s (%v)", err)
		}
	}
	return sw
}

// findPage returns the id and URL of the page whose URL contains urlPart,
// or an error listing the browser's targets.
func findPage(alloc context.Context, urlPart string) (target.ID, string, error) {
	bctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	targets, err := chromedp.Targets(bctx)
	if err != nil {
		return "", "", fmt.Errorf("list targets: %w", err)
	}
	var urls []string
	for _, ti := range targets {
		if ti.Type == "page" && strings.Contains(ti.URL, urlPart) {
			return ti.TargetID, ti.URL, nil
		}
		urls = append(urls, string(ti.Type)+" "+ti.URL)
	}
	return "", "", fmt.Errorf("no page whose URL contains %q; targets: %v", urlPart, urls)
}

// PageTab attaches the harness to the page whose URL contains urlPart (it
// stays attached until the test ends) and returns its chromedp context and
// URL; it fails the test when there is no such page.
func PageTab(t testing.TB, alloc context.Context, urlPart string) (context.Context, string) {
	t.Helper()
	id, url, err := findPage(alloc, urlPart)
	if err != nil {
		t.Fatal(err)
	}
	tab, cancel := chromedp.NewContext(alloc, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	t.Cleanup(cancel)
	return tab, url
}

// PageText returns textContent of selector in the top document of the page
// whose URL contains urlPart, read over CDP by the harness (the page's own
// state proves its handlers ran).
func PageText(t testing.TB, alloc context.Context, urlPart, selector string) string {
	t.Helper()
	pctx, url := PageTab(t, alloc, urlPart)
	js := fmt.Sprintf(`(() => { const el = document.querySelector(%q); return el ? el.textContent : null; })()`, selector)
	v, err := chromedp.Run(pctx, chromedp.Evaluate[*string](js))
	if err != nil {
		t.Fatalf("read %s in %s: %v", selector, url, err)
	}
	if v == nil {
		t.Fatalf("no element %s in %s", selector, url)
	}
	return *v
}

// AnswerDialogsAsUser accepts, for as long as the test runs, every dialog
// the browser shows in the page whose URL contains urlPart, as a user
// clicking OK would (Tether leaves a dialog a page opens before its hooks
// are in to the user).
func AnswerDialogsAsUser(t testing.TB, alloc context.Context, urlPart string) {
	t.Helper()
	ctx, cancel := context.WithCancel(alloc)
	t.Cleanup(cancel)
	if err := AcceptDialogs(ctx, alloc, urlPart); err != nil {
		t.Fatal(err)
	}
}

// AcceptDialogs attaches to the page whose URL contains urlPart and accepts
// every dialog the browser shows there until ctx ends.
func AcceptDialogs(ctx, alloc context.Context, urlPart string) error {
	id, _, err := findPage(alloc, urlPart)
	if err != nil {
		return err
	}
	tab, cancelTab := chromedp.NewContext(alloc, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	opened := make(chan struct{}, 16)
	if err := chromedp.Listen(tab, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			opened <- struct{}{}
		}
	}); err != nil {
		cancelTab()
		return fmt.Errorf("watch dialogs: %w", err)
	}
	go func() {
		defer cancelTab()
		for {
			select {
			case <-opened:
				// Not from the listener itself: it runs on the connection's reader.
				_, _ = chromedp.Call(tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			case <-ctx.Done():
				return
			case <-tab.Done():
				return
			}
		}
	}()
	return nil
}
