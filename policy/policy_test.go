package policy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClassifyFailsClosed: the class comes from Config.Classify (the MCP
// tools' definitions; mcp's tests check the table); without it, or for a
// class it does not know, a call is sensitive.
func TestClassifyFailsClosed(t *testing.T) {
	ctx := context.Background()
	classes := map[string]Class{"browser_snapshot": Read, "browser_odd": "odd"}
	classify := func(tool, action string) Class {
		if action != "" {
			t.Errorf("action %q, want none", action)
		}
		return classes[tool]
	}
	for _, tt := range []struct {
		tool     string
		classify func(string, string) Class
		want     Class
	}{
		{"browser_snapshot", classify, Read},
		{"browser_snapshot", nil, Sensitive},
		{"browser_odd", classify, Sensitive},
		{"browser_some_future_tool", classify, Sensitive},
	} {
		g, _ := Open(Config{Path: filepath.Join(t.TempDir(), "p.json"), Classify: tt.classify})
		if v := g.Check(ctx, Call{Tool: tt.tool}); v.Class != tt.want {
			t.Errorf("%s (classify set: %v): class %s, want %s", tt.tool, tt.classify != nil, v.Class, tt.want)
		}
	}
}

func TestOrigin(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://Mail.Example.com/inbox?x=1", "https://mail.example.com"},
		{"https://example.com:443/", "https://example.com"},
		{"http://127.0.0.1:8000/001/source.html", "http://127.0.0.1:8000"},
		{"http://[::1]:8080/", "http://[::1]:8080"},
		{"file:///home/u/a.html", "file://"},
		{"about:blank", "about:blank"},
		{"not a url", ""},
		{"", ""},
	} {
		if got := Origin(tt.in); got != tt.want {
			t.Errorf("Origin(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSitePatterns(t *testing.T) {
	for _, tt := range []struct {
		pattern, origin string
		want            bool
	}{
		{"*", "https://a.com", true},
		{"", "", true},
		{"https://a.com", "https://a.com", true},
		{"https://a.com", "http://a.com", false},
		{"https://a.com", "https://a.com:8443", false},
		{"https://a.com/", "https://a.com", true},
		{"a.com", "http://a.com", true},
		{"a.com", "https://a.com:8443", true},
		{"a.com", "https://b.a.com", false},
		{"*.a.com", "https://a.com", true},
		{"*.a.com", "https://x.y.a.com", true},
		{"*.a.com", "https://xa.com", false},
		{"https://*.a.com", "http://x.a.com", false},
		{"http://127.0.0.1:8000", "http://127.0.0.1:8000", true},
		{"127.0.0.1:8000", "http://127.0.0.1:8000", true},
		{"127.0.0.1:8000", "http://127.0.0.1:9000", false},
		{"file://", "file://", true},
		{"about:blank", "about:blank", true},
		{"a.com", "", false},
	} {
		p, ok := parseSite(tt.pattern)
		if !ok {
			t.Errorf("parseSite(%q) failed", tt.pattern)
			continue
		}
		if got := p.match(tt.origin); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.origin, got, tt.want)
		}
	}
	for _, bad := range []string{"https://a.com/path", "a.com/x", "*", "a*.com"} {
		_, ok := parseSite(bad)
		if ok == (bad != "*") {
			t.Errorf("parseSite(%q) ok = %v", bad, ok)
		}
	}
}

func TestEvaluate(t *testing.T) {
	rules := []Rule{
		{Class: Sensitive, Site: "https://docs.example.com", Action: Allow},
		{Site: "bank.example", Action: Deny},
		{Class: Interact, Site: "*.shop.example", Client: "cursor", Action: Confirm},
		{Class: Sensitive, Site: "*", Client: "trusted-bot", Action: Allow},
		{Class: Navigate, Site: "https://x.example", Action: Allow},
		{Class: Navigate, Site: "https://x.example", Action: Deny}, // tie: stricter wins
		{Class: Read, Site: "https://bank.example", Action: Allow}, // more specific site beats bank.example
	}
	for _, tt := range []struct {
		name   string
		class  Class
		sites  []string
		client string
		want   Action
		byRule bool
	}{
		{"read default", Read, []string{"https://a.com"}, "claude-ai", Allow, false},
		{"navigate default", Navigate, []string{"https://a.com"}, "", Allow, false},
		{"interact default", Interact, []string{"https://a.com"}, "", Allow, false},
		{"sensitive default", Sensitive, []string{"https://a.com"}, "", Confirm, false},
		{"sensitive, unknown site", Sensitive, nil, "", Confirm, false},
		{"always allowed site", Sensitive, []string{"https://docs.example.com"}, "claude-ai", Allow, true},
		{"same host, other scheme", Sensitive, []string{"http://docs.example.com"}, "claude-ai", Confirm, false},
		{"deny host any class", Interact, []string{"https://bank.example"}, "", Deny, true},
		{"deny host, http", Read, []string{"http://bank.example"}, "", Deny, true},
		{"exact origin beats host", Read, []string{"https://bank.example"}, "", Allow, true},
		{"client rule matches case-insensitively", Interact, []string{"https://a.shop.example"}, "Cursor", Confirm, true},
		{"client rule, other client", Interact, []string{"https://a.shop.example"}, "claude-ai", Allow, false},
		{"client any-site rule", Sensitive, []string{"https://a.com"}, "trusted-bot", Allow, true},
		{"site rule beats client rule", Interact, []string{"https://bank.example"}, "trusted-bot", Deny, true},
		{"tie goes to the stricter", Navigate, []string{"https://x.example"}, "", Deny, true},
		{"several sites: strictest", Interact, []string{"https://a.com", "https://bank.example"}, "", Deny, true},
		{"unknown site matches no site rule", Interact, nil, "", Allow, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := Evaluate(rules, tt.class, tt.sites, tt.client)
			if d.Action != tt.want || (d.Rule != nil) != tt.byRule {
				t.Fatalf("got %s (rule %v), want %s (by rule %v)", d.Action, d.Rule, tt.want, tt.byRule)
			}
		})
	}
}

func TestRuleValidate(t *testing.T) {
	for _, tt := range []struct {
		r  Rule
		ok bool
	}{
		{Rule{Action: Allow}, true},
		{Rule{Class: "*", Site: "*", Client: "*", Action: Deny}, true},
		{Rule{Class: Sensitive, Site: "https://a.com", Action: Confirm}, true},
		{Rule{Class: "write", Action: Allow}, false},
		{Rule{Action: "maybe"}, false},
		{Rule{Site: "https://a.com/x", Action: Allow}, false},
	} {
		err := tt.r.Validate()
		if (err == nil) != tt.ok || err != nil && !errors.Is(err, ErrInvalidRule) {
			t.Errorf("%+v: Validate() = %v, want ok %v", tt.r, err, tt.ok)
		}
	}
}

func TestCorruptFileIsAnErrorAndKept(t *testing.T) {
	for name, content := range map[string]string{
		"not json":    "{rules: [",
		"bad rule":    `{"version":1,"rules":[{"class":"write","action":"allow"}]}`,
		"new version": `{"version":9,"rules":[]}`,
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "policy.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Open(Config{Path: path})
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Open: %v; want ErrCorrupt naming %s", err, path)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Fatalf("file was changed: %s", b)
			}
		})
	}
}

func TestRulesAndPausePersist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.json")
	g, err := Open(Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.AddRule(Rule{Class: "write", Action: Allow}); !errors.Is(err, ErrInvalidRule) {
		t.Fatalf("invalid rule accepted: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("an invalid rule wrote the file: %v", err)
	}
	ch := g.Changed()
	if err := g.AddRule(Rule{Class: Sensitive, Site: "https://a.com", Action: Allow}); err != nil {
		t.Fatal(err)
	}
	<-ch // closed by the change
	if err := g.AddRule(Rule{Class: Sensitive, Site: "https://A.com", Action: Deny}); err != nil {
		t.Fatal(err)
	}
	if err := g.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("policy.json: %v, mode %v", err, info.Mode())
	}
	g2, err := Open(Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	rules := g2.Rules()
	if !g2.Paused() || len(rules) != 1 || rules[0].Action != Deny {
		t.Fatalf("reopened: paused %v, rules %+v; want paused and the one replaced rule", g2.Paused(), rules)
	}
}

// answerer is an Approver answering from a channel.
type answerer struct {
	asked chan Request
	reply chan Answer
}

func (a *answerer) Ask(ctx context.Context, r Request) (Answer, error) {
	a.asked <- r
	select {
	case ans := <-a.reply:
		return ans, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func newAnswerer() *answerer {
	return &answerer{asked: make(chan Request, 1), reply: make(chan Answer, 1)}
}

var upload = Call{Tool: "browser_file_upload", Client: "claude-ai", Profile: "work", Tab: 2, Sites: []string{"https://a.com"}, Summary: "paths=[/tmp/x] ref=e3"}

func TestConfirm(t *testing.T) {
	ctx := context.Background()
	t.Run("no UI denies", func(t *testing.T) {
		g, _ := Open(Config{Path: filepath.Join(t.TempDir(), "p.json")})
		v := g.Check(ctx, upload)
		if v.Allow || v.Outcome != Denied || !strings.Contains(v.Message, "without a window") {
			t.Fatalf("%+v", v)
		}
	})
	t.Run("no UI, unattended allow", func(t *testing.T) {
		g, _ := Open(Config{Path: filepath.Join(t.TempDir(), "p.json"), Unattended: Allow})
		if v := g.Check(ctx, upload); !v.Allow || !strings.Contains(v.Decision, "unattended") {
			t.Fatalf("%+v", v)
		}
	})
	for _, tt := range []struct {
		answer Answer
		allow  bool
		rule   bool
	}{{AllowOnce, true, false}, {AlwaysAllowSite, true, true}, {DenyOnce, false, false}} {
		t.Run(string(tt.answer), func(t *testing.T) {
			a := newAnswerer()
			path := filepath.Join(t.TempDir(), "p.json")
			g, _ := Open(Config{Path: path, Approver: a})
			done := make(chan Verdict)
			go func() { done <- g.Check(ctx, upload) }()
			req := <-a.asked
			if p := g.Pending(); len(p) != 1 || p[0].ID != req.ID || p[0].Tool != "browser_file_upload" || p[0].Sites[0] != "https://a.com" || p[0].Profile != "work" {
				t.Fatalf("pending: %+v", p)
			}
			a.reply <- tt.answer
			v := <-done
			if v.Allow != tt.allow {
				t.Fatalf("%s: %+v", tt.answer, v)
			}
			if !tt.allow && (v.Outcome != Denied || !strings.Contains(v.Decision, "denied by the user")) {
				t.Fatalf("%+v", v)
			}
			if len(g.Pending()) != 0 {
				t.Fatal("still pending")
			}
			if err := g.Answer(req.ID, AllowOnce); !errors.Is(err, ErrNotPending) {
				t.Fatalf("late answer: %v", err)
			}
			g2, _ := Open(Config{Path: path})
			if got := len(g2.Rules()); got != map[bool]int{true: 1, false: 0}[tt.rule] {
				t.Fatalf("rules on disk: %d", got)
			}
			if tt.rule {
				// The next upload on that site runs without asking.
				if v := g.Check(ctx, upload); !v.Allow || strings.Contains(v.Decision, "confirm") {
					t.Fatalf("after always: %+v", v)
				}
				// The rule is the asking app's: another app is still asked.
				if r := g2.Rules()[0]; r.Client != upload.Client || r.Client == "" {
					t.Fatalf("the rule %+v is not scoped to %q", r, upload.Client)
				}
				other := upload
				other.Client = "cursor"
				go func() { done <- g.Check(ctx, other) }()
				req := <-a.asked
				if req.Client != "cursor" {
					t.Fatalf("asked %+v", req)
				}
				a.reply <- DenyOnce
				<-done
			}
		})
	}
	t.Run("queue answer wins over the dialog", func(t *testing.T) {
		a := newAnswerer()
		g, _ := Open(Config{Path: filepath.Join(t.TempDir(), "p.json"), Approver: a})
		done := make(chan Verdict)
		go func() { done <- g.Check(ctx, upload) }()
		req := <-a.asked
		if err := g.Answer(req.ID, DenyOnce); err != nil {
			t.Fatal(err)
		}
		if v := <-done; v.Allow {
			t.Fatalf("%+v", v)
		}
	})
	t.Run("timeout denies, with progress", func(t *testing.T) {
		progress := make(chan string, 100)
		g, _ := Open(Config{Path: filepath.Join(t.TempDir(), "p.json"), Approver: QueueOnly{},
			Timeout: 200 * time.Millisecond, ProgressEvery: 10 * time.Millisecond})
		c := upload
		c.Progress = func(m string) { progress <- m }
		v := g.Check(ctx, c)
		if v.Allow || v.Outcome != Denied || !strings.Contains(v.Decision, "no answer within 200ms") {
			t.Fatalf("%+v", v)
		}
		if len(progress) == 0 {
			t.Fatal("no progress while waiting")
		}
	})
	t.Run("client cancels", func(t *testing.T) {
		g, _ := Open(Config{Path: filepath.Join(t.TempDir(), "p.json"), Approver: QueueOnly{}})
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan Verdict)
		go func() { done <- g.Check(cctx, upload) }()
		for ch := g.Changed(); len(g.Pending()) == 0; ch = g.Changed() {
			<-ch
		}
		cancel()
		if v := <-done; v.Allow || !strings.Contains(v.Decision, "cancelled") {
			t.Fatalf("%+v", v)
		}
	})
}

func TestPauseAndDeny(t *testing.T) {
	ctx := context.Background()
	g, _ := Open(Config{Path: filepath.Join(t.TempDir(), "p.json"), Unattended: Allow})
	if err := g.AddRule(Rule{Site: "https://a.com", Action: Deny}); err != nil {
		t.Fatal(err)
	}
	if v := g.Check(ctx, Call{Tool: "browser_snapshot", Sites: []string{"https://a.com"}}); v.Allow || v.Outcome != Refused || !strings.Contains(v.Message, "https://a.com") {
		t.Fatalf("deny rule: %+v", v)
	}
	if v := g.Check(ctx, Call{Tool: "browser_snapshot", Sites: []string{"https://b.com"}}); !v.Allow {
		t.Fatalf("other site: %+v", v)
	}
	if err := g.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	if v := g.Check(ctx, Call{Tool: "browser_snapshot", Sites: []string{"https://b.com"}}); v.Allow || v.Outcome != Paused || v.Message != PausedMessage {
		t.Fatalf("paused: %+v", v)
	}
}

// TestHeldCallAnswers: a held call keeps the daemon's call id, reports its
// hold once, and its verdict says what answered it and where.
func TestHeldCallAnswers(t *testing.T) {
	for _, tt := range []struct {
		name           string
		answer         func(g *Guard, id string, cancel func())
		timeout        time.Duration
		wantAnswer, by string
		wantAllow      bool
		wantOutcome    Outcome
	}{
		{"window", func(g *Guard, id string, _ func()) { _ = g.Answer(id, AllowOnce) }, 0, string(AllowOnce), ByWindow, true, ""},
		{"cli", func(g *Guard, id string, _ func()) { _ = g.AnswerBy(id, DenyOnce, ByCLI) }, 0, string(DenyOnce), ByCLI, false, Denied},
		{"pause", func(g *Guard, _ string, _ func()) { _ = g.SetPaused(true) }, 0, string(DenyOnce), ByPause, false, Paused},
		{"cancelled", func(_ *Guard, _ string, cancel func()) { cancel() }, 0, AnswerCancelled, ByCancelled, false, Denied},
		{"timeout", func(*Guard, string, func()) {}, 50 * time.Millisecond, AnswerTimeout, ByTimeout, false, Denied},
		{"shutdown", func(g *Guard, _ string, _ func()) {
			if n := g.DenyPending(); n != 1 {
				panic(fmt.Sprintf("DenyPending denied %d calls, want 1", n))
			}
		}, 0, string(DenyOnce), ByShutdown, false, Denied},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := Open(Config{Path: filepath.Join(t.TempDir(), "p.json"), Approver: QueueOnly{}, Timeout: tt.timeout})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			held := make(chan Request, 2)
			c := upload
			c.ID = "call-7"
			c.Held = func(r Request) { held <- r }
			done := make(chan Verdict)
			go func() { done <- g.Check(ctx, c) }()
			r := <-held
			if r.ID != "call-7" || r.Tool != upload.Tool {
				t.Fatalf("held %+v; want the call's id", r)
			}
			if p := g.Pending(); len(p) != 1 || p[0].ID != "call-7" {
				t.Fatalf("pending %+v", p)
			}
			tt.answer(g, r.ID, cancel)
			v := <-done
			if v.Answer != tt.wantAnswer || v.AnsweredBy != tt.by || v.Allow != tt.wantAllow || v.Outcome != tt.wantOutcome {
				t.Fatalf("verdict %+v; want answer %q by %q, allow %v, outcome %q", v, tt.wantAnswer, tt.by, tt.wantAllow, tt.wantOutcome)
			}
			if len(held) != 0 {
				t.Fatal("Held called more than once")
			}
		})
	}
}

// Once the daemon stops, a call that needs an answer is denied at once,
// without being held: it must not hold the stop up until its timeout.
func TestStoppingDeniesWithoutHolding(t *testing.T) {
	g, _ := Open(Config{Path: filepath.Join(t.TempDir(), "p.json"), Approver: QueueOnly{}, Timeout: time.Hour})
	g.DenyPending()
	c := upload
	c.Held = func(Request) { t.Error("a call was held while Tether stops") }
	v := g.Check(context.Background(), c)
	if v.Allow || v.Outcome != Denied || v.AnsweredBy != ByShutdown || !strings.Contains(v.Message, "Tether stopped") {
		t.Fatalf("verdict while stopping: %+v", v)
	}
}

// TestDownloadClass: a download (Call.Class, whatever Classify says) is
// allowed by default; a rule for the class denies it on a site, or holds
// it for the user like any call, shown in the queue with its class.
func TestDownloadClass(t *testing.T) {
	classify := func(string, string) Class { return Read }
	g, err := Open(Config{Path: filepath.Join(t.TempDir(), "p.json"), Approver: QueueOnly{}, Classify: classify})
	if err != nil {
		t.Fatal(err)
	}
	call := Call{ID: "d1", Tool: "download", Class: Download, Client: "claude-ai", Sites: []string{"https://files.example"}, Summary: "a.pdf"}
	if v := g.Check(context.Background(), call); !v.Allow || v.Class != Download || !strings.Contains(v.Decision, "default for download") {
		t.Fatalf("default: %+v", v)
	}
	if err := g.AddRule(Rule{Class: Download, Site: "files.example", Action: Deny}); err != nil {
		t.Fatal(err)
	}
	if v := g.Check(context.Background(), call); v.Allow || v.Outcome != Refused {
		t.Fatalf("deny rule: %+v", v)
	}
	if v := g.Check(context.Background(), Call{Tool: "download", Class: Download, Sites: []string{"https://other.example"}}); !v.Allow {
		t.Fatalf("other site: %+v", v)
	}
	// The rule is the download class's only: a click on that site runs.
	if v := g.Check(context.Background(), Call{Tool: "browser_click", Sites: []string{"https://files.example"}}); !v.Allow {
		t.Fatalf("click on the denied site: %+v", v)
	}
	if err := g.AddRule(Rule{Class: Download, Site: "files.example", Action: Confirm}); err != nil {
		t.Fatal(err)
	}
	done := make(chan Verdict, 1)
	go func() { done <- g.Check(context.Background(), call) }()
	for ch := g.Changed(); len(g.Pending()) == 0; ch = g.Changed() {
		<-ch
	}
	if p := g.Pending()[0]; p.ID != "d1" || p.Class != Download || p.Tool != "download" || p.Summary != "a.pdf" {
		t.Fatalf("held: %+v", p)
	}
	if err := g.AnswerBy("d1", AllowOnce, ByCLI); err != nil {
		t.Fatal(err)
	}
	if v := <-done; !v.Allow || v.AnsweredBy != ByCLI {
		t.Fatalf("answered: %+v", v)
	}
	if err := (Rule{Class: "downloads", Action: Deny}).Validate(); err == nil {
		t.Fatal("class downloads validated")
	}
}

// CheckFirst reads the page (the element a ref names): it runs before the
// user is asked, except on a site whose reads the user denied, where the
// user is asked without it (it would tell the caller, ref by ref, what is
// on a page it may not read).
func TestCheckFirstNotWhereReadsAreDenied(t *testing.T) {
	ctx := context.Background()
	a := newAnswerer()
	g, _ := Open(Config{Path: filepath.Join(t.TempDir(), "p.json"), Approver: a})
	if err := g.AddRule(Rule{Class: Read, Site: "bank.example", Action: Deny}); err != nil {
		t.Fatal(err)
	}
	checked := 0
	c := upload
	c.CheckFirst = func(context.Context) string { checked++; return "ref e3 is stale" }
	if v := g.Check(ctx, c); v.Outcome != Failed || checked != 1 {
		t.Fatalf("on a.com: %+v after %d checks; want it failed by the check", v, checked)
	}
	c.Sites = []string{"https://bank.example"}
	done := make(chan Verdict)
	go func() { done <- g.Check(ctx, c) }()
	select {
	case <-a.asked:
	case v := <-done:
		t.Fatalf("on bank.example: %+v after %d checks; want the user asked, no check", v, checked)
	}
	a.reply <- DenyOnce
	if v := <-done; v.Outcome != Denied || checked != 1 {
		t.Fatalf("on bank.example: %+v after %d checks; want the user asked, no check", v, checked)
	}
}
