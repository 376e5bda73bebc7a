package policy

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// PausedMessage is the tool error every call gets while AI access is paused.
const PausedMessage = "The user paused AI access in Tether; ask them to resume it."

// Outcome is why a call did not run; "" when it was allowed.
type Outcome string

// The outcomes of a refused call.
const (
	// Refused: a deny rule matched.
	Refused Outcome = "refused"
	// Denied: a confirm rule held the call and the user said no, nobody
	// answered in time, or there is no one to ask (tether serve).
	Denied Outcome = "denied"
	// Paused: AI access is paused.
	Paused Outcome = "paused"
	// Failed: a confirm rule would have held the call, and Call.CheckFirst
	// found it cannot run (its element ref is unknown), so no one was
	// asked (the timeline's "error").
	Failed Outcome = "error"
)

// Answer is the user's answer to a held call.
type Answer string

// The answers the approval queue offers.
const (
	// AllowOnce lets this call run.
	AllowOnce Answer = "allow_once"
	// AlwaysAllowSite lets this call run and writes a rule allowing its
	// class on its site, for every client.
	AlwaysAllowSite Answer = "always_allow_site"
	// DenyOnce refuses this call.
	DenyOnce Answer = "deny"
)

// Request is a call held for the user's approval, as a UI shows it.
type Request struct {
	// ID names the request in Guard.Answer: the call's id (Call.ID), or a
	// number the guard gives when the call had none.
	ID string `json:"id"`
	// Tool is the tool's name, e.g. browser_file_upload.
	Tool string `json:"tool"`
	// Class is the tool's class.
	Class Class `json:"class"`
	// Client is the MCP client's name ("" when unknown).
	Client string `json:"client"`
	// Profile is the browser profile's slug, when known.
	Profile string `json:"profile,omitempty"`
	// Tab is the tab number, when known.
	Tab int `json:"tab,omitempty"`
	// Sites are the origins the call touches (usually one).
	Sites []string `json:"sites"`
	// Summary is the arguments, secrets redacted.
	Summary string `json:"summary"`
	// Since is when the call was held; Deadline when it is denied unanswered.
	Since    time.Time `json:"since"`
	Deadline time.Time `json:"deadline"`
}

// Approver asks the user about a held call: the tray's native dialog, for
// instance. Ask returns the answer, or an error when it cannot ask; ctx ends
// when the call was answered elsewhere (Guard.Answer, from the window's
// queue) or timed out, and Ask should then return promptly. The first answer
// wins.
type Approver interface {
	Ask(ctx context.Context, r Request) (Answer, error)
}

// Where an answer came from (Verdict.AnsweredBy, Guard.AnswerBy).
const (
	// ByWindow: the window's approval queue.
	ByWindow = "window"
	// ByCLI: the command line (or another local API client).
	ByCLI = "cli"
	// ByDialog: the Approver (a native dialog).
	ByDialog = "dialog"
	// ByTimeout: nobody answered within Config.Timeout.
	ByTimeout = "timeout"
	// ByPause: AI access was paused while the call was held.
	ByPause = "pause"
	// ByCancelled: the client cancelled the call while it was held.
	ByCancelled = "cancelled"
	// ByShutdown: Tether stopped (quit, restart, token rotation) while the
	// call was held.
	ByShutdown = "shutdown"
)

// The answers a held call gets without the user (Verdict.Answer).
const (
	// AnswerTimeout: nobody answered in time; the call is denied.
	AnswerTimeout = "timeout"
	// AnswerCancelled: the client cancelled the call while it was held.
	AnswerCancelled = "cancelled"
)

// QueueOnly is an Approver for a UI that answers only through
// Guard.Answer: it asks nothing and waits.
type QueueOnly struct{}

// Ask waits for ctx to end.
func (QueueOnly) Ask(ctx context.Context, _ Request) (Answer, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

// Call is one tool call as the guard judges it.
type Call struct {
	// ID is the call's id, given by the daemon when it first saw the call;
	// a held call's Request.ID is this id ("": the guard numbers it).
	ID string
	// Tool is the tool's name ("download" for a download, with Class).
	Tool string
	// Class, when one of Classes, is the call's class instead of
	// Config.Classify's (a download is no tool).
	Class Class
	// Action is browser_tabs's action argument ("" for other tools).
	Action string
	// Client is the MCP client's name from its clientInfo.
	Client string
	// Profile and Tab are the call's target, when known (for the prompt).
	Profile string
	Tab     int
	// Sites are the origins the call touches: the tab's current origin, or
	// the target URL's for navigation. Empty when unknown.
	Sites []string
	// Summary is the arguments with secrets redacted (for the prompt).
	Summary string
	// Progress, when set, is called while the call waits for approval, so
	// the client knows it is alive.
	Progress func(message string)
	// Held, when set, is called once if the call is held for the user's
	// approval, with the Request the queue shows, before anyone is asked.
	Held func(Request)
	// CheckFirst, when set, is called before the user is asked about the
	// call (a confirm rule matched and someone can be asked), unless the
	// user's rules deny reads on its sites (it reads the page): a non-empty
	// answer is why the call cannot run (a tool error for the model), and
	// the call fails (Failed) without being held. It must not block long.
	CheckFirst func(ctx context.Context) string
}

// Verdict is the guard's answer about a call.
type Verdict struct {
	// Allow lets the call run.
	Allow bool
	// Outcome says why it did not ("" when allowed).
	Outcome Outcome
	// Class is the call's class.
	Class Class
	// Decision says how the verdict was reached, for the timeline, e.g.
	// "confirm (default for sensitive actions): allowed once by the user".
	Decision string
	// Message is the tool error the model gets when the call is refused.
	Message string
	// Answer and AnsweredBy are set for a call that was held: Answer is
	// AllowOnce, AlwaysAllowSite or DenyOnce as a string, or AnswerTimeout
	// or AnswerCancelled; AnsweredBy is ByWindow, ByCLI, ByDialog,
	// ByTimeout, ByPause or ByCancelled.
	Answer     string
	AnsweredBy string
}

// Config configures a Guard.
type Config struct {
	// Path is policy.json.
	Path string
	// Approver asks the user about confirm rules; nil means there is no UI
	// (tether serve), and Unattended decides.
	Approver Approver
	// Unattended is what a confirm rule becomes without an Approver: Deny
	// (the default) or Allow (tether serve --unattended=allow).
	Unattended Action
	// Timeout is how long a held call waits for an answer before it is
	// denied (120 s).
	Timeout time.Duration
	// ProgressEvery is how often a held call sends a progress notification
	// (10 s).
	ProgressEvery time.Duration
	// Classify returns a call's class from its tool and that tool's
	// "action" argument (browser_tabs's: listing reads, new navigates);
	// the MCP tools' definitions supply it. Nil, or a tool it does not
	// know, is Sensitive (fail closed).
	Classify func(tool, action string) Class
	// Logger receives decisions that change state (rules written, pause).
	Logger *slog.Logger
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Guard applies the pause switch, the policy and the approval queue to tool
// calls. Its methods are safe for concurrent use; the local API (package
// localapi) serves them to the CLI, the tray and the window.
type Guard struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	file     File
	approver Approver
	pending  []*pending
	nextID   int
	changed  chan struct{}
	// stopping is set by DenyPending: calls that need an answer from now
	// on are denied at once.
	stopping bool
}

type pending struct {
	req    Request
	answer chan answer // buffered 1; the first answer wins
	done   bool
}

// answer is a held call's answer and where it came from.
type answer struct {
	a  Answer
	by string
}

// Open loads the policy at cfg.Path (a missing file is an empty policy; a
// corrupt one is an error and is left alone).
func Open(cfg Config) (*Guard, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 120 * time.Second
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 10 * time.Second
	}
	if cfg.Unattended == "" {
		cfg.Unattended = Deny
	}
	if cfg.Unattended != Allow && cfg.Unattended != Deny {
		return nil, fmt.Errorf("unattended must be allow or deny, not %q", cfg.Unattended)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f, err := LoadFile(cfg.Path)
	if err != nil {
		return nil, err
	}
	return &Guard{cfg: cfg, log: log, file: f, approver: cfg.Approver, changed: make(chan struct{})}, nil
}

// Changed returns a channel closed at the next change of the pending
// queue, the pause switch or the rules; read the new state, then call
// Changed again.
func (g *Guard) Changed() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.changed
}

func (g *Guard) notifyLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// SetApprover attaches (or, with nil, detaches) the UI that asks the user.
func (g *Guard) SetApprover(a Approver) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.approver = a
}

// Paused reports whether AI access is paused.
func (g *Guard) Paused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.file.Paused
}

// SetPaused pauses or resumes AI access and saves it to policy.json.
func (g *Guard) SetPaused(paused bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.file.Paused == paused {
		return nil
	}
	next := g.file
	next.Paused = paused
	if err := SaveFile(g.cfg.Path, next); err != nil {
		return err
	}
	g.file = next
	g.log.Warn("AI access "+map[bool]string{true: "paused", false: "resumed"}[paused], "paused", paused)
	if paused {
		// The kill switch also denies what waits for the user's answer.
		g.denyPendingLocked(ByPause)
	}
	g.notifyLocked()
	return nil
}

// DenyPending denies every held call at once, answered by ByShutdown, and
// every call that would be held from now on: the daemon calls it when it
// stops, so that a held call gets its true outcome (not run) instead of
// holding the stop up until its timeout. It returns how many held calls it
// denied.
func (g *Guard) DenyPending() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stopping = true
	n := g.denyPendingLocked(ByShutdown)
	if n > 0 {
		g.notifyLocked()
	}
	return n
}

// denyPendingLocked answers every held call Deny, by by; call with mu held.
func (g *Guard) denyPendingLocked(by string) int {
	n := 0
	for _, p := range g.pending {
		if !p.done {
			p.done = true
			p.answer <- answer{DenyOnce, by}
			n++
		}
	}
	return n
}

// Rules returns a copy of the user's rules.
func (g *Guard) Rules() []Rule {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.file.Rules)
}

// SetRules validates and replaces the user's rules, saving policy.json.
func (g *Guard) SetRules(rules []Rule) error {
	for i, r := range rules {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("rule %d: %w", i+1, err)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	next := g.file
	next.Rules = slices.Clone(rules)
	if err := SaveFile(g.cfg.Path, next); err != nil {
		return err
	}
	g.file = next
	g.notifyLocked()
	return nil
}

// AddRule validates r and appends it to the user's rules (replacing an
// existing rule for the same class, site and client), saving policy.json.
func (g *Guard) AddRule(r Rule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	next := g.file
	next.Rules = slices.DeleteFunc(slices.Clone(g.file.Rules), func(o Rule) bool {
		return o.Class == r.Class && strings.EqualFold(o.Site, r.Site) && strings.EqualFold(o.Client, r.Client)
	})
	next.Rules = append(next.Rules, r)
	if err := SaveFile(g.cfg.Path, next); err != nil {
		return err
	}
	g.file = next
	g.log.Info("policy rule added", "rule", r.String())
	g.notifyLocked()
	return nil
}

// Pending returns the calls waiting for the user's answer, oldest first.
func (g *Guard) Pending() []Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Request, 0, len(g.pending))
	for _, p := range g.pending {
		out = append(out, p.req)
	}
	return out
}

// Answer answers a held call from the window's queue: AnswerBy(id, a,
// ByWindow).
func (g *Guard) Answer(id string, a Answer) error { return g.AnswerBy(id, a, ByWindow) }

// AnswerBy answers a held call; by says where the user answered (ByWindow,
// ByCLI, ByDialog), for the timeline and the event stream. The first answer
// wins: a later one, or one for a call that timed out, returns
// ErrNotPending and changes nothing.
func (g *Guard) AnswerBy(id string, a Answer, by string) error {
	switch a {
	case AllowOnce, AlwaysAllowSite, DenyOnce:
	default:
		return fmt.Errorf("answer %q is not allow_once, always_allow_site or deny", a)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range g.pending {
		if p.req.ID == id && !p.done {
			p.done = true
			p.answer <- answer{a, by}
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrNotPending, id)
}

// Check decides a call: paused → refused; a deny rule → refused; allow →
// runs; confirm → held until the user answers (or denied at once without a
// UI, unless Unattended is Allow). It blocks while the call is held.
func (g *Guard) Check(ctx context.Context, c Call) Verdict {
	class := Sensitive
	if slices.Contains(Classes, c.Class) {
		class = c.Class
	} else if g.cfg.Classify != nil {
		if k := g.cfg.Classify(c.Tool, c.Action); slices.Contains(Classes, k) {
			class = k
		}
	}
	g.mu.Lock()
	paused := g.file.Paused
	d := Evaluate(g.file.Rules, class, c.Sites, c.Client)
	// CheckFirst reads the page: not where the user denied reads.
	readDenied := Evaluate(g.file.Rules, Read, c.Sites, c.Client).Action == Deny
	approver := g.approver
	g.mu.Unlock()
	where := describeSites(c.Sites)
	if paused {
		return Verdict{Outcome: Paused, Class: class, Decision: "paused", Message: PausedMessage}
	}
	reason := d.Reason(class)
	switch d.Action {
	case Allow:
		return Verdict{Allow: true, Class: class, Decision: "allow (" + reason + ")"}
	case Deny:
		return Verdict{Outcome: Refused, Class: class, Decision: "deny (" + reason + ")",
			Message: fmt.Sprintf("The user's Tether policy does not allow %s (a %s action) on %s. Do not retry; ask the user if it is needed.", c.Tool, class, where)}
	}
	prefix := "confirm (" + reason + "): "
	if approver == nil {
		if g.cfg.Unattended == Allow {
			return Verdict{Allow: true, Class: class, Decision: prefix + "allowed without asking (--unattended=allow)"}
		}
		return Verdict{Outcome: Denied, Class: class, Decision: prefix + "denied, no one to ask (no Tether window)",
			Message: fmt.Sprintf("%s on %s needs the user's approval, and Tether runs without a window to ask (tether serve, or the app without a display). The user can allow it with a rule in Tether's policy.json.", c.Tool, where)}
	}
	if c.CheckFirst != nil && !readDenied {
		// Never ask the user about a call that cannot run.
		if msg := c.CheckFirst(ctx); msg != "" {
			return Verdict{Outcome: Failed, Class: class, Decision: prefix + "not asked: the call could not run", Message: msg}
		}
	}
	return g.confirm(ctx, c, class, approver, prefix, where)
}

func (g *Guard) confirm(ctx context.Context, c Call, class Class, approver Approver, prefix, where string) Verdict {
	now := g.cfg.Now()
	g.mu.Lock()
	id := c.ID
	if id == "" {
		g.nextID++
		id = strconv.Itoa(g.nextID)
	}
	stopped := func() Verdict { // Tether is stopping: no one is asked any more
		g.mu.Unlock()
		v := g.answered(c, class, answer{DenyOnce, ByShutdown}, prefix, where)
		v.Answer, v.AnsweredBy = string(DenyOnce), ByShutdown
		return v
	}
	if g.stopping {
		return stopped()
	}
	p := &pending{answer: make(chan answer, 1), req: Request{
		ID: id, Tool: c.Tool, Class: class, Client: c.Client,
		Profile: c.Profile, Tab: c.Tab, Sites: slices.Clone(c.Sites), Summary: c.Summary,
		Since: now, Deadline: now.Add(g.cfg.Timeout),
	}}
	if c.Held != nil {
		// On the call's goroutine, before anyone can see the request (and
		// so answer it): what Held records precedes the answer's verdict.
		g.mu.Unlock()
		c.Held(p.req)
		g.mu.Lock()
		if g.stopping {
			return stopped()
		}
	}
	g.pending = append(g.pending, p)
	g.notifyLocked()
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		p.done = true
		g.pending = slices.DeleteFunc(g.pending, func(o *pending) bool { return o == p })
		g.notifyLocked()
		g.mu.Unlock()
	}()

	waitCtx, cancel := context.WithTimeout(ctx, g.cfg.Timeout)
	defer cancel()
	go func() {
		a, err := approver.Ask(waitCtx, p.req)
		if err == nil {
			_ = g.AnswerBy(p.req.ID, a, ByDialog)
		}
	}()
	tick := time.NewTicker(g.cfg.ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case a := <-p.answer:
			v := g.answered(c, class, a, prefix, where)
			v.Answer, v.AnsweredBy = string(a.a), a.by
			return v
		case <-waitCtx.Done():
			if ctx.Err() != nil {
				return Verdict{Outcome: Denied, Class: class, Decision: prefix + "cancelled by the client while waiting",
					Message: "The call was cancelled while waiting for the user's approval.", Answer: AnswerCancelled, AnsweredBy: ByCancelled}
			}
			return Verdict{Outcome: Denied, Class: class, Decision: prefix + "denied, no answer within " + g.cfg.Timeout.String(),
				Message: fmt.Sprintf("The user did not approve %s on %s within %s, so it was not done. Ask them before retrying.", c.Tool, where, g.cfg.Timeout),
				Answer:  AnswerTimeout, AnsweredBy: ByTimeout}
		case <-tick.C:
			if c.Progress != nil {
				c.Progress("Waiting for the user to approve " + c.Tool + " in Tether")
			}
		}
	}
}

func (g *Guard) answered(c Call, class Class, ans answer, prefix, where string) Verdict {
	switch ans.by {
	case ByPause:
		return Verdict{Outcome: Paused, Class: class, Decision: prefix + "denied: AI access was paused while it waited", Message: PausedMessage}
	case ByShutdown:
		return Verdict{Outcome: Denied, Class: class, Decision: prefix + "denied: Tether stopped while it waited for the user",
			Message: fmt.Sprintf("%s on %s was not done: Tether stopped (or restarted) while it waited for the user's approval. Call it again to ask again.", c.Tool, where)}
	}
	switch ans.a {
	case AllowOnce:
		return Verdict{Allow: true, Class: class, Decision: prefix + "allowed once by the user"}
	case AlwaysAllowSite:
		if len(c.Sites) != 1 || c.Sites[0] == "" {
			return Verdict{Allow: true, Class: class, Decision: prefix + "allowed by the user (no single site to remember, so once)"}
		}
		// The rule is the asking app's: another app on the same site is
		// still asked (a client with no name gets a rule for every client).
		r := Rule{Class: class, Site: c.Sites[0], Client: c.Client, Action: Allow}
		if err := g.AddRule(r); err != nil {
			g.log.Error("save policy rule", "rule", r.String(), "err", err)
			return Verdict{Allow: true, Class: class, Decision: prefix + "allowed by the user; the rule could not be saved: " + err.Error()}
		}
		who := "every app"
		if c.Client != "" {
			who = c.Client
		}
		return Verdict{Allow: true, Class: class, Decision: prefix + "always allowed for " + who + " on " + c.Sites[0] + " by the user (rule saved)"}
	}
	return Verdict{Outcome: Denied, Class: class, Decision: prefix + "denied by the user",
		Message: fmt.Sprintf("The user denied %s on %s. Do not retry it.", c.Tool, where)}
}

func describeSites(sites []string) string {
	var known []string
	for _, s := range sites {
		if s != "" {
			known = append(known, s)
		}
	}
	if len(known) == 0 {
		return "this page"
	}
	return strings.Join(known, " or ")
}
