//go:build !windows

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/test/desktop"
	"github.com/tether-browser/tether/test/mcpclient"
)

// appStdio is an MCP client over `tether mcp` (one session) that calls
// itself app in clientInfo.
func appStdio(t *testing.T, ctx context.Context, d *Daemon, app string) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(d.Bin, []string{config.EnvConfigDir + "=" + d.Paths.Dir}, "mcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initClientAs(t, ctx, c, app)
	return c
}

// appHTTP is an MCP client over streamable HTTP that calls itself app,
// in one MCP session: it speaks MCP 2025-11-25, the last protocol with
// sessions (a client of the stateless 2026-07-28 protocol is one session
// per app name).
func appHTTP(t *testing.T, ctx context.Context, d *Daemon, app string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(d.Record.URL()+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + d.Token}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := mcpclient.InitializeVersion(ctx, c, app, mcp.ProtocolVersion20251125); err != nil {
		t.Fatalf("initialize %s: %v", app, err)
	}
	return c
}

// openedTab is the number in a browser_tabs new result ("Opened tab 4.").
func openedTab(t *testing.T, out string) int {
	t.Helper()
	m := regexp.MustCompile(`^Opened tab (\d+)\.`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("not a new tab: %.200s", out)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// resultTab is the tab a page result is about ("Tab 4. Page content…",
// or "Tab 4: CHANGES ONLY…" for one that carries only changes).
func resultTab(out string) int {
	m := regexp.MustCompile(`(?m)^Tab (\d+)[.:] `).FindStringSubmatch(out)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// swEval evaluates js (a promise) in the extension's service worker over
// CDP, as the harness, and decodes its JSON value into out.
func swEval(t *testing.T, alloc context.Context, js string, out any) {
	t.Helper()
	raw, err := chromedp.Run(ExtensionWorker(t, alloc), chromedp.Evaluate[string]("(async () => JSON.stringify(await ("+js+")))()", chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate in the service worker: %v", err)
	}
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// groupsOf reads Chrome's tab groups and the Tether number of each grouped
// shared tab: group title → Tether tab numbers.
type tabGroup struct {
	Title  string `json:"title"`
	Window int    `json:"window"`
	Tabs   []int  `json:"tabs"`
}

func groupsOf(t *testing.T, alloc context.Context) []tabGroup {
	t.Helper()
	var groups []tabGroup
	swEval(t, alloc, `(async () => {
	  const state = (await chrome.storage.session.get('tabState')).tabState || {shared: {}};
	  const groups = await chrome.tabGroups.query({});
	  const out = [];
	  for (const g of groups) {
	    const tabs = await chrome.tabs.query({groupId: g.id});
	    out.push({title: g.title, window: g.windowId, tabs: tabs.map((x) => state.shared[x.id] || -1).sort((a, b) => a - b)});
	  }
	  return out.sort((a, b) => a.title.localeCompare(b.title));
	})()`, &groups)
	return groups
}

// TestSeveralApps: two AI apps (claude-code over stdio, twice, and cursor
// over HTTP) drive one browser at once. Each opens its tabs in the
// background, in its app's tab group; calls without a tab never cross over
// 50 interleaved and parallel rounds; naming another app's tab is refused
// with its owner; the user's shared tab serves both, with a lease while
// one acts on it; the window's API shows each tab's owner; the groups
// survive a killed service worker without duplicates.
func TestSeveralApps(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(fixtures.Close)
	b := StartBrowser(t, d)
	alloc := b.DevTools(t)
	ctx := Context(t, 4*time.Minute)

	// The user's own tab, shared from the popup; it stays in front.
	user := OpenTab(t, alloc, fixtures.URL+"/form.html")
	from := d.Log.Len()
	clickPopupSwitch(t, alloc, "Greeter")
	if _, _, err := d.Log.WaitFor(from, 10*time.Second, "shared tabs changed", "change=shared"); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(user, page.BringToFront, cdp.Empty{}); err != nil {
		t.Fatalf("bring the user's tab to the front: %v", err)
	}

	claude := appStdio(t, ctx, d, "claude-code")
	claude2 := appStdio(t, ctx, d, "claude-code")
	cursor := appHTTP(t, ctx, d, "cursor")

	list := mustCall(t, ctx, claude, "browser_tabs", nil)
	userTab := tabNumber(t, list, "Greeter")
	if !strings.Contains(list, "(current) Greeter") || !strings.Contains(list, "the user's") {
		t.Fatalf("the user's tab in front is not claude-code's current one:\n%s", list)
	}

	tabs := map[string]int{}
	for name, c := range map[string]*client.Client{"claude": claude, "claude2": claude2, "cursor": cursor} {
		tabs[name] = openedTab(t, mustCall(t, ctx, c, "browser_tabs", map[string]any{"action": "new", "url": fixtures.URL + "/page2.html?" + name}))
	}
	if visible, err := chromedp.Run(user, chromedp.Evaluate[string](`document.visibilityState`)); err != nil || visible != "visible" {
		t.Fatalf("the agents' new tabs took the front: the user's tab is %q (%v)", visible, err)
	}

	t.Logf("tabs %v; claude-code sees:\n%s", tabs, mustCall(t, ctx, claude, "browser_tabs", nil))
	t.Run("calls without a tab never cross, interleaved and parallel", func(t *testing.T) {
		crossings := 0
		for round := range 50 {
			var wg sync.WaitGroup
			var mu sync.Mutex
			for name, c := range map[string]*client.Client{"claude": claude, "claude2": claude2, "cursor": cursor} {
				tool := "browser_snapshot"
				if round%2 == 1 {
					tool = "browser_press_key" // an action, serialized per tab
				}
				args := map[string]any{}
				if tool == "browser_press_key" {
					args["key"] = "Shift"
				}
				run := func() {
					out, isErr := call(t, ctx, c, tool, args)
					if got := resultTab(out); isErr || got != tabs[name] {
						mu.Lock()
						crossings++
						mu.Unlock()
						t.Errorf("round %d: %s's %s went to tab %d, want its own %d: %.200s", round, name, tool, got, tabs[name], out)
					}
				}
				if round%3 == 0 {
					run() // interleaved, one after the other
					continue
				}
				wg.Add(1)
				go func() { defer wg.Done(); run() }()
			}
			wg.Wait()
		}
		t.Logf("50 rounds of 3 sessions: %d crossings", crossings)
	})

	t.Run("another app's tab is refused with its owner; a sibling session may name it", func(t *testing.T) {
		for _, tool := range []string{"browser_snapshot", "browser_press_key"} {
			args := map[string]any{"tab": tabs["claude"]}
			if tool == "browser_press_key" {
				args["key"] = "Shift"
			}
			out, isErr := call(t, ctx, cursor, tool, args)
			if !isErr || !strings.Contains(out, `belongs to "claude-code"`) || !strings.Contains(out, "browser_tabs") {
				t.Fatalf("cursor's %s on claude-code's tab: error=%v\n%s", tool, isErr, out)
			}
		}
		if out := mustCall(t, ctx, claude2, "browser_snapshot", map[string]any{"tab": tabs["claude"]}); resultTab(out) != tabs["claude"] {
			t.Fatalf("claude-code's other session naming the tab: %.200s", out)
		}
		list := mustCall(t, ctx, cursor, "browser_tabs", nil)
		for _, want := range []string{
			fmt.Sprintf("[%d] (current) Second page — %s/page2.html?cursor · yours", tabs["cursor"], fixtures.URL),
			fmt.Sprintf("[%d] Second page — %s/page2.html?claude · owner: claude-code", tabs["claude"], fixtures.URL),
			fmt.Sprintf("[%d] Greeter — %s/form.html · the user's", userTab, fixtures.URL),
		} {
			if !strings.Contains(list, want) {
				t.Errorf("cursor's tab list lacks %q:\n%s", want, list)
			}
		}
	})

	t.Run("the user's tab serves both apps, with a lease while one acts", func(t *testing.T) {
		snap := mustCall(t, ctx, claude, "browser_snapshot", map[string]any{"tab": userTab})
		name, greet := ref(t, snap, "textbox", "Your name"), ref(t, snap, "button", "Greet")
		mustCall(t, ctx, claude, "browser_type", map[string]any{"tab": userTab, "ref": name, "text": "Ada"})
		out, isErr := call(t, ctx, cursor, "browser_click", map[string]any{"tab": userTab, "ref": greet})
		if !isErr || !strings.Contains(out, `being used by "claude-code"`) || !strings.Contains(out, "Nothing was done") {
			t.Fatalf("cursor's click during claude-code's type-then-click: error=%v\n%s", isErr, out)
		}
		if out := mustCall(t, ctx, cursor, "browser_snapshot", map[string]any{"tab": userTab}); resultTab(out) != userTab {
			t.Fatalf("cursor's read of the leased tab: %.200s", out)
		}
		if out := mustCall(t, ctx, claude, "browser_click", map[string]any{"tab": userTab, "ref": greet}); !strings.Contains(out, "Hello, Ada") {
			t.Fatalf("claude-code's click after its typing:\n%s", out)
		}
	})

	t.Run("the window's API shows each tab's owner", func(t *testing.T) {
		st, err := localclient.New(d.Paths).State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		owners := map[int]string{}
		for _, p := range st.Profiles {
			for _, tab := range p.Tabs {
				owners[tab.Number] = tab.Owner
			}
		}
		if owners[tabs["claude"]] != "claude-code" || owners[tabs["claude2"]] != "claude-code" || owners[tabs["cursor"]] != "cursor" || owners[userTab] != "" {
			t.Fatalf("owners in the window's state: %v (tabs %v, the user's %d)", owners, tabs, userTab)
		}
		if strings.Join(st.Apps, ",") != "claude-code,cursor" {
			t.Fatalf("apps a tab can be given to: %v", st.Apps)
		}
	})

	t.Run("one tab group per app per window, stable across a killed service worker", func(t *testing.T) {
		want := fmt.Sprintf("claude-code:%v cursor:%v", sorted(tabs["claude"], tabs["claude2"]), []int{tabs["cursor"]})
		if got := groupsText(groupsOf(t, alloc)); got != want {
			t.Fatalf("tab groups %s, want %s (the user's tab %d in none)", got, want, userTab)
		}
		StopServiceWorkers(t, user)
		more := openedTab(t, mustCall(t, ctx, claude, "browser_tabs", map[string]any{"action": "new", "url": fixtures.URL + "/page2.html?more"}))
		want = fmt.Sprintf("claude-code:%v cursor:%v", sorted(tabs["claude"], tabs["claude2"], more), []int{tabs["cursor"]})
		if got := groupsText(groupsOf(t, alloc)); got != want {
			t.Fatalf("after the service worker restarted: tab groups %s, want %s", got, want)
		}
	})

	t.Run("a tab given back to the user leaves its group and serves every app", func(t *testing.T) {
		if err := localclient.New(d.Paths).SetTabOwner(ctx, apitype.TabOwnerRequest{Profile: "tether-browser", Tab: tabs["claude2"]}); err != nil {
			t.Fatal(err)
		}
		for _, g := range groupsOf(t, alloc) {
			for _, n := range g.Tabs {
				if n == tabs["claude2"] {
					t.Fatalf("tab %d is still in group %q", n, g.Title)
				}
			}
		}
		if out := mustCall(t, ctx, cursor, "browser_snapshot", map[string]any{"tab": tabs["claude2"]}); resultTab(out) != tabs["claude2"] {
			t.Fatalf("cursor on the tab given back: %.200s", out)
		}
	})
}

func sorted(ns ...int) []int {
	out := append([]int(nil), ns...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func groupsText(gs []tabGroup) string {
	var parts []string
	for _, g := range gs {
		parts = append(parts, fmt.Sprintf("%s:%v", g.Title, g.Tabs))
	}
	return strings.Join(parts, " ")
}

// TestCloseAgentTabs: with closeAgentTabs on, the tabs an app opened are
// closed once its last session has ended (here after 1 s), and only them:
// an HTTP client's DELETE, and a `tether mcp` bridge's leaving.
func TestCloseAgentTabs(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	dir := filepath.Join(t.TempDir(), "config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"closeAgentTabs": true, "closeAgentTabsAfterSeconds": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := StartDaemonAt(t, Binary(t), dir, 0, "--auto-approve-profiles", "--unattended=allow")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(fixtures.Close)
	StartBrowser(t, d)
	ctx := Context(t, 2*time.Minute)
	claude := appStdio(t, ctx, d, "claude-code")
	cursor := appHTTP(t, ctx, d, "cursor")
	kept := openedTab(t, mustCall(t, ctx, claude, "browser_tabs", map[string]any{"action": "new", "url": fixtures.URL + "/page2.html?claude"}))
	closed := openedTab(t, mustCall(t, ctx, cursor, "browser_tabs", map[string]any{"action": "new", "url": fixtures.URL + "/page2.html?cursor"}))

	// cursor ends its only session (DELETE, as MCP 2025-11-25 asks of a
	// client that leaves; mcp-go's own DELETE carries no Authorization).
	sid := cursor.GetTransport().(*transport.StreamableHTTP).GetSessionId()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, d.Record.URL()+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+d.Token)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", mcp.ProtocolVersion20251125)
	from := d.Log.Len()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE of cursor's session: %s", resp.Status)
	}
	if _, _, err := d.Log.WaitFor(from, 20*time.Second, "closed an app's tab", "app=cursor", fmt.Sprintf("tab=%d", closed)); err != nil {
		t.Fatal(err)
	}
	list := mustCall(t, ctx, claude, "browser_tabs", nil)
	if strings.Contains(list, fmt.Sprintf("[%d]", closed)) || !strings.Contains(list, fmt.Sprintf("[%d]", kept)) {
		t.Fatalf("after cursor's last session ended, want its tab %d closed and claude-code's %d kept:\n%s", closed, kept, list)
	}

	// claude-code leaves: its `tether mcp` ends its MCP session as it exits
	// (DELETE); its tab is closed too.
	from = d.Log.Len()
	if err := claude.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Log.WaitFor(from, 20*time.Second, "closed an app's tab", "app=claude-code", fmt.Sprintf("tab=%d", kept)); err != nil {
		t.Fatal(err)
	}
}

// TestTabGroupsHeaded: with a window (Xvfb), an app's tabs are in its
// group; a tab it opens from its tab (target=_blank) is its too and joins
// the group; a popup window's tab is its too but stays ungrouped (groups
// live only in normal windows).
func TestTabGroupsHeaded(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(fixtures.Close)
	b := StartBrowser(t, d, BrowserOptions{Display: desktop.Xvfb(t)})
	alloc := b.DevTools(t)
	ctx := Context(t, 2*time.Minute)
	claude := appStdio(t, ctx, d, "claude-code")
	cursor := appHTTP(t, ctx, d, "cursor")

	opener := openedTab(t, mustCall(t, ctx, claude, "browser_tabs", map[string]any{"action": "new", "url": fixtures.URL + "/opener.html"}))
	theirs := openedTab(t, mustCall(t, ctx, cursor, "browser_tabs", map[string]any{"action": "new", "url": fixtures.URL + "/page2.html?cursor"}))
	snap := mustCall(t, ctx, claude, "browser_snapshot", nil)
	blank := mustCall(t, ctx, claude, "browser_click", map[string]any{"ref": ref(t, snap, "link", "Open in a new tab")})
	t.Logf("target=_blank click:\n%.300s", blank)
	// A popup window needs user activation (Chrome blocks window.open from
	// a synthetic click): here the user clicks in the agent's tab.
	mustCall(t, ctx, claude, "browser_tabs", map[string]any{"action": "select", "tab": opener})
	tab, _ := PageTab(t, alloc, "opener.html")
	if err := chromedp.Do(tab, chromedp.Click("button")); err != nil {
		t.Fatalf("the user's click on the popup button: %v", err)
	}

	// Wait for both tabs' titles, not only their URLs: a tab is reported
	// when it opens, and its title only when its page has loaded.
	list := ""
	loaded := regexp.MustCompile(`\] Second page — [^\n]*page2\.html\?(blank|popup)`)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		list = mustCall(t, ctx, claude, "browser_tabs", nil)
		if len(loaded.FindAllString(list, -1)) == 2 || time.Now().After(deadline) {
			break
		}
	}
	blankTab, popupTab := tabNumber(t, list, "page2.html?blank"), tabNumber(t, list, "page2.html?popup")
	for _, n := range []int{blankTab, popupTab} {
		if !strings.Contains(list, fmt.Sprintf("[%d] Second page", n)) || !regexp.MustCompile(fmt.Sprintf(`\[%d\][^\n]*· yours`, n)).MatchString(list) {
			t.Errorf("tab %d opened from claude-code's tab is not claude-code's:\n%s", n, list)
		}
	}
	want := fmt.Sprintf("claude-code:%v cursor:%v", sorted(opener, blankTab), []int{theirs})
	if got := groupsText(groupsOf(t, alloc)); got != want {
		t.Fatalf("tab groups %s, want %s (the popup window's tab %d in none)", got, want, popupTab)
	}
}

// TestRefOfAnotherAppsTab: a ref names its tab (refs are numbered per
// profile, so another app can guess one), but the tab a call acts in is
// the one the daemon checked: another app's ref, passed without a tab or
// with the caller's own, is refused and changes nothing there, whether
// the call reads (browser_snapshot with ref) or acts (type, click).
func TestRefOfAnotherAppsTab(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	t.Cleanup(fixtures.Close)
	StartBrowser(t, d)
	ctx := Context(t, 2*time.Minute)
	claude := appStdio(t, ctx, d, "claude-code")
	cursor := appHTTP(t, ctx, d, "cursor")

	theirs := openedTab(t, mustCall(t, ctx, claude, "browser_tabs", map[string]any{"action": "new", "url": fixtures.URL + "/form.html"}))
	own := openedTab(t, mustCall(t, ctx, cursor, "browser_tabs", map[string]any{"action": "new", "url": fixtures.URL + "/page2.html"}))
	snap := mustCall(t, ctx, claude, "browser_snapshot", nil)
	name, greet := ref(t, snap, "textbox", "Your name"), ref(t, snap, "button", "Greet")

	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_snapshot", map[string]any{"ref": greet}},
		{"browser_type", map[string]any{"ref": name, "text": "Mallory"}},
		{"browser_click", map[string]any{"ref": greet}},
		{"browser_click", map[string]any{"ref": greet, "tab": own}},
	} {
		out, isErr := call(t, ctx, cursor, tc.tool, tc.args)
		if !isErr || strings.Contains(out, "Greeter") || strings.Contains(out, "Mallory") {
			t.Errorf("cursor's %s %v with claude-code's ref (tab %d; cursor's own is %d) was not refused: error=%v\n%.400s", tc.tool, tc.args, theirs, own, isErr, out)
		}
	}
	if out := mustCall(t, ctx, claude, "browser_snapshot", nil); resultTab(out) != theirs || strings.Contains(out, "Mallory") || strings.Contains(out, "Hello") {
		t.Fatalf("claude-code's tab after cursor's calls:\n%s", out)
	}
}
