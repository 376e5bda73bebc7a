package daemon

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/tether-browser/tether/broker"
	tmcp "github.com/tether-browser/tether/mcp"
	"github.com/tether-browser/tether/mcptoken"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/timeline"
)

// toolGuard implements the MCP server's Guard and Recorder with the policy
// guard and the timeline: it resolves each call's profile, tab and site
// from the registry of shared tabs, asks the policy, and records the call.
type toolGuard struct {
	guard    *policy.Guard
	timeline *timeline.Store // nil: not recorded
	summary  *timeline.Summarizer
	address  func(c broker.Caller, profile string, tab int, mutates, opens bool) (broker.Resolution, error)
	log      *slog.Logger
	// downloads learns which call each tab's downloads follow, and has
	// notes for results; nil: none.
	downloads *downloads
	// rtt is the link round-trip time of the profile with a slug (the
	// broker's RTT; nil: not recorded).
	rtt func(slug string) time.Duration
	// limits is each named token's rate limit on tool calls (nil: none;
	// the local MCP token has none).
	limits *mcptoken.Limiter
	// checkRef reads the element ref of profile's tab for c (a snapshot of
	// that element, once c is found to be allowed that tab), so that a
	// call about to be held for the user's approval is first checked to be
	// able to run (nil: not checked).
	checkRef func(ctx context.Context, c broker.Caller, profile string, tab int, ref string) error
	// heldFor is told whose call is held for the user's approval (the
	// broker's SessionOpened: a session waiting for an answer is not idle,
	// and it is the app's, which is back; nil: nobody).
	heldFor func(c broker.Caller)
}

// newToolGuard returns the toolGuard of guard (built with tmcp.Classify)
// and tl, whose summaries redact what each tool's definition says; address
// is the broker's Resolve.
func newToolGuard(guard *policy.Guard, tl *timeline.Store, address func(c broker.Caller, profile string, tab int, mutates, opens bool) (broker.Resolution, error), log *slog.Logger) *toolGuard {
	rules := map[string]timeline.ArgRules{}
	for _, t := range tmcp.Tools() {
		rules[t.Name()] = timeline.ArgRules{Redacted: t.Redacted, Whole: t.Whole, Plain: t.Plain}
	}
	return &toolGuard{guard: guard, timeline: tl, summary: timeline.NewSummarizer(rules), address: address, log: log}
}

// target is what a call addresses, as far as the daemon can tell.
type target struct {
	profile string   // slug; "" when unknown
	tab     int      // 0 when unknown, or a tab the call opens
	opens   bool     // the call opens a new tab
	sites   []string // origins the policy judges
}

// note is toolGuard's context carried from Check to the Recorder.
type note struct {
	id      string // the call's id
	target  target
	summary string
	verdict policy.Verdict
	started bool // the started phase went out (before the call was held)

	mu      sync.Mutex
	actual  target // what the broker resolved, when the call reached it
	reached bool
	running tabKey // the tab downloads counted the call on (Started)
}

// resolved records the profile and tab the broker addressed (the first
// browser call of the tool counts).
func (n *note) resolved(profile string, tab int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.reached {
		n.actual, n.reached = target{profile: profile, tab: tab}, true
	}
}

// pin makes a call of the tool address what Check resolved and the policy
// judged: the profile when the call names none, and the tab when its
// params name none (unless the call opens a new one). It returns the
// profile to call.
func (n *note) pin(profile string, params any) string {
	if profile == "" {
		profile = n.target.profile
	}
	if ts, ok := params.(protocol.TabScoped); ok && ts.TabNumber() == 0 && n.target.tab > 0 && !n.target.opens {
		ts.SetTabNumber(n.target.tab)
	}
	return profile
}

// newCallID returns a call id: 12 random hex digits, unique for the
// daemon's purposes (the event stream, the approval queue, the timeline).
func newCallID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// Check gives the call its id, resolves its target and asks the policy
// guard. A call the guard holds goes out as started, then held, then
// answered (timeline.Store's live events); one the guard allows at once
// starts in Started; a refused one only finishes.
func (g *toolGuard) Check(ctx context.Context, call tmcp.ToolCall) (tmcp.Verdict, error) {
	if call.Token != "" && g.limits != nil {
		if err := g.limits.Allow(call.Token); err != nil {
			n := &note{id: newCallID(), summary: g.summary.Summarize(call.Tool, call.Args)}
			msg := call.Tool + " refused: " + err.Error() + "."
			n.verdict = policy.Verdict{Outcome: policy.Refused, Decision: fmt.Sprintf("token over its limit of %d calls per minute", g.limits.PerMinute()), Message: msg}
			return tmcp.Verdict{Outcome: string(policy.Refused), Message: msg, Note: n}, nil
		}
	}
	t, refusal := g.resolve(call)
	action, _ := call.Args["action"].(string)
	n := &note{id: newCallID(), target: t, summary: g.summary.Summarize(call.Tool, call.Args)}
	if refusal != "" {
		msg := call.Tool + " refused: " + refusal + "."
		n.verdict = policy.Verdict{Outcome: policy.Refused, Decision: "refused: another app's or session's tab", Message: msg}
		return tmcp.Verdict{Outcome: string(policy.Refused), Message: msg, Note: n}, nil
	}
	if !g.summary.Fits(call.Tool, call.Args) {
		// An approval prompt and the timeline would show only the first of
		// its paths: the user would approve files they were never shown.
		msg := fmt.Sprintf("%s refused: its paths are too long to show the user in full (the approval prompt and the timeline show %d characters of arguments). Upload fewer files per call, e.g. one at a time.", call.Tool, timeline.MaxSummary)
		n.verdict = policy.Verdict{Outcome: policy.Refused, Decision: "refused: arguments too long to show in full", Message: msg}
		return tmcp.Verdict{Outcome: string(policy.Refused), Message: msg, Note: n}, nil
	}
	pc := policy.Call{
		ID: n.id, Tool: call.Tool, Action: action, Client: call.Client,
		Profile: t.profile, Tab: t.tab, Sites: t.sites, Summary: n.summary,
		Progress: call.Progress,
	}
	if ref, _ := call.Args["ref"].(string); ref != "" && g.checkRef != nil && t.profile != "" && t.tab > 0 {
		pc.CheckFirst = func(ctx context.Context) string {
			err := g.checkRef(ctx, broker.Caller{Session: call.Session, MCPSession: call.MCPSession, App: call.Client}, t.profile, t.tab, ref)
			var re *broker.RemoteError
			if errors.As(err, &re) && (re.Code == protocol.CodeUnknownRef || re.Code == protocol.CodeStaleRef) {
				return fmt.Sprintf("%s was not run, and the user was not asked to approve it: %s. Take a snapshot (browser_snapshot) and use a ref from it.", call.Tool, strings.TrimSuffix(re.Message, "."))
			}
			return "" // anything else is for the call itself to meet
		}
	}
	pc.Held = func(r policy.Request) {
		if g.heldFor != nil && call.Session != "" {
			g.heldFor(broker.Caller{Session: call.Session, MCPSession: call.MCPSession, App: call.Client})
		}
		if g.timeline != nil {
			e := g.entryOf(call, n)
			e.Class = string(r.Class)
			n.started = true
			g.timeline.Started(e)
			g.timeline.Held(e, timeline.Hold{Sites: r.Sites, Since: r.Since, Deadline: r.Deadline})
		}
	}
	n.verdict = g.guard.Check(ctx, pc)
	if n.verdict.AnsweredBy != "" && g.timeline != nil {
		g.timeline.Answered(g.entryOf(call, n), n.verdict.Answer, n.verdict.AnsweredBy)
	}
	return tmcp.Verdict{Allow: n.verdict.Allow, Outcome: string(n.verdict.Outcome), Message: n.verdict.Message, Note: n}, nil
}

// entry is the call as known now. A call refused before Check (a tool
// that is off, invalid arguments) gets its id here.
func (g *toolGuard) entry(call tmcp.ToolCall, v tmcp.Verdict) timeline.Entry {
	n, ok := v.Note.(*note)
	if !ok {
		return timeline.Entry{CallID: newCallID(), Time: call.Started, Client: call.Client, Token: call.Token, Tool: call.Tool,
			Args: g.summary.Summarize(call.Tool, call.Args)}
	}
	return g.entryOf(call, n)
}

func (g *toolGuard) entryOf(call tmcp.ToolCall, n *note) timeline.Entry {
	e := timeline.Entry{CallID: n.id, Time: call.Started, Client: call.Client, Token: call.Token, Tool: call.Tool}
	e.Profile, e.Tab, e.Args = n.target.profile, n.target.tab, n.summary
	n.mu.Lock()
	if n.reached {
		e.Profile, e.Tab = n.actual.profile, n.actual.tab
	}
	n.mu.Unlock()
	e.Class, e.Decision = string(n.verdict.Class), n.verdict.Decision
	e.Site = strings.Join(n.target.sites, " ")
	return e
}

// Started announces a running call on the timeline's live stream, unless
// it went out when the call was held.
func (g *toolGuard) Started(call tmcp.ToolCall, v tmcp.Verdict) {
	n, ok := v.Note.(*note)
	if ok && g.downloads != nil {
		n.running = tabKey{n.target.profile, n.target.tab}
		g.downloads.callStarted(n.running.profile, n.running.tab, call.Client, call.Session)
	}
	if g.timeline == nil {
		return
	}
	if ok && n.started {
		return
	}
	g.timeline.Started(g.entry(call, v))
}

// Notes implements tmcp.Noter: what happened to the downloads that
// followed the session's calls, since its previous result.
func (g *toolGuard) Notes(call tmcp.ToolCall, _ tmcp.Verdict) string {
	return g.downloads.take(call.Session)
}

// Finished records the call on the timeline.
func (g *toolGuard) Finished(call tmcp.ToolCall, v tmcp.Verdict, end tmcp.CallEnd) {
	e := g.entry(call, v)
	if n, ok := v.Note.(*note); ok && v.Allow && g.downloads != nil {
		g.downloads.callEnded(n.running.profile, n.running.tab)
		if k := (tabKey{e.Profile, e.Tab}); k != n.running {
			// The call opened a tab, or the broker chose another.
			g.downloads.callStarted(k.profile, k.tab, call.Client, call.Session)
			g.downloads.callEnded(k.profile, k.tab)
		}
	}
	if g.timeline == nil {
		return
	}
	e.Duration, e.Outcome, e.Error = end.Duration, timeline.Outcome(end.Outcome), end.Error
	if g.rtt != nil && e.Profile != "" {
		e.RTT = g.rtt(e.Profile)
	}
	if _, err := g.timeline.Record(context.Background(), e); err != nil {
		g.log.Error("timeline record failed", "tool", call.Tool, "err", err)
	}
}

// resolve finds what a call addresses by the broker's one rule
// (broker.Resolve: the named profile and tab, else the calling session's
// own, else the user's tab in front), and the site(s) the policy judges:
// the tab's origin, or a navigation's target URL (the tool's LoadsURL).
// The call is then pinned to that profile and tab (browserAdapter), so the
// site the user approves is the one it acts on. A call the broker would
// refuse because the tab is another app's or another session holds it is
// refused here (refusal), before anyone is asked.
func (g *toolGuard) resolve(call tmcp.ToolCall) (t target, refusal string) {
	name, _ := call.Args["profile"].(string)
	tab := 0
	if f, ok := call.Args["tab"].(float64); ok {
		tab = int(f)
	}
	action, _ := call.Args["action"].(string)
	mutates := tmcp.Classify(call.Tool, action) != policy.Read
	u, loads := tmcp.LoadsURL(call.Tool, call.Args)
	res, err := g.address(broker.Caller{Session: call.Session, App: call.Client}, name, tab, mutates, loads)
	switch {
	case errors.Is(err, broker.ErrNotYourTab), errors.Is(err, broker.ErrTabInUse):
		// The timeline names the tab refused (its profile is resolved).
		return target{profile: res.Profile.Slug, tab: tab}, err.Error()
	case err != nil:
		// The call fails in the broker with the same message (no profile,
		// no tab of its own), or the profile is unknown.
		return t, ""
	}
	t.profile, t.tab, t.opens = res.Profile.Slug, res.Tab.Tab, res.Opens
	if loads {
		if o := policy.Origin(u); o != "" {
			t.sites = []string{o}
		}
		return t, ""
	}
	if o := policy.Origin(res.Tab.URL); o != "" {
		t.sites = []string{o}
	}
	return t, ""
}
