package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/localclient"
	tmcp "github.com/tether-browser/tether/mcp"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/mcpclient"
	"github.com/tether-browser/tether/timeline"
)

// fakeBrowser answers every call with a page and lists one connected
// profile whose current tab is on https://app.example.
type fakeBrowser struct {
	mu       sync.Mutex
	calls    []protocol.Method
	profiles []broker.Profile // what the broker's registry lists
	others   map[int]bool     // tabs of another app's: refused
}

func newFakeBrowser() *fakeBrowser {
	return &fakeBrowser{profiles: []broker.Profile{{
		ID: "c0ffee00-1111", Label: "Work", Slug: "work", Connected: true,
		Tabs: []protocol.TabInfo{
			{Tab: 1, URL: "https://app.example/inbox", Current: true},
			{Tab: 2, URL: "https://bank.example/login"},
		},
	}}}
}

func (f *fakeBrowser) Profiles(context.Context) []tmcp.Profile {
	out := make([]tmcp.Profile, len(f.profiles))
	for i, p := range f.profiles {
		out[i] = tmcp.Profile{ID: p.ID, Label: p.Label, Slug: p.Slug, Connected: p.Connected, Tabs: p.Tabs}
	}
	return out
}

func (f *fakeBrowser) Call(_ context.Context, _ string, method protocol.Method, _, result any, _ time.Duration) error {
	f.mu.Lock()
	f.calls = append(f.calls, method)
	f.mu.Unlock()
	var v any = protocol.PageResult{Tab: 1, URL: "https://app.example/inbox", Title: "Inbox", Snapshot: "- button \"Go\" [ref=e1]"}
	if method == protocol.MethodEvaluate {
		v = protocol.EvaluateResult{Tab: 1, ValueJSON: "42"}
	}
	raw, _ := json.Marshal(v)
	return json.Unmarshal(raw, result)
}

// resolve stands in for broker.Resolve over the fake registry: the named
// (or only) profile, and its tab n or current tab; opens when a call that
// loads a URL names no tab.
func (f *fakeBrowser) resolve(_ broker.Caller, profile string, tab int, _, opens bool) (broker.Resolution, error) {
	p := f.profiles[0]
	if profile != "" {
		var ok bool
		if p, ok = broker.FindProfile(f.profiles, profile); !ok {
			return broker.Resolution{}, broker.ErrUnknownProfile
		}
	}
	if tab == 0 && opens {
		return broker.Resolution{Profile: p, Opens: true}, nil
	}
	if f.others[tab] {
		return broker.Resolution{Profile: p}, fmt.Errorf("%w: tab %d belongs to another app", broker.ErrNotYourTab, tab)
	}
	info, _ := p.Tab(tab)
	return broker.Resolution{Profile: p, Tab: info}, nil
}

func (f *fakeBrowser) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

type rig struct {
	dir      string
	browser  *fakeBrowser
	guard    *policy.Guard
	timeline *timeline.Store
	tg       *toolGuard
	client   *client.Client
	notes    chan mcp.JSONRPCNotification
}

// newRig serves the real tools with the real policy guard and timeline
// over mcp-go's in-process client, as "claude-ai".
func newRig(t *testing.T, pc policy.Config) *rig {
	t.Helper()
	r := &rig{dir: t.TempDir(), browser: newFakeBrowser(), notes: make(chan mcp.JSONRPCNotification, 100)}
	pc.Path = filepath.Join(r.dir, "policy.json")
	pc.Classify = tmcp.Classify // as Run wires it
	var err error
	if r.guard, err = policy.Open(pc); err != nil {
		t.Fatal(err)
	}
	if r.timeline, err = timeline.Open(filepath.Join(r.dir, "timeline.db"), timeline.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.timeline.Close() })
	tg := newToolGuard(r.guard, r.timeline, r.browser.resolve, slog.New(slog.DiscardHandler))
	r.tg = tg
	srv := tmcp.NewServer(r.browser, tmcp.Config{Version: "test", Fence: "FENCE", EnabledTools: []string{"browser_evaluate"}, Guard: tg, Recorder: tg})
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c.OnNotification(func(n mcp.JSONRPCNotification) { r.notes <- n })
	if _, err := mcpclient.Initialize(ctx, c, "claude-ai"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	r.client = c
	return r
}

func (r *rig) call(t *testing.T, name string, args map[string]any, progressToken any) (string, bool) {
	t.Helper()
	var meta *mcp.Meta
	if progressToken != nil {
		meta = &mcp.Meta{ProgressToken: progressToken}
	}
	text, isErr, err := mcpclient.Call(context.Background(), r.client, name, args, meta)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return text, isErr
}

// last is the newest timeline row.
func (r *rig) last(t *testing.T) timeline.Entry {
	t.Helper()
	rows, err := r.timeline.Query(context.Background(), timeline.Filter{Limit: 1})
	if err != nil || len(rows) != 1 {
		t.Fatalf("timeline: %v, %d rows", err, len(rows))
	}
	return rows[0]
}

func TestPauseRefusesEveryCall(t *testing.T) {
	r := newRig(t, policy.Config{})
	if err := r.guard.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	text, isErr := r.call(t, "browser_snapshot", nil, nil)
	if !isErr || text != policy.PausedMessage || r.browser.count() != 0 {
		t.Fatalf("paused call: %q (error %v), browser calls %d", text, isErr, r.browser.count())
	}
	if e := r.last(t); e.Outcome != timeline.Paused || e.Client != "claude-ai" || e.Tool != "browser_snapshot" {
		t.Fatalf("timeline: %+v", e)
	}
	if err := r.guard.SetPaused(false); err != nil {
		t.Fatal(err)
	}
	if text, isErr := r.call(t, "browser_snapshot", nil, nil); isErr {
		t.Fatalf("after resume: %s", text)
	}
	e := r.last(t)
	if e.Outcome != timeline.OK || e.Profile != "work" || e.Tab != 1 || e.Site != "https://app.example" || e.Class != "read" {
		t.Fatalf("timeline: %+v", e)
	}
}

func TestSensitiveWithoutUI(t *testing.T) {
	t.Run("denied", func(t *testing.T) {
		r := newRig(t, policy.Config{})
		text, isErr := r.call(t, "browser_evaluate", map[string]any{"expression": "1+1"}, nil)
		// The app without a display denies the same way: the text names both.
		if !isErr || !strings.Contains(text, "needs the user's approval") || !strings.Contains(text, "(tether serve, or the app without a display)") || r.browser.count() != 0 {
			t.Fatalf("%q %v, browser calls %d", text, isErr, r.browser.count())
		}
		if e := r.last(t); e.Outcome != timeline.Denied || !strings.Contains(e.Decision, "no one to ask") || e.Site != "https://app.example" {
			t.Fatalf("timeline: %+v", e)
		}
		// Read, navigate and interact are allowed by default.
		for tool, args := range map[string]map[string]any{
			"browser_snapshot": nil,
			"browser_navigate": {"url": "https://elsewhere.example/"},
			"browser_click":    {"ref": "e1"},
		} {
			if text, isErr := r.call(t, tool, args, nil); isErr {
				t.Fatalf("%s: %s", tool, text)
			}
		}
	})
	t.Run("unattended allow", func(t *testing.T) {
		r := newRig(t, policy.Config{Unattended: policy.Allow})
		if text, isErr := r.call(t, "browser_evaluate", map[string]any{"expression": "1+1"}, nil); isErr || r.browser.count() != 1 {
			t.Fatalf("%q", text)
		}
		if e := r.last(t); e.Outcome != timeline.OK || !strings.Contains(e.Decision, "unattended") {
			t.Fatalf("timeline: %+v", e)
		}
	})
}

// dialog is a fake Approver: it hands each request to the test and returns
// the test's answer.
type dialog struct {
	asked   chan policy.Request
	answers chan policy.Answer
}

func (d *dialog) Ask(ctx context.Context, r policy.Request) (policy.Answer, error) {
	d.asked <- r
	select {
	case a := <-d.answers:
		return a, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func TestApprovals(t *testing.T) {
	for _, tt := range []struct {
		answer  policy.Answer
		allowed bool
	}{{policy.AllowOnce, true}, {policy.AlwaysAllowSite, true}, {policy.DenyOnce, false}} {
		t.Run(string(tt.answer), func(t *testing.T) {
			d := &dialog{asked: make(chan policy.Request, 1), answers: make(chan policy.Answer, 1)}
			r := newRig(t, policy.Config{Approver: d, ProgressEvery: 5 * time.Millisecond})
			type result struct {
				text  string
				isErr bool
			}
			done := make(chan result)
			go func() {
				text, isErr := r.call(t, "browser_evaluate", map[string]any{"expression": "1+1", "tab": 2}, "tok-1")
				done <- result{text, isErr}
			}()
			req := <-d.asked
			if req.Tool != "browser_evaluate" || req.Client != "claude-ai" || req.Profile != "work" || req.Tab != 2 ||
				len(req.Sites) != 1 || req.Sites[0] != "https://bank.example" || req.Summary != "expression=<redacted, 3 chars>" {
				t.Fatalf("request: %+v", req)
			}
			if p := r.guard.Pending(); len(p) != 1 || p[0].ID != req.ID {
				t.Fatalf("pending: %+v", p)
			}
			// The held call keeps the client alive with progress notifications.
			n := <-r.notes
			if n.Method != "notifications/progress" || n.Params.AdditionalFields["progressToken"] != "tok-1" {
				t.Fatalf("notification: %+v", n)
			}
			d.answers <- tt.answer
			res := <-done
			if res.isErr == tt.allowed {
				t.Fatalf("%s: %q", tt.answer, res.text)
			}
			e := r.last(t)
			if tt.allowed && (e.Outcome != timeline.OK || r.browser.count() != 1) ||
				!tt.allowed && (e.Outcome != timeline.Denied || r.browser.count() != 0 || !strings.Contains(res.text, "denied")) {
				t.Fatalf("timeline %+v, browser calls %d", e, r.browser.count())
			}
			if !strings.Contains(e.Decision, "confirm") {
				t.Fatalf("decision: %q", e.Decision)
			}
			b, err := os.ReadFile(filepath.Join(r.dir, "policy.json"))
			rule := err == nil && strings.Contains(string(b), `"site": "https://bank.example"`)
			if rule != (tt.answer == policy.AlwaysAllowSite) {
				t.Fatalf("policy.json (%v): %s", err, b)
			}
			if tt.answer == policy.AlwaysAllowSite {
				// Now allowed on that site without asking...
				if text, isErr := r.call(t, "browser_evaluate", map[string]any{"expression": "1", "tab": 2}, nil); isErr {
					t.Fatal(text)
				}
				// ...but still held on another.
				held := make(chan bool)
				go func() {
					_, isErr := r.call(t, "browser_evaluate", map[string]any{"expression": "1"}, nil)
					held <- isErr
				}()
				if req := <-d.asked; req.Sites[0] != "https://app.example" {
					t.Fatalf("asked about %v", req.Sites)
				}
				d.answers <- policy.DenyOnce
				if isErr := <-held; !isErr {
					t.Fatal("denied call ran")
				}
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		r := newRig(t, policy.Config{Approver: policy.QueueOnly{}, Timeout: 100 * time.Millisecond})
		file := filepath.Join(t.TempDir(), "cv.pdf") // upload paths must exist: they are resolved before the prompt
		if err := os.WriteFile(file, []byte("%PDF"), 0o600); err != nil {
			t.Fatal(err)
		}
		text, isErr := r.call(t, "browser_file_upload", map[string]any{"ref": "e1", "paths": []any{file}}, nil)
		if !isErr || !strings.Contains(text, "did not approve") || r.browser.count() != 0 {
			t.Fatalf("%q", text)
		}
		if e := r.last(t); e.Outcome != timeline.Denied || !strings.Contains(e.Decision, "no answer within") || e.Duration < 100*time.Millisecond {
			t.Fatalf("timeline: %+v", e)
		}
	})
	t.Run("window queue answers", func(t *testing.T) {
		r := newRig(t, policy.Config{Approver: policy.QueueOnly{}})
		done := make(chan bool)
		go func() {
			_, isErr := r.call(t, "browser_evaluate", map[string]any{"expression": "1"}, nil)
			done <- isErr
		}()
		var pending []policy.Request
		for ch := r.guard.Changed(); ; ch = r.guard.Changed() {
			if pending = r.guard.Pending(); len(pending) > 0 {
				break
			}
			<-ch
		}
		if err := r.guard.Answer(pending[0].ID, policy.AllowOnce); err != nil {
			t.Fatal(err)
		}
		if isErr := <-done; isErr {
			t.Fatal("not allowed")
		}
	})
}

func TestPolicySitesFromTabsAndTargets(t *testing.T) {
	r := newRig(t, policy.Config{})
	if err := r.guard.AddRule(policy.Rule{Site: "bank.example", Action: policy.Deny}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		tool    string
		args    map[string]any
		refused bool
	}{
		{"browser_snapshot", nil, false},                     // current tab: app.example
		{"browser_snapshot", map[string]any{"tab": 2}, true}, // tab 2: bank.example
		{"browser_click", map[string]any{"ref": "e1", "tab": 2, "profile": "Work"}, true},
		{"browser_snapshot", map[string]any{"tab": 2, "profile": "wo"}, true},       // a slug prefix, as the broker resolves it
		{"browser_snapshot", map[string]any{"tab": 2, "profile": "c0ffee00"}, true}, // an id prefix
		{"browser_navigate", map[string]any{"url": "https://bank.example/x"}, true},
		{"browser_navigate", map[string]any{"url": "https://ok.example/", "tab": 2}, false}, // judged by the target
		{"browser_read_url", map[string]any{"url": "http://bank.example/"}, true},
		{"browser_tabs", map[string]any{"action": "new", "url": "https://bank.example"}, true},
		{"browser_tabs", nil, false},
	} {
		text, isErr := r.call(t, tt.tool, tt.args, nil)
		if tt.refused != (isErr && strings.Contains(text, "does not allow")) {
			t.Errorf("%s %v: %q (error %v), want refused %v", tt.tool, tt.args, text, isErr, tt.refused)
		}
		if tt.refused {
			if e := r.last(t); e.Outcome != timeline.Refused || !strings.Contains(e.Decision, "deny") {
				t.Errorf("timeline: %+v", e)
			}
		}
	}
}

// TestToolRedactionsReachTheTimeline: what each tool's definition says
// about its arguments (mcp.Tool's Redacted, Plain) is what the timeline
// stores, refused calls included.
func TestToolRedactionsReachTheTimeline(t *testing.T) {
	r := newRig(t, policy.Config{})
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"browser_evaluate", map[string]any{"expression": "document.cookie"}, "expression=<redacted, 15 chars>"}, // sensitive: refused without a UI
		{"browser_press_key", map[string]any{"key": "Enter"}, "key=Enter"},
		{"browser_click", map[string]any{"ref": "e1", "session": "abc"}, ""}, // an unknown argument: refused by the schema
	} {
		r.call(t, tt.tool, tt.args, nil)
		if e := r.last(t); e.Tool != tt.tool || tt.want != "" && e.Args != tt.want || strings.Contains(e.Args, "abc") {
			t.Errorf("%s: timeline args %q, want %q", tt.tool, e.Args, tt.want)
		}
	}
}

func TestTypedTextNeverStored(t *testing.T) {
	r := newRig(t, policy.Config{})
	const secret = "correct-horse-battery-staple-4711"
	if text, isErr := r.call(t, "browser_type", map[string]any{"ref": "e1", "text": secret, "submit": true}, nil); isErr {
		t.Fatal(text)
	}
	e := r.last(t)
	if e.Args != "ref=e1 submit=true text=<redacted, 33 chars>" {
		t.Fatalf("args: %q", e.Args)
	}
	var buf bytes.Buffer
	if _, err := r.timeline.Export(context.Background(), &buf, timeline.Filter{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), secret) {
		t.Fatal("secret in the export")
	}
	if err := r.timeline.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(r.dir, "timeline.db*"))
	if len(files) == 0 {
		t.Fatal("no database file")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte("horse-battery")) {
			t.Fatalf("the typed text is in %s", f)
		}
	}
}

// TestPauseThroughTheControlAPI drives the real daemon: tether pause and
// resume's endpoint, then an MCP call over HTTP.
func TestPauseThroughTheControlAPI(t *testing.T) {
	p, addr := startDaemon(t, true)
	ctx := context.Background()
	var res apitype.Pause
	if err := Control(ctx, p, http.MethodPost, apitype.PathPause, apitype.Pause{Paused: true}, &res); err != nil || !res.Paused {
		t.Fatalf("pause: %v %+v", err, res)
	}
	c := mcpClient(t, p, addr)
	text, isErr := toolText(t, c, "browser_tabs", nil)
	if !isErr || text != policy.PausedMessage {
		t.Fatalf("while paused: %q", text)
	}
	if err := Control(ctx, p, http.MethodGet, apitype.PathPause, nil, &res); err != nil || !res.Paused {
		t.Fatalf("get: %v %+v", err, res)
	}
	if err := Control(ctx, p, http.MethodPost, apitype.PathPause, apitype.Pause{Paused: false}, &res); err != nil || res.Paused {
		t.Fatalf("resume: %v %+v", err, res)
	}
	if text, isErr := toolText(t, c, "browser_tabs", nil); isErr {
		t.Fatalf("after resume: %q", text)
	}
	if err := Control(ctx, p, http.MethodPost, apitype.PathPause, map[string]string{}, nil); err == nil {
		t.Fatal("a body without paused was accepted")
	}
	// Both calls are on the timeline, with the client's name, as `tether
	// timeline` reads it from the running daemon (the local API: its
	// queries see every row recorded before them, stored or queued).
	rows, err := localclient.New(p).Timeline(ctx, apitype.TimelineFilter{Client: "integration"})
	if err != nil || len(rows) != 2 || rows[0].Outcome != string(timeline.OK) || rows[1].Outcome != string(timeline.Paused) {
		t.Fatalf("timeline: %v %+v", err, rows)
	}
}

func TestToolErrorsAndStartEvents(t *testing.T) {
	r := newRig(t, policy.Config{})
	sub := r.timeline.Subscribe(10)
	defer sub.Unsubscribe()
	text, isErr := r.call(t, "browser_click", map[string]any{"ref": ""}, nil)
	if !isErr {
		t.Fatal(text)
	}
	e := r.last(t)
	if e.Outcome != timeline.Error || !strings.Contains(e.Error, "ref is required") {
		t.Fatalf("timeline: %+v", e)
	}
	started, recorded := <-sub.C, <-sub.C
	if started.Kind != timeline.CallStarted || started.Entry.Tool != "browser_click" || started.Entry.Tab != 1 ||
		recorded.Kind != timeline.CallRecorded || recorded.Entry.ID != e.ID {
		t.Fatalf("events: %+v, %+v", started, recorded)
	}
}

// The approval prompt and the timeline show the file an upload reads, not
// the link the AI named (issue 12, "Upload paths").
func TestUploadPromptAndTimelineShowTheResolvedPath(t *testing.T) {
	d := &dialog{asked: make(chan policy.Request, 1), answers: make(chan policy.Answer, 1)}
	r := newRig(t, policy.Config{Approver: d})
	dir := t.TempDir()
	file := filepath.Join(dir, "real-report.pdf")
	if err := os.WriteFile(file, []byte("%PDF"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "innocent-link.pdf")
	if err := os.Symlink(file, link); err != nil {
		t.Skipf("no symlinks: %v", err)
	}
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		t.Fatal(err)
	}
	d.answers <- policy.DenyOnce
	if _, isErr := r.call(t, "browser_file_upload", map[string]any{"ref": "e1", "paths": []any{link}}, nil); !isErr {
		t.Fatal("a denied upload ran")
	}
	req := <-d.asked
	if !strings.Contains(req.Summary, real) || strings.Contains(req.Summary, "innocent-link") {
		t.Errorf("the prompt says %q; want the resolved %s", req.Summary, real)
	}
	if e := r.last(t); !strings.Contains(e.Args, real) || strings.Contains(e.Args, "innocent-link") {
		t.Errorf("the timeline says %q; want the resolved %s", e.Args, real)
	}
}

// Every file an upload reads is in the approval prompt: the summary used to
// cut the list of paths at 120 characters, so a long first path hid a
// second one (~/.ssh/id_ed25519, say) from the user who approved it. A list
// too long to show whole is refused before anyone is asked.
func TestUploadPromptShowsEveryPathOrRefuses(t *testing.T) {
	d := &dialog{asked: make(chan policy.Request, 1), answers: make(chan policy.Answer, 1)}
	r := newRig(t, policy.Config{Approver: d})
	dir := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return real
	}
	decoy := write(strings.Repeat("quarterly-report-", 6) + ".pdf")
	secret := write("id_ed25519")

	d.answers <- policy.DenyOnce
	if _, isErr := r.call(t, "browser_file_upload", map[string]any{"ref": "e1", "paths": []any{decoy, secret}}, nil); !isErr {
		t.Fatal("a denied upload ran")
	}
	req := <-d.asked
	if !strings.Contains(req.Summary, decoy) || !strings.Contains(req.Summary, secret) {
		t.Errorf("the prompt says %q; want both %s and %s", req.Summary, decoy, secret)
	}

	var many []any
	for i := 0; i < 8; i++ {
		many = append(many, decoy)
	}
	many = append(many, secret)
	text, isErr := r.call(t, "browser_file_upload", map[string]any{"ref": "e1", "paths": many}, nil)
	if !isErr || !strings.Contains(text, "too long to show the user in full") {
		t.Fatalf("an upload too long to show whole: error %v, %q", isErr, text)
	}
	select {
	case req := <-d.asked:
		t.Fatalf("the user was asked about %q, which hides some paths", req.Summary)
	default:
	}
	if e := r.last(t); e.Outcome != timeline.Outcome(policy.Refused) {
		t.Errorf("the timeline says %+v; want refused", e)
	}
}

// A call a confirm rule would hold, whose element ref the page does not
// know, fails at once with what to do, and the user is never asked (a
// fresh-user trial was asked to approve an upload into a ref never issued,
// which then failed); with a ref the page knows, the user is asked as
// before.
func TestUnknownRefIsNotHeldForApproval(t *testing.T) {
	d := &dialog{asked: make(chan policy.Request, 1), answers: make(chan policy.Answer, 1)}
	r := newRig(t, policy.Config{Approver: d})
	var checked []string
	r.tg.checkRef = func(_ context.Context, c broker.Caller, profile string, tab int, ref string) error {
		checked = append(checked, fmt.Sprintf("%s/%d/%s by %s", profile, tab, ref, c.App))
		if ref == "d5e1" {
			return &broker.RemoteError{Code: protocol.CodeUnknownRef, Message: "Element ref d5e1 was never issued in this tab."}
		}
		return nil
	}
	file := filepath.Join(t.TempDir(), "cv.pdf")
	if err := os.WriteFile(file, []byte("%PDF"), 0o600); err != nil {
		t.Fatal(err)
	}
	text, isErr := r.call(t, "browser_file_upload", map[string]any{"ref": "d5e1", "paths": []any{file}, "tab": 2}, nil)
	if !isErr || !strings.Contains(text, "not asked") || !strings.Contains(text, "never issued") || !strings.Contains(text, "browser_snapshot") {
		t.Fatalf("upload into an unknown ref: %q (error %v)", text, isErr)
	}
	if len(d.asked) != 0 || len(r.guard.Pending()) != 0 || r.browser.count() != 0 {
		t.Fatalf("asked %d, pending %d, browser calls %d; want none", len(d.asked), len(r.guard.Pending()), r.browser.count())
	}
	if e := r.last(t); e.Outcome != timeline.Error || !strings.Contains(e.Decision, "not asked") {
		t.Fatalf("timeline: %+v", e)
	}
	if len(checked) != 1 || checked[0] != "work/2/d5e1 by claude-ai" {
		t.Fatalf("checked %v", checked)
	}
	// A ref the page knows: asked, as before.
	done := make(chan bool)
	go func() {
		_, isErr := r.call(t, "browser_file_upload", map[string]any{"ref": "e1", "paths": []any{file}, "tab": 2}, nil)
		done <- isErr
	}()
	<-d.asked
	d.answers <- policy.AllowOnce
	if isErr := <-done; isErr || r.browser.count() != 1 {
		t.Fatalf("an approved upload into a known ref: error %v, browser calls %d", isErr, r.browser.count())
	}
}

// A call held for the user's approval tells whose it is (heldFor, the
// broker's SessionOpened in the daemon) as it is held: a session waiting
// for an answer is not idle, so a stateless app's session is not ended
// (nor its tabs closed) while the user makes up their mind.
func TestHeldCallKeepsItsSession(t *testing.T) {
	d := &dialog{asked: make(chan policy.Request, 1), answers: make(chan policy.Answer, 1)}
	r := newRig(t, policy.Config{Approver: d})
	held := make(chan broker.Caller, 1)
	r.tg.heldFor = func(c broker.Caller) { held <- c }
	file := filepath.Join(t.TempDir(), "cv.pdf")
	if err := os.WriteFile(file, []byte("%PDF"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	go func() {
		_, isErr := r.call(t, "browser_file_upload", map[string]any{"ref": "e1", "paths": []any{file}, "tab": 2}, nil)
		done <- isErr
	}()
	<-d.asked
	select {
	case c := <-held:
		if c.App != "claude-ai" || c.Session == "" {
			t.Fatalf("held for %+v, want claude-ai's session", c)
		}
	default:
		t.Fatal("the user was asked, and the session was not told its call is held")
	}
	d.answers <- policy.AllowOnce
	if isErr := <-done; isErr {
		t.Fatal("the approved upload failed")
	}
}

// TestRefusedCallNamesItsTab: a call refused because the tab is another
// app's is on the timeline with the profile and tab it named, so a filter
// by profile finds it.
func TestRefusedCallNamesItsTab(t *testing.T) {
	r := newRig(t, policy.Config{})
	r.browser.others = map[int]bool{2: true}
	if text, isErr := r.call(t, "browser_click", map[string]any{"profile": "wo", "tab": 2, "ref": "e1"}, nil); !isErr || !strings.Contains(text, "refused") {
		t.Fatalf("a click on another app's tab was not refused: %q", text)
	}
	if e := r.last(t); e.Outcome != timeline.Refused || e.Profile != "work" || e.Tab != 2 {
		t.Errorf("the refused call is on the timeline as %s on profile %q tab %d, want refused on work tab 2", e.Outcome, e.Profile, e.Tab)
	}
	if r.browser.count() != 0 {
		t.Error("the refused call reached the browser")
	}
}
