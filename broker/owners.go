// Several AI apps at once: who calls (an MCP session of an app), which tab
// a call without one addresses, whose a tab is, and the lease that keeps two
// sessions from interleaving their actions on a tab they both may use.

package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// Caller is who makes a call: one MCP session of one app. The zero Caller
// is Tether itself (the local API, the user's choices): ownership and
// leases do not bind it, and a call of it without a tab goes to the
// profile's current tab as the extension reports it.
type Caller struct {
	// Session names the session for good: the key `tether mcp` keeps
	// while it runs (protocol.HeaderSession), else the MCP session's id.
	Session string
	// MCPSession is the id of the MCP session the call came in (it ends
	// with SessionEnded; a bridge opens a new one after a daemon restart).
	MCPSession string
	// App is the app's name (MCP clientInfo.name as the timeline shows
	// it; "" when the client sent none). Any client can claim any name:
	// ownership keeps honest apps apart and is no security boundary.
	App string
}

type callerKey struct{}

// WithCaller returns a context whose calls are made by c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerOf(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// DefaultLeaseWindow is how long a session keeps its lease on a tab after
// its last action there ended (10 s: long enough for an agent's next step
// of a type-then-click sequence, short enough that a tab left alone is
// soon free for another session).
const DefaultLeaseWindow = 10 * time.Second

// Errors of the addressing rules; each message says what to do next.
var (
	// ErrNotYourTab: the named tab belongs to another app.
	ErrNotYourTab = errors.New("that tab belongs to another AI app")
	// ErrTabInUse: another session is acting on the tab, or did in the
	// last lease window.
	ErrTabInUse = errors.New("that tab is in use by another AI session")
	// ErrNoOwnTab: the call named no tab, the session has none of its
	// own, and the user's tab in front is not free to use.
	ErrNoOwnTab = errors.New("this session has no tab of its own")
	// ErrUnknownTab: the named tab is not among the shared tabs the
	// extension reported.
	ErrUnknownTab = errors.New("no shared tab has that number")
)

// session is what the broker knows of one session.
type session struct {
	app string
	mcp string // the MCP session it called in last
	// last is when it last started or ended a call (or initialized);
	// calls counts its calls running now. A session without an MCP
	// session ends once idle (EndIdleSessions), as nothing else would end
	// it; any session may be pushed out past MaxSessions.
	last  time.Time
	calls int
	// profile and tab are its current tab: the last one it used or opened
	// (profile is the record's id; tab 0: none yet).
	profile string
	tab     int
}

// lease is one session's hold on a tab it acts on: while running > 0, and
// for the lease window after last, other sessions' actions there are
// refused.
type lease struct {
	session, app string
	since        time.Time // when this session's run of actions began
	last         time.Time // when its last action ended
	running      int
}

type leaseKey struct {
	profile string // record id
	tab     int
}

func (l *lease) heldAgainst(session string, now time.Time, window time.Duration) bool {
	return l != nil && l.session != session && (l.running > 0 || now.Sub(l.last) < window)
}

// appName is how an app is named in messages.
func appName(app string) string {
	if app == "" {
		return "an app that gave no name"
	}
	return fmt.Sprintf("%q", app)
}

// mayUseLocked checks that caller c may use tab info of rec: it is the
// user's or c's app's, and, for an action, no other session holds its
// lease.
func (b *Broker) mayUseLocked(rec *record, c Caller, info protocol.TabInfo, mutates bool) error {
	if o := info.Owner; o != nil && o.App != c.App {
		return fmt.Errorf("%w: tab %d of profile %q belongs to %s: that app opened it, or the user gave it to that app. "+
			"Open your own tab with browser_tabs {action: \"new\", url: \"…\"}, or ask the user to give you that tab (in Tether's window, Profiles & tabs)",
			ErrNotYourTab, info.Tab, rec.stored.Slug, appName(o.App))
	}
	if !mutates {
		return nil
	}
	now := b.cfg.Now()
	if l := b.leases[leaseKey{rec.stored.ID, info.Tab}]; l.heldAgainst(c.Session, now, b.cfg.LeaseWindow) {
		who := appName(l.app)
		if l.app == c.App {
			who += " (another session of your app)"
		}
		state := fmt.Sprintf("its last action there ended %s ago", now.Sub(l.last).Round(100*time.Millisecond))
		if l.running > 0 {
			state = "an action of it is running there now"
		}
		return fmt.Errorf("%w: tab %d of profile %q is being used by %s since %s (%s). Nothing was done. "+
			"Retry once it has been left alone for %s, read it meanwhile, or open your own tab with browser_tabs {action: \"new\", url: \"…\"}",
			ErrTabInUse, info.Tab, rec.stored.Slug, who, l.since.Format("15:04:05"), state, b.cfg.LeaseWindow)
	}
	return nil
}

// resolveTabLocked is the one rule for which tab of rec a call of c
// addresses: tab n when named (refused when it is another app's, or
// leased by another session and the call acts); else c's current tab;
// else, for a call that may open one (opens), a new tab (open true, tab
// 0); else the user's shared tab in front in Chrome if no other session
// holds it; else ErrNoOwnTab. A named tab the extension has not reported
// is refused (ErrUnknownTab): the extension does not know who calls, and
// a tab it shared may not be reported yet (its tabs_changed waits up to
// 100 ms: a popup another app's page just opened, numbered next), so it
// cannot be let through unchecked. Every answer of the extension comes
// after the tabs it reports, so a number a session was told is known.
func (b *Broker) resolveTabLocked(rec *record, c Caller, n int, mutates, opens bool) (tab int, open bool, err error) {
	if n < 0 {
		// Not "no tab" (0): a number no tab has, never the current tab.
		return 0, false, fmt.Errorf("%w %d in profile %q: tab numbers start at 1 (its shared tabs: %s). Call browser_tabs to list them, or leave tab out for the current one",
			ErrUnknownTab, n, rec.stored.Slug, tabNumbers(rec.tabs))
	}
	if c.Session == "" {
		if n == 0 {
			n = rec.currentTab()
		}
		return n, false, nil
	}
	if n > 0 {
		info, ok := tabOf(rec.tabs, n)
		if !ok {
			return 0, false, fmt.Errorf("%w %d in profile %q (its shared tabs: %s). Call browser_tabs to list them, or pass one of those numbers",
				ErrUnknownTab, n, rec.stored.Slug, tabNumbers(rec.tabs))
		}
		if err := b.mayUseLocked(rec, c, info, mutates); err != nil {
			return 0, false, err
		}
		return n, false, nil
	}
	if s := b.sessions[c.Session]; s != nil && s.profile == rec.stored.ID && s.tab > 0 {
		if info, ok := tabOf(rec.tabs, s.tab); ok {
			if err := b.mayUseLocked(rec, c, info, mutates); err != nil {
				return 0, false, err
			}
			return s.tab, false, nil
		}
	}
	// A session that lost its current tab (a daemon restart, its MCP
	// session expired) finds its own tabs again: the one used last.
	var own *protocol.TabInfo
	for i, t := range rec.tabs {
		if t.Owner != nil && t.Owner.Session == c.Session && (own == nil || t.Current || !own.Current && t.Tab > own.Tab) {
			own = &rec.tabs[i]
		}
	}
	if own != nil {
		if err := b.mayUseLocked(rec, c, *own, mutates); err != nil {
			return 0, false, err
		}
		return own.Tab, false, nil
	}
	if opens {
		return 0, true, nil
	}
	var front *protocol.TabInfo
	for i, t := range rec.tabs {
		if t.Owner == nil && t.Active && (front == nil || t.Current) {
			front = &rec.tabs[i]
		}
	}
	if front == nil {
		return 0, false, fmt.Errorf("%w in profile %q, and the tab in front in Chrome is not one the user shared. "+
			"Open your own with browser_tabs {action: \"new\", url: \"…\"} (or browser_navigate {url}), or name a tab from browser_tabs",
			ErrNoOwnTab, rec.stored.Slug)
	}
	if err := b.mayUseLocked(rec, c, *front, mutates); err != nil {
		return 0, false, err
	}
	return front.Tab, false, nil
}

// tabNumbers lists tabs' numbers ("1, 5"), "none" when there are none.
func tabNumbers(tabs []protocol.TabInfo) string {
	if len(tabs) == 0 {
		return "none"
	}
	ns := make([]string, len(tabs))
	for i, t := range tabs {
		ns[i] = strconv.Itoa(t.Tab)
	}
	return strings.Join(ns, ", ")
}

// Resolution is what a call of a caller addresses, as Resolve finds it.
type Resolution struct {
	// Profile is the addressed profile.
	Profile Profile
	// Tab is the addressed tab as last reported (Tab.Tab 0: none; with
	// Opens, the call opens a new tab).
	Tab   protocol.TabInfo
	Opens bool
}

// Resolve finds, without doing anything, what a call of c naming profile
// (may be "") and tab (0: none) addresses, by the rules Call applies
// (resolveTabLocked); mutates is true for an action, opens for a call
// that opens a tab when it addresses none (browser_navigate). The errors
// are ErrNotYourTab, ErrTabInUse, ErrNoOwnTab, ErrUnknownTab (wrapped, with what to do
// next), or those of an unknown or ambiguous profile; a disconnected
// profile is resolved as it was last seen.
func (b *Broker) Resolve(c Caller, profile string, tab int, mutates, opens bool) (Resolution, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var rec *record
	var err error
	if profile != "" {
		rec, err = b.resolveNamedLocked(profile)
	} else {
		rec = b.defaultForLocked(c)
	}
	if err != nil {
		return Resolution{}, err
	}
	if rec == nil {
		return Resolution{}, ErrNoProfile
	}
	n, open, err := b.resolveTabLocked(rec, c, tab, mutates, opens)
	if err != nil {
		return Resolution{Profile: rec.view()}, err
	}
	r := Resolution{Profile: rec.view(), Opens: open}
	if info, ok := tabOf(rec.tabs, n); ok && n > 0 {
		r.Tab = info
	} else {
		r.Tab.Tab = n
	}
	return r, nil
}

// defaultForLocked is the profile of a call of c that names none: the
// profile of c's current tab while it is connected, else defaultLocked's.
func (b *Broker) defaultForLocked(c Caller) *record {
	if s := b.sessions[c.Session]; s != nil && s.profile != "" {
		if rec := b.records[s.profile]; rec != nil && rec.conn != nil {
			return rec
		}
	}
	return b.defaultLocked()
}

// sessionLocked returns c's session state, made on its first call; a
// call of an app cancels the closing of its tabs.
func (b *Broker) sessionLocked(c Caller) *session {
	s := b.sessions[c.Session]
	if s == nil {
		b.makeRoomLocked()
		s = &session{app: c.App}
		b.sessions[c.Session] = s
		b.notifyLocked() // Apps may have changed
	}
	if c.MCPSession != "" {
		s.mcp = c.MCPSession
	}
	s.last = b.cfg.Now()
	if t := b.closeTimers[c.App]; t != nil {
		t.Stop()
		delete(b.closeTimers, c.App)
	}
	return s
}

// SessionOpened records c's session once its client's MCP initialize is
// done, so that Apps lists the app before its first call, and marks it
// active when a call of it is held for the user's approval (not idle
// while it waits). It ends as a session that called does (SessionEnded,
// EndIdleSessions), and like a call it cancels the closing of the app's
// tabs: the app is back. A Caller without a session (Tether itself) is
// ignored.
func (b *Broker) SessionOpened(c Caller) {
	if c.Session == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sessionLocked(c)
}

// beginLocked takes the lease of tab for c's action; the returned func
// ends it.
func (b *Broker) beginLocked(rec *record, c Caller, tab int) func() {
	key := leaseKey{rec.stored.ID, tab}
	now := b.cfg.Now()
	l := b.leases[key]
	if l == nil || l.session != c.Session {
		l = &lease{session: c.Session, app: c.App, since: now}
		b.leases[key] = l
	} else if l.running == 0 && now.Sub(l.last) >= b.cfg.LeaseWindow {
		l.since = now
	}
	l.running++
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		l.running--
		l.last = b.cfg.Now()
	}
}

// SessionEnded forgets the session whose MCP session ended (DELETE, idle
// expiry, eviction): its current tab and its leases (a bridge that calls
// again later, in a new MCP session, finds its own tabs again). Its app's tabs stay (the
// user may be reading them); when this was the app's last session and
// CloseAgentTabsAfter is set, the tabs the app owns are closed that long
// after, unless a session of the app calls again first.
func (b *Broker) SessionEnded(mcpSession string) {
	// "" names no session: a session without an MCP session has mcp "".
	if mcpSession == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	// By the MCP session's id only: a session's key may be guessable (a
	// client of MCP 2026-07-28 is "app:" and its name), and a DELETE naming
	// it must not end another app's session.
	// Every session that called in it: a client may send a session key
	// of its choice (protocol.HeaderSession) with each request.
	for key, s := range b.sessions {
		if s.mcp == mcpSession {
			b.endSessionLocked(key, true)
		}
	}
}

// EndIdleSessions ends, as SessionEnded does, the sessions nothing else
// would end, and returns how many ended:
//   - a session without an MCP session (a client of the stateless MCP
//     2026-07-28 opens none) that has run no call for longer than idle;
//   - a session whose MCP session is no longer live (live reports it; nil:
//     all are), running no call: its first call began after that MCP
//     session had ended (it waited for a profile to connect), so
//     SessionEnded did not see it.
//
// The daemon calls it as it sweeps idle MCP sessions (every minute), with
// their idle time (an hour), so such an app leaves the list of apps
// connected, and its tabs close (closeAgentTabs), as one whose MCP session
// ended does. live is called with the broker's lock held: it must not call
// the broker.
func (b *Broker) EndIdleSessions(idle time.Duration, live func(mcpSession string) bool) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.cfg.Now()
	n := 0
	for key, s := range b.sessions {
		if s.calls > 0 {
			continue
		}
		if s.mcp == "" && now.Sub(s.last) > idle || s.mcp != "" && live != nil && !live(s.mcp) {
			b.endSessionLocked(key, true)
			n++
		}
	}
	return n
}

// DefaultMaxSessions is the most sessions the broker keeps at once
// (2 000: the daemon's 1 000 MCP sessions, and as many again for clients
// that open none or send session keys of their choice); one more ends
// the one idle longest.
const DefaultMaxSessions = 2000

// makeRoomLocked ends, before a session is added at MaxSessions, the one
// that goes first (goesBefore): any client can claim any name or session
// key, and each new one is a new session. The app pushed out has not left
// (its next call makes it a session again), so its tabs are not closed: a
// flood of names must not close another app's tabs. Nor would they be once
// it leaves, its session being gone: so a session whose app owns tabs goes
// last.
func (b *Broker) makeRoomLocked() {
	if len(b.sessions) < b.cfg.MaxSessions {
		return
	}
	owners := map[string]bool{}
	for _, rec := range b.records {
		for _, t := range rec.tabs {
			if t.Owner != nil {
				owners[t.Owner.App] = true
			}
		}
	}
	victim := ""
	var vs *session
	for key, s := range b.sessions {
		if vs == nil || goesBefore(s, vs, owners) {
			victim, vs = key, s
		}
	}
	b.log.Warn("an AI app's session ended: too many sessions; the one idle longest goes (its tabs stay, its next call makes it a session again)",
		"app", vs.app, "max", b.cfg.MaxSessions)
	b.endSessionLocked(victim, false)
}

// goesBefore: s is pushed out before o: it runs no call where o does; else
// its app owns no tab where o's does; else it has been idle longer.
func goesBefore(s, o *session, owners map[string]bool) bool {
	if (s.calls == 0) != (o.calls == 0) {
		return s.calls == 0
	}
	if owners[s.app] != owners[o.app] {
		return !owners[s.app]
	}
	return s.last.Before(o.last)
}

// callEnded marks the end of a call of s (Call).
func (b *Broker) callEnded(s *session) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s.calls--
	s.last = b.cfg.Now()
}

// endSessionLocked forgets the session of key and its idle leases, and
// (closeTabs) starts the closing of its app's tabs when it was the app's
// last session (SessionEnded).
func (b *Broker) endSessionLocked(key string, closeTabs bool) {
	s := b.sessions[key]
	if s == nil {
		return
	}
	delete(b.sessions, key)
	b.notifyLocked() // Apps may have changed
	for k, l := range b.leases {
		if l.session == key && l.running == 0 {
			delete(b.leases, k)
		}
	}
	if !closeTabs {
		return
	}
	for _, other := range b.sessions {
		if other.app == s.app {
			return
		}
	}
	if b.cfg.CloseAgentTabsAfter <= 0 || b.closed || b.closeTimers[s.app] != nil {
		return
	}
	app := s.app
	b.closeTimers[app] = time.AfterFunc(b.cfg.CloseAgentTabsAfter, func() { b.closeAppTabs(app) })
}

// closeAppTabs closes the tabs app owns in every connected profile
// (closeAgentTabs), unless one of its sessions came back.
func (b *Broker) closeAppTabs(app string) {
	type job struct {
		c    *conn
		slug string
		tabs []int
	}
	b.mu.Lock()
	if b.closeTimers[app] == nil || b.closed {
		b.mu.Unlock()
		return
	}
	delete(b.closeTimers, app)
	var jobs []job
	for _, rec := range b.records {
		if rec.conn == nil {
			continue
		}
		j := job{c: rec.conn, slug: rec.stored.Slug}
		for _, t := range rec.tabs {
			if t.Owner != nil && t.Owner.App == app {
				j.tabs = append(j.tabs, t.Tab)
			}
		}
		if len(j.tabs) > 0 {
			jobs = append(jobs, j)
		}
	}
	b.mu.Unlock()
	for _, j := range jobs {
		for _, tab := range j.tabs {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			_, err := j.c.call(ctx, protocol.MethodTabClose, &protocol.TabParams{Tab: tab}, 10*time.Second)
			cancel()
			if err != nil {
				b.log.Warn("closing an app's tab after its last session ended failed", "app", app, "profile", j.slug, "tab", tab, "err", err)
				continue
			}
			b.log.Info("closed an app's tab: its last session ended", "app", app, "profile", j.slug, "tab", tab, "after", b.cfg.CloseAgentTabsAfter)
		}
	}
}

// Apps lists the AI apps with a live MCP session (one that initialized or
// made a call), sorted: the apps the user may give a tab to (an app that
// sent no name cannot be given one).
func (b *Broker) Apps() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, s := range b.sessions {
		if s.app != "" && !seen[s.app] {
			seen[s.app] = true
			out = append(out, s.app)
		}
	}
	slices.Sort(out)
	return out
}

// SetTabOwner gives tab of profile to app, or back to the user when app is
// "" (the user's choice in the window; the extension's popup does the same
// in the browser). A tab given to an app joins no tab group; one given
// back leaves its group. It returns the tab as the extension now reports it.
func (b *Broker) SetTabOwner(ctx context.Context, profile string, tab int, app string) (protocol.TabInfo, error) {
	if tab <= 0 {
		return protocol.TabInfo{}, fmt.Errorf("no tab number: pass the tab's number as the Profiles & tabs page or browser_tabs shows it")
	}
	p := &protocol.TabOwnerParams{TabParams: protocol.TabParams{Tab: tab}}
	if app != "" {
		p.Owner = &protocol.TabOwner{App: app}
	}
	var info protocol.TabInfo
	err := b.Call(ctx, profile, protocol.MethodTabOwner, p, &info, 10*time.Second)
	return info, err
}

// ProfilesFor lists the profiles as Profiles does, with each tab's
// Current set as c sees it: the tab a call of c without one addresses.
func (b *Broker) ProfilesFor(c Caller) []Profile {
	ps := b.Profiles()
	if c.Session == "" {
		return ps
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range ps {
		cur := 0
		if rec := b.records[ps[i].ID]; rec != nil {
			cur = b.currentForLocked(rec, c)
		}
		markCurrent(ps[i].Tabs, cur)
	}
	return ps
}

// currentForLocked is the tab of rec that a call of c without one (a read)
// addresses, 0 when there is none (resolveTabLocked refuses it).
func (b *Broker) currentForLocked(rec *record, c Caller) int {
	cur, _, err := b.resolveTabLocked(rec, c, 0, false, false)
	if err != nil {
		return 0
	}
	return cur
}

// markCurrent sets Current on tab cur of tabs and clears it on the others.
func markCurrent(tabs []protocol.TabInfo, cur int) {
	for j := range tabs {
		tabs[j].Current = cur > 0 && tabs[j].Tab == cur
	}
}
