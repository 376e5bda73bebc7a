package app

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/localclient/localclienttest"
)

// fakeShell records what the app asks of the window.
type fakeShell struct {
	mu      sync.Mutex
	shown   int
	hidden  int
	saveTo  string
	asked   int
	emitted chan string // "event <json>", as emitted
	// backlog holds what next read but skipped, for a later next: the
	// state and the timeline events come from two goroutines, in no
	// fixed order.
	backlog []string
}

func newShell() *fakeShell { return &fakeShell{emitted: make(chan string, 1000)} }

func (s *fakeShell) Emit(event string, data any) {
	b, _ := json.Marshal(data)
	s.emitted <- event + " " + string(b)
}

func (s *fakeShell) Show() {
	s.mu.Lock()
	s.shown++
	s.mu.Unlock()
	s.emitted <- "show"
}

func (s *fakeShell) Hide() {
	s.mu.Lock()
	s.hidden++
	s.mu.Unlock()
	s.emitted <- "hide"
}

func (s *fakeShell) SaveFile(title, name string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked++
	return s.saveTo, nil
}

// next returns the next emitted thing starting with prefix and matching
// ok, skipping others; it fails the test after 5 s.
func (s *fakeShell) next(t *testing.T, prefix string, ok func(string) bool) string {
	t.Helper()
	match := func(e string) bool {
		return strings.HasPrefix(e, prefix) && (ok == nil || ok(strings.TrimPrefix(e, prefix)))
	}
	for i, e := range s.backlog {
		if match(e) {
			s.backlog = append(s.backlog[:i], s.backlog[i+1:]...)
			return strings.TrimPrefix(e, prefix)
		}
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case e := <-s.emitted:
			if match(e) {
				return strings.TrimPrefix(e, prefix)
			}
			s.backlog = append(s.backlog, e)
		case <-deadline:
			t.Fatalf("nothing emitted starting %q", prefix)
			return ""
		}
	}
}

// nextState returns the next state event whose State satisfies ok.
func (s *fakeShell) nextState(t *testing.T, ok func(State) bool) State {
	t.Helper()
	var st State
	s.next(t, EventState+" ", func(b string) bool {
		st = State{}
		if err := json.Unmarshal([]byte(b), &st); err != nil {
			t.Fatal(err)
		}
		return ok(st)
	})
	return st
}

// start runs an App of the fake daemon with a fake shell until the test
// ends; the returned channel receives run's result.
func start(t *testing.T, f *localclienttest.Fake, cfg Config) (*App, *fakeShell, <-chan error) {
	t.Helper()
	if cfg.Client == nil {
		cfg.Client = f.Client()
	}
	a := New(cfg)
	s := newShell()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	returned := make(chan struct{})
	go func() {
		done <- a.run(ctx, s)
		close(returned)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-returned:
		case <-time.After(5 * time.Second):
			t.Error("run did not return after its context ended")
		}
	})
	return a, s, done
}

func workProfile() apitype.ProfileView {
	return apitype.ProfileView{ID: "p-work", Label: "Work", Slug: "work", Status: "connected", ExtVersion: "0.4.0",
		LastSeenMs: 1, Tabs: []apitype.TabView{{Number: 1, Title: "Inbox", URL: "https://mail.example/", Current: true}, {Number: 2, Title: "Bank", URL: "https://bank.example/"}}}
}

func acting(st State) (profile bool, tabs [2]bool) {
	if len(st.Profiles) != 1 || len(st.Profiles[0].Tabs) != 2 {
		return false, tabs
	}
	p := st.Profiles[0]
	return p.Acting, [2]bool{p.Tabs[0].Acting, p.Tabs[1].Acting}
}

// A call running on a profile's current tab (no tab named) or on a named
// tab marks that tab and the profile acting, in the state events, until
// its finished event; both phases also go out as timeline events.
func TestStateFollowsTheDaemon(t *testing.T) {
	f := localclienttest.New(t)
	f.SetState(func(s *apitype.State) { s.Profiles = []apitype.ProfileView{workProfile()} })
	_, s, _ := start(t, f, Config{})
	s.nextState(t, func(st State) bool { return st.Connected && len(st.Profiles) == 1 })
	s.next(t, EventTimeline+" ", func(b string) bool { return strings.Contains(b, `"kind":"resync"`) })

	f.Call("c1", apitype.PhaseStarted, apitype.TimelineEntry{Tool: "browser_click", Client: "claude-ai", Profile: "work", TimeMs: 1000})
	st := s.nextState(t, func(st State) bool { p, _ := acting(st); return p })
	if _, tabs := acting(st); tabs != [2]bool{true, false} {
		t.Errorf("a call without a tab: tabs acting %v, want the current one only", tabs)
	}
	ev := s.next(t, EventTimeline+" ", nil)
	var te TimelineEvent
	if err := json.Unmarshal([]byte(ev), &te); err != nil || te.Kind != "started" || te.Entry.Tool != "browser_click" {
		t.Errorf("timeline event %s, want started browser_click", ev)
	}

	f.Call("c2", apitype.PhaseStarted, apitype.TimelineEntry{Tool: "browser_type", Profile: "work", Tab: 2, TimeMs: 1001})
	s.nextState(t, func(st State) bool { _, tabs := acting(st); return tabs == [2]bool{true, true} })

	f.Call("c1", apitype.PhaseFinished, apitype.TimelineEntry{ID: 7, Tool: "browser_click", Profile: "work", TimeMs: 1000, Outcome: "ok"})
	s.nextState(t, func(st State) bool { _, tabs := acting(st); return tabs == [2]bool{false, true} })
	ev = s.next(t, EventTimeline+" ", func(b string) bool { return strings.Contains(b, `"kind":"finished"`) })
	if !strings.Contains(ev, `"id":7`) {
		t.Errorf("finished event %s lacks the row's id", ev)
	}
	f.Call("c2", apitype.PhaseFinished, apitype.TimelineEntry{ID: 8, Tool: "browser_type", Profile: "work", Tab: 2, Outcome: "ok"})
	s.nextState(t, func(st State) bool { p, tabs := acting(st); return !p && tabs == [2]bool{} })

	// Held calls and pairing come in the daemon's state.
	f.SetState(func(s *apitype.State) {
		s.Paused = true
		s.Approvals = []apitype.Approval{{ID: "c3", Tool: "browser_type", Sites: nil}}
	})
	st = s.nextState(t, func(st State) bool { return st.Paused })
	if len(st.Approvals) != 1 || st.Approvals[0].Sites == nil || st.Pairing == nil {
		t.Errorf("approvals %+v pairing %v: want one held call, empty lists as []", st.Approvals, st.Pairing)
	}

	// A resync from the daemon makes the frontend reload its timeline.
	f.Emit(apitype.Event{Kind: apitype.KindResync, Dropped: 3})
	ev = s.next(t, EventTimeline+" ", func(b string) bool { return strings.Contains(b, `"kind":"resync"`) })
	if !strings.Contains(ev, `"dropped":3`) {
		t.Errorf("resync event %s, want dropped 3", ev)
	}
	f.Emit(apitype.Event{Kind: apitype.KindNotice, Notice: &apitype.Notice{Kind: "info", Text: "Connected Claude"}})
	if n := s.next(t, EventNotice+" ", nil); !strings.Contains(n, "Connected Claude") {
		t.Errorf("notice %s", n)
	}
}

// The actions send the requests the daemon's API expects.
func TestActionsSendTheirRequests(t *testing.T) {
	f := localclienttest.New(t)
	a := New(Config{Client: f.Client(), Now: func() time.Time { return time.Unix(100, 0) }, Started: time.Unix(99, 500_000_000)})
	f.SetAnswer("POST", apitype.PathProfileApprove, 200, apitype.Profile{ID: "p-new", Slug: "new", Status: "connected"})
	for _, step := range []func() error{
		func() error { return a.Answer("c9", apitype.AlwaysAllowSite) },
		func() error { return a.ApproveProfile("ABC123") },
		func() error { return a.DenyProfile("DEF456") },
		func() error { return a.SetPaused(true) },
		func() error { a.Painted(); a.Painted(); return nil },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	want := []localclienttest.Request{
		{Method: "POST", Path: apitype.PathApprovalAnswer, Body: `{"id":"c9","answer":"always_allow_site","by":"window"}`},
		{Method: "POST", Path: apitype.PathProfileApprove, Body: `{"name":"ABC123"}`},
		{Method: "POST", Path: apitype.PathProfileDeny, Body: `{"name":"DEF456"}`},
		{Method: "POST", Path: apitype.PathPause, Body: `{"paused":true}`},
		{Method: "POST", Path: apitype.PathWindowPainted, Body: `{"sinceStartMs":500}`},
	}
	got := f.Requests()
	if len(got) != len(want) {
		t.Fatalf("requests %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if !f.State().Paused {
		t.Error("the daemon is not paused")
	}

	// A call decided meanwhile: the first answer won.
	f.SetAnswer("POST", apitype.PathApprovalAnswer, http.StatusConflict, apitype.Error{Error: "already decided"})
	if err := a.Answer("c9", apitype.Deny); err == nil || !strings.Contains(err.Error(), "already answered or timed out") {
		t.Errorf("Answer after the call was decided: %v", err)
	}
	// The daemon's refusal says what to do next; the window passes it on.
	f.SetAnswer("POST", apitype.PathProfileApprove, http.StatusNotFound, apitype.Error{Error: "no profile waits under ABC123; open the extension's popup to see its code"})
	if err := a.ApproveProfile("ABC123"); err == nil || !strings.Contains(err.Error(), "open the extension's popup") {
		t.Errorf("ApproveProfile of an unknown code: %v", err)
	}
}

// Without a daemon, every action says so and what to do.
func TestNotRunning(t *testing.T) {
	t.Setenv(config.EnvPort, strconv.Itoa(freePort(t))) // nothing on the port a daemon would take
	a := New(Config{Client: localclient.New(config.Paths{Dir: t.TempDir()})})
	if _, err := a.State(); err == nil || err.Error() != NotRunning {
		t.Errorf("State without a daemon: %v, want %q", err, NotRunning)
	}
	if err := a.SetPaused(true); err == nil || err.Error() != NotRunning {
		t.Errorf("SetPaused without a daemon: %v, want %q", err, NotRunning)
	}
}

// With another program on the port a daemon would take, the window says
// so and what to do, not "start it from your applications menu" (which
// would fail on the taken port).
func TestOtherProgramOnThePort(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	t.Setenv(config.EnvPort, strconv.Itoa(port))
	a := New(Config{Client: localclient.New(config.Paths{Dir: t.TempDir()})})
	for name, call := range map[string]func() error{
		"State":     func() error { _, err := a.State(); return err },
		"SetPaused": func() error { return a.SetPaused(true) },
	} {
		err := call()
		if err == nil || !strings.HasPrefix(err.Error(), localclient.OtherProgramPrefix) || !strings.Contains(err.Error(), "127.0.0.1:"+strconv.Itoa(port)) {
			t.Errorf("%s with another program on port %d: %v", name, port, err)
		}
	}
	msg := (&localclient.OtherProgramError{Port: port, Answer: "/health answered 404 Not Found"}).Error()
	if got := problem(msg); got != msg {
		t.Errorf("problem(%q) = %q, want the text itself", msg, got)
	}
}

// freePort is a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// The daemon's WindowShow event shows and raises the window.
func TestWindowShowEventShows(t *testing.T) {
	f := localclienttest.New(t)
	_, s, _ := start(t, f, Config{})
	s.nextState(t, func(st State) bool { return st.Connected })
	f.Emit(apitype.Event{Kind: apitype.KindWindow, Window: &apitype.WindowEvent{Action: apitype.WindowShow}})
	s.next(t, "show", nil)
}

// Closed, the window hides and the process lingers; a show during the
// linger keeps it; closed again and left alone, run returns.
func TestLingerThenExit(t *testing.T) {
	f := localclienttest.New(t)
	const linger = 300 * time.Millisecond
	a, s, done := start(t, f, Config{Linger: linger})
	s.nextState(t, func(st State) bool { return st.Connected })

	if !a.closeRequested() {
		t.Fatal("closing the window was not prevented: it should only hide")
	}
	s.next(t, "hide", nil)
	time.Sleep(linger / 3)
	f.Emit(apitype.Event{Kind: apitype.KindWindow, Window: &apitype.WindowEvent{Action: apitype.WindowShow}})
	s.next(t, "show", nil)
	select {
	case err := <-done:
		t.Fatalf("run returned %v after the window was shown again", err)
	case <-time.After(2 * linger):
	}

	closedAt := time.Now()
	a.closeRequested()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run: %v, want nil after the linger", err)
		}
		if d := time.Since(closedAt); d < linger {
			t.Errorf("run returned %v after the close, before the linger of %v", d, linger)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after the linger")
	}
	if a.closeRequested() {
		t.Error("closing the window is still prevented once the process is ending")
	}
}

// When the daemon goes away for good, the window process exits; while it
// is away, the state says so and what to do.
func TestDaemonGoneExits(t *testing.T) {
	f := localclienttest.New(t)
	_, s, done := start(t, f, Config{GoneAfter: 500 * time.Millisecond})
	s.nextState(t, func(st State) bool { return st.Connected })
	f.Close()
	if err := os.Remove(f.Paths.Daemon()); err != nil {
		t.Fatal(err)
	}
	st := s.nextState(t, func(st State) bool { return !st.Connected })
	if st.Problem == "" {
		t.Error("a disconnected state without a problem to show")
	}
	s.nextState(t, func(st State) bool { return st.Problem == NotRunning })
	select {
	case err := <-done:
		if !errors.Is(err, ErrDaemonGone) {
			t.Errorf("run: %v, want ErrDaemonGone", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return after the daemon went away")
	}
}

// Export asks where to save and writes the daemon's export there,
// replacing the file only when complete; cancelling writes nothing.
func TestExportTimeline(t *testing.T) {
	f := localclienttest.New(t)
	a, s, _ := start(t, f, Config{})
	s.nextState(t, func(st State) bool { return st.Connected })
	path, err := a.ExportTimeline(apitype.TimelineFilter{})
	if err != nil || path != "" {
		t.Errorf("cancelled export: %q %v", path, err)
	}

	s.saveTo = filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(s.saveTo, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f.SetAnswer("GET", apitype.PathTimelineExport, 200, json.RawMessage(`{"id":1,"tool":"browser_click"}`))
	path, err = a.ExportTimeline(apitype.TimelineFilter{Client: "claude-ai"})
	if err != nil || path != s.saveTo {
		t.Fatalf("export: %q %v", path, err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != `{"id":1,"tool":"browser_click"}`+"\n" {
		t.Errorf("exported %q", b)
	}

	f.SetAnswer("GET", apitype.PathTimelineExport, 500, apitype.Error{Error: "the timeline database is locked; try again"})
	if _, err := a.ExportTimeline(apitype.TimelineFilter{}); err == nil || !strings.Contains(err.Error(), "try again") {
		t.Errorf("failed export: %v", err)
	}
	if b2, _ := os.ReadFile(path); string(b2) != string(b) {
		t.Errorf("a failed export changed the file to %q", b2)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// The pages' reads pass the daemon's answers through, empty lists as [].
func TestReadsPassThrough(t *testing.T) {
	f := localclienttest.New(t)
	a := New(Config{Client: f.Client()})
	f.SetAnswer("GET", apitype.PathClients, 200, []apitype.Client{{ID: "claude-code", Name: "Claude Code", Installed: true}})
	f.SetAnswer("GET", apitype.PathTimelineFacets, 200, apitype.TimelineFacets{Clients: []string{"claude-ai"}})
	f.SetAnswer("GET", apitype.PathTimeline, 200, []apitype.TimelineEntry{})
	f.SetAnswer("GET", apitype.PathExtension, 200, apitype.ExtensionState{Dir: "/x", Steps: []string{"one"}})
	f.SetAnswer("POST", apitype.PathClientConnect, 200, apitype.ClientOutcome{Message: "added", Changed: true, Client: apitype.Client{ID: "claude-code", Connected: true}})
	f.SetAnswer("POST", apitype.PathClientDisconnect, 409, apitype.Error{Error: "~/.claude.json is not valid JSON; fix it, then try again"})

	if c, err := a.Clients(); err != nil || len(c) != 1 || c[0].Name != "Claude Code" {
		t.Errorf("Clients: %+v %v", c, err)
	}
	if fc, err := a.TimelineFacets(); err != nil || len(fc.Clients) != 1 || fc.Profiles == nil {
		t.Errorf("TimelineFacets: %+v %v", fc, err)
	}
	if rows, err := a.Timeline(apitype.TimelineFilter{Outcome: "ok"}); err != nil || rows == nil {
		t.Errorf("Timeline: %v %v", rows, err)
	}
	if e, err := a.Extension(); err != nil || e.Dir != "/x" {
		t.Errorf("Extension: %+v %v", e, err)
	}
	if o, err := a.Connect("claude-code"); err != nil || !o.Client.Connected {
		t.Errorf("Connect: %+v %v", o, err)
	}
	if _, err := a.Disconnect("claude-code"); err == nil || !strings.Contains(err.Error(), "fix it, then try again") {
		t.Errorf("Disconnect of a broken file: %v", err)
	}
	for _, step := range []func() error{a.RevealExtension, a.OpenTestBrowser} {
		if err := step(); err != nil {
			t.Error(err)
		}
	}
	var paths []string
	for _, r := range f.Requests() {
		paths = append(paths, r.Path)
	}
	if want := apitype.PathClientConnect + " " + apitype.PathClientDisconnect + " " + apitype.PathExtensionReveal + " " + apitype.PathTestBrowser; strings.Join(paths, " ") != want {
		t.Errorf("requests %v, want %s", paths, want)
	}
}
