package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// clock is a settable test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

var (
	claude  = Caller{Session: "s-claude", MCPSession: "mcp-claude", App: "claude-code"}
	claude2 = Caller{Session: "s-claude-2", MCPSession: "mcp-claude-2", App: "claude-code"}
	cursor  = Caller{Session: "s-cursor", MCPSession: "mcp-cursor", App: "cursor"}
)

// callAsync makes a call of caller in the background; the result arrives
// on the returned channel.
func callAsync(b *Broker, c Caller, method protocol.Method, params any) <-chan error {
	done := make(chan error, 1)
	go func() {
		var r protocol.PageResult
		done <- b.Call(WithCaller(context.Background(), c), "", method, params, &r, 5*time.Second)
	}()
	return done
}

// serveOne reads one request, checks its tab, and answers with a page of
// that tab.
func serveOne(t *testing.T, f *fakeExt, wantTab int) protocol.Request {
	t.Helper()
	r := f.readRequest()
	var p protocol.TabParams
	_ = json.Unmarshal(r.Params, &p)
	if p.Tab != wantTab {
		t.Fatalf("%s went to tab %d, want %d (params %s)", r.Method, p.Tab, wantTab, r.Params)
	}
	f.answer(r.ID, protocol.PageResult{Tab: p.Tab})
	return r
}

func mustOK(t *testing.T, done <-chan error) {
	t.Helper()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestSessionsNeverCross: each session's calls without a tab go to its own
// tab once it has one, the user's tab in front before that; another app's
// tab is refused by name; a sibling session of the same app may use a tab
// only by naming it; and tabs_list marks the current tab per session.
func TestSessionsNeverCross(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	user := protocol.TabInfo{Tab: 1, URL: "https://user.example/", Active: true, Current: true}
	f, _ := connect(t, b, url, "11111111-aaaa", "Work", user)

	// Before it has a tab, a session's call goes to the user's tab in front.
	done := callAsync(b, cursor, protocol.MethodSnapshot, &protocol.TabParams{})
	serveOne(t, f, 1)
	mustOK(t, done)

	// browser_tabs new: the tab is claude-code's, opened in the background.
	done = callAsync(b, claude, protocol.MethodTabNew, &protocol.TabNewParams{URL: "https://a.example/"})
	r := f.readRequest()
	var np protocol.TabNewParams
	_ = json.Unmarshal(r.Params, &np)
	if np.Owner == nil || *np.Owner != (protocol.TabOwner{App: "claude-code", Session: "s-claude"}) {
		t.Fatalf("tab_new owner %+v, want claude-code's session", np.Owner)
	}
	mine := protocol.TabInfo{Tab: 5, URL: "https://a.example/", Owner: np.Owner}
	f.send(protocol.TabsChanged{Type: protocol.TypeTabsChanged, Change: protocol.TabOpened, Tab: 5, Tabs: []protocol.TabInfo{user, mine}})
	f.answer(r.ID, protocol.PageResult{Tab: 5})
	mustOK(t, done)

	// 20 interleaved rounds: neither session ever reaches the other's tab.
	for range 20 {
		done = callAsync(b, claude, protocol.MethodClick, &protocol.ClickParams{})
		serveOne(t, f, 5)
		mustOK(t, done)
		done = callAsync(b, cursor, protocol.MethodSnapshot, &protocol.TabParams{})
		serveOne(t, f, 1)
		mustOK(t, done)
	}

	// A negative tab number is no tab: refused, never the current tab.
	for _, c := range []Caller{claude, {}} {
		err := b.Call(WithCaller(context.Background(), c), "", protocol.MethodClick, &protocol.ClickParams{TabParams: protocol.TabParams{Tab: -1}}, nil, time.Second)
		if !errors.Is(err, ErrUnknownTab) || !strings.Contains(err.Error(), "start at 1") {
			t.Fatalf("a click on tab -1 (session %q): %v", c.Session, err)
		}
	}

	// Naming another app's tab is refused, reads too, with the owner.
	for _, m := range []protocol.Method{protocol.MethodClick, protocol.MethodSnapshot} {
		err := b.Call(WithCaller(context.Background(), cursor), "", m, &protocol.ClickParams{TabParams: protocol.TabParams{Tab: 5}}, nil, time.Second)
		if !errors.Is(err, ErrNotYourTab) || !strings.Contains(err.Error(), `"claude-code"`) || !strings.Contains(err.Error(), "browser_tabs") {
			t.Fatalf("cursor's %s on claude-code's tab: %v", m, err)
		}
	}

	// A sibling session of the same app: not by default, by name yes.
	done = callAsync(b, claude2, protocol.MethodSnapshot, &protocol.TabParams{})
	serveOne(t, f, 1)
	mustOK(t, done)
	done = callAsync(b, claude2, protocol.MethodSnapshot, &protocol.TabParams{Tab: 5})
	serveOne(t, f, 5)
	mustOK(t, done)

	// Each session sees its own current tab.
	cur := func(c Caller) int {
		for _, tab := range b.ProfilesFor(c)[0].Tabs {
			if tab.Current {
				return tab.Tab
			}
		}
		return 0
	}
	if cur(claude) != 5 || cur(cursor) != 1 || cur(claude2) != 5 {
		t.Fatalf("current tabs: claude %d, cursor %d, claude-2 %d; want 5, 1, 5", cur(claude), cur(cursor), cur(claude2))
	}

	// A tab list from the extension (browser_tabs with a profile, close,
	// select) marks the extension's own current tab (the one used last by
	// anyone); each session's copy marks the tab its calls address.
	for _, c := range []struct {
		caller Caller
		want   int
	}{{claude, 5}, {cursor, 1}} {
		got := make(chan protocol.TabsListResult, 1)
		go func() {
			var res protocol.TabsListResult
			if err := b.Call(WithCaller(context.Background(), c.caller), "", protocol.MethodTabsList, &protocol.TabsListParams{}, &res, 5*time.Second); err != nil {
				t.Error(err)
			}
			got <- res
		}()
		r := f.readRequest()
		extCurrent := 6 - c.want // the other tab of 1 and 5
		f.answer(r.ID, protocol.TabsListResult{Tabs: []protocol.TabInfo{
			{Tab: 1, URL: user.URL, Active: true, Current: extCurrent == 1},
			{Tab: 5, URL: mine.URL, Owner: mine.Owner, Current: extCurrent == 5}}})
		res := <-got
		var marked []int
		for _, tab := range res.Tabs {
			if tab.Current {
				marked = append(marked, tab.Tab)
			}
		}
		if len(marked) != 1 || marked[0] != c.want {
			t.Fatalf("%s's tabs_list marks %v as current; want [%d]", c.caller.App, marked, c.want)
		}
	}
}

// TestNavigateWithoutTabOpensOwnTab: a session without a tab of its own
// never navigates the user's tab away: its browser_navigate opens a tab.
func TestNavigateWithoutTabOpensOwnTab(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "11111111-aaaa", "Work", protocol.TabInfo{Tab: 1, Active: true, Current: true})
	done := callAsync(b, cursor, protocol.MethodNavigate, &protocol.NavigateParams{URL: "https://c.example/"})
	r := f.readRequest()
	var p protocol.NavigateParams
	_ = json.Unmarshal(r.Params, &p)
	if !p.NewTab || p.Tab != 0 || p.Owner == nil || p.Owner.App != "cursor" {
		t.Fatalf("navigate params %s: want a new tab of cursor's", r.Params)
	}
	f.send(protocol.TabsChanged{Type: protocol.TypeTabsChanged, Change: protocol.TabOpened, Tab: 7,
		Tabs: []protocol.TabInfo{{Tab: 1, Active: true, Current: true}, {Tab: 7, Owner: p.Owner}}})
	f.answer(r.ID, protocol.PageResult{Tab: 7})
	mustOK(t, done)
	// The opened tab is its current one from now on.
	done = callAsync(b, cursor, protocol.MethodNavigate, &protocol.NavigateParams{URL: "https://c.example/2"})
	r = f.readRequest()
	p = protocol.NavigateParams{}
	_ = json.Unmarshal(r.Params, &p)
	if p.NewTab || p.Tab != 7 {
		t.Fatalf("second navigate params %s: want tab 7", r.Params)
	}
	f.answer(r.ID, protocol.PageResult{Tab: 7})
	mustOK(t, done)
}

// TestNoOwnTab: with no tab of its own and no user's tab in front, a call
// without a tab says what to do.
func TestNoOwnTab(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	connect(t, b, url, "11111111-aaaa", "Work", protocol.TabInfo{Tab: 1, Current: true})
	err := b.Call(WithCaller(context.Background(), cursor), "", protocol.MethodSnapshot, &protocol.TabParams{}, nil, time.Second)
	if !errors.Is(err, ErrNoOwnTab) || !strings.Contains(err.Error(), `browser_tabs {action: "new"`) {
		t.Fatalf("got %v", err)
	}
	// Tether's own calls (no session) keep the extension's current tab.
	_, err = b.Resolve(Caller{}, "", 0, true, false)
	if err != nil {
		t.Fatal(err)
	}
}

// TestLeaseOnSharedTab: while one session acts on the user's tab, and for
// the lease window after, another session's action there is refused with
// who and since when; its reads proceed; after the window it may act.
func TestLeaseOnSharedTab(t *testing.T) {
	clk := &clock{now: time.Date(2026, 12, 1, 14, 2, 11, 0, time.UTC)}
	b, url := newTestBroker(t, Config{AutoApprove: true, Now: clk.Now})
	f, _ := connect(t, b, url, "11111111-aaaa", "Work", protocol.TabInfo{Tab: 1, Active: true, Current: true})

	typing := callAsync(b, claude, protocol.MethodType, &protocol.TypeParams{Ref: "e1", Text: "hi"})
	r := f.readRequest() // running now, not answered yet
	click := &protocol.ClickParams{TabParams: protocol.TabParams{Tab: 1}, Ref: "e2"}
	err := b.Call(WithCaller(context.Background(), cursor), "", protocol.MethodClick, click, nil, time.Second)
	if !errors.Is(err, ErrTabInUse) || !strings.Contains(err.Error(), `"claude-code"`) || !strings.Contains(err.Error(), "since 14:02:11") ||
		!strings.Contains(err.Error(), "running there now") || !strings.Contains(err.Error(), "Nothing was done") {
		t.Fatalf("cursor's click while claude-code types: %v", err)
	}
	read := callAsync(b, cursor, protocol.MethodSnapshot, &protocol.TabParams{Tab: 1})
	serveOne(t, f, 1)
	mustOK(t, read)
	f.answer(r.ID, protocol.PageResult{Tab: 1})
	mustOK(t, typing)

	// The same session goes on (its click after typing) without a wait.
	done := callAsync(b, claude, protocol.MethodClick, &protocol.ClickParams{Ref: "e2"})
	serveOne(t, f, 1)
	mustOK(t, done)

	clk.advance(DefaultLeaseWindow - time.Second)
	if err := b.Call(WithCaller(context.Background(), cursor), "", protocol.MethodClick, click, nil, time.Second); !errors.Is(err, ErrTabInUse) {
		t.Fatalf("within the lease window: %v", err)
	}
	// A session without a tab of its own is not sent to a leased tab either.
	if _, err := b.Resolve(cursor, "", 0, true, false); !errors.Is(err, ErrTabInUse) {
		t.Fatalf("resolving cursor's action without a tab: %v", err)
	}
	clk.advance(2 * time.Second)
	done = callAsync(b, cursor, protocol.MethodClick, click)
	serveOne(t, f, 1)
	mustOK(t, done)
}

// TestCloseAgentTabs: once an app's last session ends, its tabs (and only
// them) are closed after the delay; a session of it calling again first
// keeps them.
func TestCloseAgentTabs(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true, CloseAgentTabsAfter: 50 * time.Millisecond})
	own := &protocol.TabOwner{App: "claude-code", Session: "s-claude"}
	f, _ := connect(t, b, url, "11111111-aaaa", "Work",
		protocol.TabInfo{Tab: 1, Active: true},
		protocol.TabInfo{Tab: 2, Owner: own},
		protocol.TabInfo{Tab: 3, Owner: &protocol.TabOwner{App: "cursor", Session: "s-cursor"}},
		protocol.TabInfo{Tab: 4, Owner: &protocol.TabOwner{App: "claude-code"}})
	for _, c := range []Caller{claude, claude2} {
		done := callAsync(b, c, protocol.MethodSnapshot, &protocol.TabParams{Tab: 2})
		serveOne(t, f, 2)
		mustOK(t, done)
	}
	b.SessionEnded(claude.MCPSession) // claude-2 is still there: nothing happens
	b.SessionEnded(claude2.MCPSession)
	var closed []int
	for range 2 {
		r := f.readRequest()
		var p protocol.TabParams
		_ = json.Unmarshal(r.Params, &p)
		if r.Method != protocol.MethodTabClose {
			t.Fatalf("got %s, want tab_close", r.Method)
		}
		closed = append(closed, p.Tab)
		f.answer(r.ID, protocol.TabsListResult{Tabs: []protocol.TabInfo{}})
	}
	if len(closed) != 2 || closed[0]+closed[1] != 6 {
		t.Fatalf("closed tabs %v, want claude-code's 2 and 4", closed)
	}

	// A session of the app that calls again within the delay keeps them.
	done := callAsync(b, cursor, protocol.MethodSnapshot, &protocol.TabParams{Tab: 3})
	serveOne(t, f, 3)
	mustOK(t, done)
	b.SessionEnded(cursor.MCPSession)
	done = callAsync(b, Caller{Session: "s-cursor-2", App: "cursor"}, protocol.MethodSnapshot, &protocol.TabParams{Tab: 3})
	serveOne(t, f, 3)
	mustOK(t, done)
	b.mu.Lock()
	pending := len(b.closeTimers)
	b.mu.Unlock()
	if pending != 0 {
		t.Fatalf("%d closings still pending after cursor came back", pending)
	}
}

// TestOwnTabFoundAgain: a session that lost its current tab (the daemon
// restarted; `tether mcp` keeps its session key and opens a new MCP
// session) goes back to its own tab, not to the user's; and its MCP
// session ending is recognised by the MCP session's id.
func TestOwnTabFoundAgain(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "11111111-aaaa", "Work",
		protocol.TabInfo{Tab: 1, Active: true, Current: true},
		protocol.TabInfo{Tab: 3, Owner: &protocol.TabOwner{App: "claude-code", Session: "s-claude"}},
		protocol.TabInfo{Tab: 4, Owner: &protocol.TabOwner{App: "claude-code", Session: "s-claude"}})
	c := Caller{Session: "s-claude", MCPSession: "mcp-1", App: "claude-code"}
	done := callAsync(b, c, protocol.MethodSnapshot, &protocol.TabParams{})
	serveOne(t, f, 4)
	mustOK(t, done)
	b.mu.Lock()
	_, known := b.sessions["s-claude"]
	b.mu.Unlock()
	b.SessionEnded("mcp-1")
	b.mu.Lock()
	_, still := b.sessions["s-claude"]
	b.mu.Unlock()
	if !known || still {
		t.Fatalf("session known %v, still known after its MCP session ended %v", known, still)
	}
}

// TestUnreportedTabRefused: a tab the extension shared but has not reported
// yet (its tabs_changed is coalesced for up to 100 ms: a popup another
// app's page just opened, numbered next) is refused by number before
// anything reaches the extension, which does not know who calls; once
// reported, it is refused as another app's.
func TestUnreportedTabRefused(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	user := protocol.TabInfo{Tab: 1, URL: "https://user.example/", Active: true, Current: true}
	mine := protocol.TabInfo{Tab: 5, URL: "https://a.example/", Owner: &protocol.TabOwner{App: "claude-code", Session: "s-claude"}}
	f, _ := connect(t, b, url, "11111111-aaaa", "Work", user, mine)

	// Tab 6, claude-code's popup, is shared in Chrome but not reported yet.
	for _, m := range []protocol.Method{protocol.MethodSnapshot, protocol.MethodClick} {
		err := b.Call(WithCaller(context.Background(), cursor), "", m, &protocol.ClickParams{TabParams: protocol.TabParams{Tab: 6}}, nil, time.Second)
		if !errors.Is(err, ErrUnknownTab) || !strings.Contains(err.Error(), "browser_tabs") {
			t.Fatalf("cursor's %s on the unreported tab 6: %v, want ErrUnknownTab", m, err)
		}
		if _, err := b.Resolve(cursor, "", 6, m.Mutates(), false); !errors.Is(err, ErrUnknownTab) {
			t.Fatalf("Resolve of cursor's %s on tab 6: %v, want ErrUnknownTab", m, err)
		}
	}
	// Nothing reached the extension: its next request is this one.
	done := callAsync(b, claude, protocol.MethodSnapshot, &protocol.TabParams{Tab: 5})
	serveOne(t, f, 5)
	mustOK(t, done)

	// Reported: another app's tab, refused with its owner.
	popup := protocol.TabInfo{Tab: 6, URL: "https://login.a.example/", Owner: mine.Owner}
	f.send(protocol.TabsChanged{Type: protocol.TypeTabsChanged, Change: protocol.TabOpened, Tab: 6, Tabs: []protocol.TabInfo{user, mine, popup}})
	// The socket is read in order: once a later answer is in, so is the list.
	done = callAsync(b, claude, protocol.MethodSnapshot, &protocol.TabParams{Tab: 5})
	serveOne(t, f, 5)
	mustOK(t, done)
	if err := b.Call(WithCaller(context.Background(), cursor), "", protocol.MethodSnapshot, &protocol.TabParams{Tab: 6}, nil, time.Second); !errors.Is(err, ErrNotYourTab) {
		t.Fatalf("cursor's snapshot of claude-code's reported tab 6: %v, want ErrNotYourTab", err)
	}
	// Its owner uses it.
	done = callAsync(b, claude, protocol.MethodSnapshot, &protocol.TabParams{Tab: 6})
	serveOne(t, f, 6)
	mustOK(t, done)
}

// TestSessionOpenedListsTheApp: an app that only initialized is listed
// among the apps (tether status, the window), until its MCP session ends;
// a client without a name is not, and Tether itself (no session) is
// ignored. Coming back cancels the closing of the app's tabs, as a call does.
func TestSessionOpenedListsTheApp(t *testing.T) {
	b, _ := newTestBroker(t, Config{AutoApprove: true, CloseAgentTabsAfter: time.Hour})
	b.SessionOpened(Caller{})
	b.SessionOpened(Caller{Session: "s-anon", MCPSession: "mcp-0"})
	if apps := b.Apps(); len(apps) != 0 {
		t.Fatalf("apps %v, want none (Tether itself and a nameless client are not apps)", apps)
	}
	b.SessionOpened(Caller{Session: "s-cursor", MCPSession: "mcp-1", App: "cursor"})
	b.SessionOpened(Caller{Session: "s-claude", MCPSession: "mcp-2", App: "claude-code"})
	if apps := strings.Join(b.Apps(), ","); apps != "claude-code,cursor" {
		t.Fatalf("apps after two initialized: %s", apps)
	}
	b.SessionEnded("mcp-1")
	if apps := strings.Join(b.Apps(), ","); apps != "claude-code" {
		t.Fatalf("apps after cursor's MCP session ended: %s", apps)
	}
	b.mu.Lock()
	b.closeTimers["claude-code"] = time.AfterFunc(time.Hour, func() {})
	b.mu.Unlock()
	b.SessionOpened(Caller{Session: "s-claude-2", MCPSession: "mcp-3", App: "claude-code"})
	b.mu.Lock()
	pending := b.closeTimers["claude-code"]
	b.mu.Unlock()
	if pending != nil {
		t.Fatal("claude-code's tabs are still to be closed after it initialized again")
	}
}

// A session without an MCP session (a client of MCP 2026-07-28: its key is
// "app:" and its name, or `tether mcp`'s key) is not ended by an MCP
// session's end naming "" or its key: a DELETE of another client must not
// end it (and start the closing of its app's tabs).
func TestSessionWithoutMCPSessionNotEndedByName(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "11111111-aaaa", "Work", protocol.TabInfo{Tab: 1, Active: true})
	modern := Caller{Session: "app:cursor", App: "cursor"}
	done := callAsync(b, modern, protocol.MethodSnapshot, &protocol.TabParams{Tab: 1})
	serveOne(t, f, 1)
	mustOK(t, done)
	b.SessionEnded("")
	b.SessionEnded("app:cursor")
	if apps := strings.Join(b.Apps(), ","); apps != "cursor" {
		t.Fatalf("apps after DELETEs naming \"\" and cursor's key: %q, want cursor still", apps)
	}
}

// TestIdleStatelessSessionEnds: a session without an MCP session (nothing
// else would ever end it) ends once it has run no call for longer than the
// idle time: its app leaves Apps and its tabs are closed as after an MCP
// session's end; a call running all that while keeps it, and so does an
// MCP session's idleness (mcpSessions expires those).
func TestIdleStatelessSessionEnds(t *testing.T) {
	clk := &clock{now: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
	b, url := newTestBroker(t, Config{AutoApprove: true, Now: clk.Now, CloseAgentTabsAfter: 20 * time.Millisecond})
	f, _ := connect(t, b, url, "11111111-aaaa", "Work",
		protocol.TabInfo{Tab: 1, Active: true},
		protocol.TabInfo{Tab: 2, Owner: &protocol.TabOwner{App: "cursor", Session: "app:cursor"}})
	modern := Caller{Session: "app:cursor", App: "cursor"}
	done := callAsync(b, modern, protocol.MethodSnapshot, &protocol.TabParams{Tab: 2})
	serveOne(t, f, 2)
	mustOK(t, done)
	b.SessionOpened(claude)

	// A call that runs for two hours keeps its session.
	done = callAsync(b, modern, protocol.MethodSnapshot, &protocol.TabParams{Tab: 2})
	r := f.readRequest()
	clk.advance(2 * time.Hour)
	if n := b.EndIdleSessions(time.Hour, nil); n != 0 {
		t.Fatalf("%d sessions ended while a call of cursor was running", n)
	}
	f.answer(r.ID, protocol.PageResult{Tab: 2})
	mustOK(t, done)

	clk.advance(59 * time.Minute)
	if n := b.EndIdleSessions(time.Hour, nil); n != 0 {
		t.Fatalf("%d sessions ended 59 min after cursor's last call", n)
	}
	clk.advance(2 * time.Minute)
	if n := b.EndIdleSessions(time.Hour, nil); n != 1 {
		t.Fatalf("%d sessions ended 61 min after cursor's last call, want 1", n)
	}
	if apps := strings.Join(b.Apps(), ","); apps != "claude-code" {
		t.Fatalf("apps after cursor idled out: %q, want claude-code (its MCP session is mcpSessions' to expire)", apps)
	}
	r = f.readRequest()
	var p protocol.TabParams
	_ = json.Unmarshal(r.Params, &p)
	if r.Method != protocol.MethodTabClose || p.Tab != 2 {
		t.Fatalf("got %s of tab %d, want cursor's tab 2 closed", r.Method, p.Tab)
	}
	f.answer(r.ID, protocol.TabsListResult{Tabs: []protocol.TabInfo{}})
}

// TestSessionsBounded: any client can claim any name or session key,
// each a new session; past MaxSessions the one idle longest ends, without
// closing its app's tabs (it has not left).
func TestSessionsBounded(t *testing.T) {
	clk := &clock{now: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
	b, _ := newTestBroker(t, Config{AutoApprove: true, Now: clk.Now, MaxSessions: 4, CloseAgentTabsAfter: time.Hour})
	b.SessionOpened(claude)
	for _, app := range []string{"a", "b", "c"} {
		clk.advance(time.Second)
		b.SessionOpened(Caller{Session: "app:" + app, App: app})
	}
	clk.advance(time.Second)
	b.SessionOpened(Caller{Session: "app:a", App: "a"}) // active again
	b.SessionOpened(claude)                             // so b is now idle longest
	clk.advance(time.Second)
	b.SessionOpened(Caller{Session: "app:d", App: "d"})
	if apps := strings.Join(b.Apps(), ","); apps != "a,c,claude-code,d" {
		t.Fatalf("apps %q, want a,c,claude-code,d (b idle longest goes)", apps)
	}
	b.mu.Lock()
	n, closing := len(b.sessions), len(b.closeTimers)
	b.mu.Unlock()
	if n != 4 {
		t.Fatalf("%d sessions kept, want 4", n)
	}
	if closing != 0 {
		t.Fatalf("%d closings of tabs started by pushing b out, want none", closing)
	}
}

// TestSessionKeysOfOneMCPSession: a client may send a session key of its
// choice with each request of one MCP session; the sessions it makes so
// stay within MaxSessions, and all of them end with that MCP session.
func TestSessionKeysOfOneMCPSession(t *testing.T) {
	b, _ := newTestBroker(t, Config{AutoApprove: true, MaxSessions: 10})
	for i := range 50 {
		b.SessionOpened(Caller{Session: fmt.Sprintf("key-%03d", i), MCPSession: "mcp-x", App: "flood"})
	}
	b.mu.Lock()
	n := len(b.sessions)
	b.mu.Unlock()
	if n > 10 {
		t.Fatalf("%d sessions kept, want at most 10", n)
	}
	b.SessionEnded("mcp-x")
	if apps := b.Apps(); len(apps) != 0 {
		t.Fatalf("apps %v after the only MCP session ended, want none", apps)
	}
}

// TestSessionOfEndedMCPSessionEnds: a call whose MCP session ended while
// it waited (for a profile to connect) makes a session after
// SessionEnded; the sweep ends it once that MCP session is not live, and
// leaves the sessions of live ones.
func TestSessionOfEndedMCPSessionEnds(t *testing.T) {
	b, _ := newTestBroker(t, Config{AutoApprove: true})
	b.SessionEnded("mcp-late")
	b.SessionOpened(Caller{Session: "s-late", MCPSession: "mcp-late", App: "late"}) // as the late call's sessionLocked does
	b.SessionOpened(claude)
	live := func(id string) bool { return id == claude.MCPSession }
	if n := b.EndIdleSessions(time.Hour, live); n != 1 {
		t.Fatalf("%d sessions ended, want late's 1", n)
	}
	if apps := strings.Join(b.Apps(), ","); apps != "claude-code" {
		t.Fatalf("apps %q, want claude-code", apps)
	}
}

// TestSessionOfAppWithTabsGoesLast: past MaxSessions, the session of an
// app that owns tabs is kept over newer ones of apps that own none (a flood
// of names): pushed out, its tabs would never be closed once it left.
func TestSessionOfAppWithTabsGoesLast(t *testing.T) {
	clk := &clock{now: time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)}
	b, url := newTestBroker(t, Config{AutoApprove: true, Now: clk.Now, MaxSessions: 3})
	connect(t, b, url, "11111111-aaaa", "Work",
		protocol.TabInfo{Tab: 1, Active: true},
		protocol.TabInfo{Tab: 2, Owner: &protocol.TabOwner{App: "cursor", Session: "app:cursor"}})
	b.SessionOpened(Caller{Session: "app:cursor", App: "cursor"})
	for i := range 5 {
		clk.advance(time.Second)
		b.SessionOpened(Caller{Session: fmt.Sprintf("app:flood-%d", i), App: fmt.Sprintf("flood-%d", i)})
	}
	if apps := strings.Join(b.Apps(), ","); apps != "cursor,flood-3,flood-4" {
		t.Fatalf("apps %q, want cursor (it owns a tab) and the two newest", apps)
	}
}
