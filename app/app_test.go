package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/timeline"
)

// fakeProfiles is a broker registry in memory.
type fakeProfiles struct {
	mu       sync.Mutex
	profiles []broker.Profile
	pending  []broker.PendingProfile
	approved []string
	changed  chan struct{}
}

func (f *fakeProfiles) Profiles() []broker.Profile {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.profiles)
}

func (f *fakeProfiles) Pending() []broker.PendingProfile {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.pending)
}

func (f *fakeProfiles) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.changed == nil {
		f.changed = make(chan struct{})
	}
	return f.changed
}

func (f *fakeProfiles) set(p []broker.Profile, pending []broker.PendingProfile) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profiles, f.pending = p, pending
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}

func (f *fakeProfiles) Approve(name string) (broker.Profile, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.pending {
		if p.ID == name {
			f.pending = slices.Delete(f.pending, i, i+1)
			f.approved = append(f.approved, name)
			return broker.Profile{ID: p.ID, Label: p.Label, Slug: strings.ToLower(p.Label)}, nil
		}
	}
	return broker.Profile{}, broker.ErrUnknownProfile
}

func (f *fakeProfiles) Deny(name string) error { return broker.ErrUnknownProfile }

// fakeShell records what the app asks of the window; Ask answers from
// answers, or blocks until release.
type fakeShell struct {
	mu      sync.Mutex
	events  []string
	shown   int
	asked   chan string // titles, as dialogs open
	answers chan bool
	saveTo  string
	emitted chan string
}

func newShell() *fakeShell {
	return &fakeShell{asked: make(chan string, 10), answers: make(chan bool), emitted: make(chan string, 1000)}
}

func (s *fakeShell) Emit(event string, data any) {
	b, _ := json.Marshal(data)
	s.mu.Lock()
	s.events = append(s.events, event+" "+string(b))
	s.mu.Unlock()
	s.emitted <- event + " " + string(b)
}

func (s *fakeShell) Show() { s.mu.Lock(); s.shown++; s.mu.Unlock() }

func (s *fakeShell) Ask(title, message string) (bool, error) {
	s.asked <- title + "\n" + message
	return <-s.answers, nil
}

func (s *fakeShell) SaveFile(title, name string) (string, error) { return s.saveTo, nil }
func (s *fakeShell) Reveal(dir string) error                     { return nil }

// waitEmit waits for an emitted event containing every part.
func (s *fakeShell) waitEmit(t *testing.T, parts ...string) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-s.emitted:
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(e, p)
			}
			if ok {
				return e
			}
		case <-deadline:
			t.Fatalf("no event with %q", parts)
		}
	}
}

type rig struct {
	app      *App
	shell    *fakeShell
	profiles *fakeProfiles
	guard    *policy.Guard
	tl       *timeline.Store
	home     string
	dir      string
}

func newRig(t *testing.T, timeout time.Duration) *rig {
	t.Helper()
	dir := t.TempDir()
	tl, err := timeline.Open(filepath.Join(dir, "timeline.db"), timeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	r := &rig{shell: newShell(), profiles: &fakeProfiles{}, tl: tl, home: t.TempDir(), dir: dir}
	r.app = New(Config{
		Profiles: r.profiles, Timeline: tl,
		Clients:        clients.Host{OS: "linux", Home: r.home, Getenv: func(string) string { return "" }},
		ConnectOptions: clients.Options{Executable: "/opt/tether/tether"},
		Extension: fstest.MapFS{
			"manifest.json":  {Data: []byte(`{"manifest_version": 3, "name": "Tether", "version": "0.2.0"}`)},
			"background.js":  {Data: []byte("// sw")},
			"offscreen.html": {Data: []byte("<!doctype html>")},
		},
		ExtensionDir: filepath.Join(dir, "chrome-extension"),
		ExtensionID:  broker.DefaultExtensionID,
		Port:         8787,
		Version:      "0.1.0+test",
	})
	g, err := policy.Open(policy.Config{Path: filepath.Join(dir, "policy.json"), Approver: &Window{app: r.app}, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	r.guard = g
	r.app.cfg.Guard = g
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r.app.start(ctx, r.shell)
	return r
}

func TestStateFollowsTheDaemon(t *testing.T) {
	r := newRig(t, time.Minute)
	r.shell.waitEmit(t, "state", `"profiles":[]`)

	seen := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	r.profiles.set([]broker.Profile{
		{ID: "b", Label: "Home", Slug: "home", LastSeen: seen},
		{ID: "a", Label: "Work", Slug: "work", Connected: true, ExtVersion: "0.1.0", Tabs: []protocol.TabInfo{
			{Tab: 1, Title: "Inbox", URL: "https://mail.example/"},
			{Tab: 2, Title: "Docs", URL: "https://docs.example/", Current: true},
		}},
	}, []broker.PendingProfile{{ID: "c-uuid", Label: "New laptop", Code: "K7M4PX", Since: seen, Expires: seen.Add(10 * time.Minute)}})
	r.shell.waitEmit(t, "state", `"pairing":[{"id":"c-uuid","label":"New laptop","code":"K7M4PX"`, fmt.Sprintf(`"expiresMs":%d`, seen.Add(10*time.Minute).UnixMilli()))
	s := r.app.State()
	if len(s.Profiles) != 2 || s.Profiles[0].Slug != "work" || s.Profiles[0].Status != "connected" || s.Profiles[1].LastSeenMs != seen.UnixMilli() {
		t.Fatalf("profiles (connected first) = %+v", s.Profiles)
	}

	// A call on tab 1 highlights it until it is recorded; a call with no
	// tab highlights the profile's current tab.
	at := time.Now()
	r.tl.Started(timeline.Entry{Time: at, Profile: "work", Tab: 1, Tool: "browser_click"})
	r.shell.waitEmit(t, "timeline", `"kind":"started"`, `"tool":"browser_click"`)
	r.shell.waitEmit(t, "state", `"number":1,"title":"Inbox","url":"https://mail.example/","current":false,"acting":true`)
	r.tl.Started(timeline.Entry{Time: at, Profile: "work", Tool: "browser_snapshot"})
	r.shell.waitEmit(t, "state", `"number":2,"title":"Docs","url":"https://docs.example/","current":true,"acting":true`)
	if _, err := r.tl.Record(context.Background(), timeline.Entry{Time: at, Profile: "work", Tab: 1, Tool: "browser_click", Outcome: timeline.OK}); err != nil {
		t.Fatal(err)
	}
	r.shell.waitEmit(t, "timeline", `"kind":"recorded"`, `"outcome":"ok"`)
	s = r.app.State()
	if s.Profiles[0].Tabs[0].Acting || !s.Profiles[0].Tabs[1].Acting || !s.Profiles[0].Acting {
		t.Fatalf("after the click was recorded: %+v", s.Profiles[0])
	}

	// A call that named no profile starts unknown and is recorded on the
	// profile the broker picked: it still ends.
	at2 := at.Add(time.Second)
	r.tl.Started(timeline.Entry{Time: at2, Tool: "browser_tabs", Client: "cursor"})
	r.shell.waitEmit(t, "timeline", `"kind":"started"`, `"tool":"browser_tabs"`)
	if _, err := r.tl.Record(context.Background(), timeline.Entry{Time: at2, Profile: "work", Tab: 2, Tool: "browser_tabs", Client: "cursor", Outcome: timeline.OK}); err != nil {
		t.Fatal(err)
	}
	r.shell.waitEmit(t, "timeline", `"kind":"recorded"`, `"tool":"browser_tabs"`)
	r.app.mu.Lock()
	left := len(r.app.running)
	r.app.mu.Unlock()
	if left != 1 { // the snapshot above still runs
		t.Fatalf("%d calls still running, want 1 (the snapshot)", left)
	}

	// Pairing from the window.
	if err := r.app.ApproveProfile("c-uuid"); err != nil {
		t.Fatal(err)
	}
	if err := r.app.ApproveProfile("c-uuid"); err == nil || !strings.Contains(err.Error(), "approve profile") {
		t.Errorf("approving twice: %v", err)
	}

	// The pause switch.
	if err := r.app.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	r.shell.waitEmit(t, "state", `"paused":true`)
	if v := r.guard.Check(context.Background(), policy.Call{Tool: "browser_tabs"}); v.Allow || v.Outcome != policy.Paused {
		t.Errorf("a call while paused from the window: %+v", v)
	}
}

// held starts a call that a confirm rule holds (file upload is sensitive)
// and returns its verdict channel once it is in the queue.
func (r *rig) held(t *testing.T) (policy.Request, chan policy.Verdict) {
	t.Helper()
	out := make(chan policy.Verdict, 1)
	go func() {
		out <- r.guard.Check(context.Background(), policy.Call{Tool: "browser_file_upload", Client: "claude-ai",
			Profile: "work", Tab: 2, Sites: []string{"https://upload.example"}, Summary: `ref=e4 paths=["report 100%.pdf"]`})
	}()
	deadline := time.After(10 * time.Second)
	for {
		if p := r.guard.Pending(); len(p) > 0 {
			return p[0], out
		}
		select {
		case <-r.guard.Changed():
		case <-deadline:
			t.Fatal("the call was not held")
		}
	}
}

func TestNativeDialogAnswers(t *testing.T) {
	r := newRig(t, time.Minute)
	for _, tc := range []struct {
		yes   bool
		allow bool
	}{{true, true}, {false, false}} {
		req, verdict := r.held(t)
		q := <-r.shell.asked
		for _, want := range []string{"Tether: allow browser_file_upload?", "claude-ai asks to run browser_file_upload, a sensitive action, on https://upload.example (profile work, tab 2)", `report 100%.pdf`, "close this dialog (Esc) and answer in the Tether window", "denied in 1 min"} {
			if !strings.Contains(q, want) {
				t.Errorf("the dialog lacks %q:\n%s", want, q)
			}
		}
		if st := r.app.State(); len(st.Approvals) != 1 || st.Approvals[0].ID != req.ID || st.Approvals[0].Sites[0] != "https://upload.example" {
			t.Errorf("the queue shows %+v", st.Approvals)
		}
		r.shell.answers <- tc.yes
		v := <-verdict
		if v.Allow != tc.allow || !strings.Contains(v.Decision, map[bool]string{true: "allowed once by the user", false: "denied by the user"}[tc.allow]) {
			t.Errorf("dialog %v: verdict %+v", tc.yes, v)
		}
	}
	r.shell.mu.Lock()
	if r.shell.shown != 2 {
		t.Errorf("the window was shown %d times for 2 held calls", r.shell.shown)
	}
	r.shell.mu.Unlock()
}

// The queue answers first; the dialog, still open, is answered later: that
// changes nothing, and the timeline says so.
func TestQueueWinsAndALateDialogIsIgnored(t *testing.T) {
	r := newRig(t, time.Minute)
	req, verdict := r.held(t)
	<-r.shell.asked
	if err := r.app.Answer(req.ID, "always_allow_site"); err != nil {
		t.Fatal(err)
	}
	if v := <-verdict; !v.Allow || !strings.Contains(v.Decision, "always allowed for https://upload.example") {
		t.Fatalf("verdict %+v", v)
	}
	if err := r.app.Answer(req.ID, "deny"); err == nil || !strings.Contains(err.Error(), "already answered") {
		t.Errorf("a second answer: %v", err)
	}
	if err := r.app.Answer("nope", "maybe"); err == nil {
		t.Error("an unknown answer was accepted")
	}
	r.shell.answers <- false // the user finally clicks No in the dialog
	// What the window missed under the modal dialog is sent again.
	r.shell.waitEmit(t, "state", `"approvals":[]`)
	r.shell.waitEmit(t, "timeline", `"kind":"resync"`, `"dropped":1`)
	r.shell.waitEmit(t, "timeline", `"outcome":"ignored"`, "native dialog answered No after the call was answered in the window or cancelled; it changed nothing")
	rows, err := r.app.Timeline(TimelineFilter{Outcome: "ignored"})
	if err != nil || len(rows) != 1 || rows[0].Tool != "browser_file_upload" {
		t.Fatalf("ignored rows: %+v, %v", rows, err)
	}
	// The rule was saved: the next upload there runs without asking.
	if v := r.guard.Check(context.Background(), policy.Call{Tool: "browser_file_upload", Sites: []string{"https://upload.example"}}); !v.Allow {
		t.Errorf("after always-allow: %+v", v)
	}
}

// One dialog at a time: a second held call waits for the first dialog; if
// it is answered in the queue meanwhile, it never gets a dialog.
func TestOneDialogAtATime(t *testing.T) {
	r := newRig(t, time.Minute)
	_, first := r.held(t)
	<-r.shell.asked
	out := make(chan policy.Verdict, 1)
	go func() {
		out <- r.guard.Check(context.Background(), policy.Call{Tool: "browser_file_upload", Sites: []string{"https://b.example"}})
	}()
	var second policy.Request
	for second.ID == "" {
		for _, p := range r.guard.Pending() {
			if p.Sites[0] == "https://b.example" {
				second = p
			}
		}
		if second.ID == "" {
			<-r.guard.Changed()
		}
	}
	if err := r.app.Answer(second.ID, "deny"); err != nil {
		t.Fatal(err)
	}
	if v := <-out; v.Allow {
		t.Fatalf("second: %+v", v)
	}
	r.shell.answers <- true
	if v := <-first; !v.Allow {
		t.Fatalf("first: %+v", v)
	}
	select {
	case q := <-r.shell.asked:
		t.Fatalf("a dialog opened for a call already answered:\n%s", q)
	default:
	}
}

func TestTimedOutDialog(t *testing.T) {
	r := newRig(t, 300*time.Millisecond)
	_, verdict := r.held(t)
	<-r.shell.asked
	if v := <-verdict; v.Allow || !strings.Contains(v.Decision, "no answer within") {
		t.Fatalf("verdict %+v", v)
	}
	r.shell.answers <- true
	r.shell.waitEmit(t, "timeline", "native dialog answered Yes after the call had timed out and was denied")
}

func TestTimelineBindings(t *testing.T) {
	r := newRig(t, time.Minute)
	ctx := context.Background()
	base := time.Now().Add(-time.Minute)
	for i, e := range []timeline.Entry{
		{Client: "claude-ai", Profile: "work", Tab: 1, Tool: "browser_navigate", Outcome: timeline.OK, Duration: 1500 * time.Microsecond},
		{Client: "cursor-vscode", Profile: "home", Tab: 3, Tool: "browser_click", Outcome: timeline.Error, Error: "stale_ref"},
		{Client: "claude-ai", Profile: "work", Tab: 1, Tool: "browser_file_upload", Outcome: timeline.Denied},
	} {
		e.Time = base.Add(time.Duration(i) * time.Second)
		if _, err := r.tl.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	all, err := r.app.Timeline(TimelineFilter{})
	if err != nil || len(all) != 3 || all[0].Tool != "browser_file_upload" || all[2].DurationMs != 1.5 {
		t.Fatalf("Timeline = %+v, %v", all, err)
	}
	got, err := r.app.Timeline(TimelineFilter{Client: "claude-ai", Outcome: "denied"})
	if err != nil || len(got) != 1 || got[0].Tool != "browser_file_upload" {
		t.Fatalf("filtered = %+v, %v", got, err)
	}
	older, err := r.app.Timeline(TimelineFilter{BeforeID: all[0].ID, Limit: 1})
	if err != nil || len(older) != 1 || older[0].ID != all[1].ID {
		t.Fatalf("paged = %+v, %v", older, err)
	}
	if _, err := r.app.Timeline(TimelineFilter{Outcome: "great"}); err == nil || !strings.Contains(err.Error(), "one of ok, error") {
		t.Errorf("a bad outcome: %v", err)
	}
	f, err := r.app.TimelineFacets()
	if err != nil || !slices.Equal(f.Clients, []string{"claude-ai", "cursor-vscode"}) || !slices.Equal(f.Profiles, []string{"home", "work"}) || !slices.Contains(f.Outcomes, "ignored") {
		t.Fatalf("facets = %+v, %v", f, err)
	}

	// Export: cancelled, then to a file, which replaces an older one whole.
	if path, err := r.app.ExportTimeline(TimelineFilter{}); path != "" || err != nil {
		t.Fatalf("cancelled export: %q, %v", path, err)
	}
	r.shell.saveTo = filepath.Join(t.TempDir(), "out.jsonl")
	if err := os.WriteFile(r.shell.saveTo, []byte(strings.Repeat("old\n", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	path, err := r.app.ExportTimeline(TimelineFilter{Client: "claude-ai"})
	if err != nil || path != r.shell.saveTo {
		t.Fatalf("export: %q, %v", path, err)
	}
	b, _ := os.ReadFile(path)
	rows, err := timeline.ReadJSONL(bytes.NewReader(b))
	if err != nil || len(rows) != 2 || rows[0].Tool != "browser_navigate" || rows[1].Tool != "browser_file_upload" {
		t.Fatalf("exported %d rows (%v):\n%s", len(rows), err, b)
	}
}

func TestConnectEditsTheClientsFile(t *testing.T) {
	r := newRig(t, time.Minute)
	var cursor ClientView
	for _, c := range r.app.Clients() {
		if c.ID == "cursor" {
			cursor = c
		}
	}
	if cursor.Path != filepath.Join(r.home, ".cursor", "mcp.json") || cursor.Connected {
		t.Fatalf("cursor before: %+v", cursor)
	}
	o, err := r.app.Connect("cursor")
	if err != nil || !o.Changed || !o.Client.Connected || o.Client.Mode != "stdio" || !strings.Contains(o.Message, "Cursor: added Tether in "+cursor.Path) {
		t.Fatalf("Connect = %+v, %v", o, err)
	}
	b, _ := os.ReadFile(cursor.Path)
	if !strings.Contains(string(b), `"/opt/tether/tether"`) {
		t.Fatalf("mcp.json:\n%s", b)
	}
	if o, err := r.app.Disconnect("cursor"); err != nil || o.Client.Connected || !strings.Contains(o.Message, "removed") {
		t.Fatalf("Disconnect = %+v, %v", o, err)
	}

	// A file Tether cannot parse is left as it was, and the error says so.
	corrupt := []byte("{ \"mcpServers\": { oops")
	if err := os.WriteFile(cursor.Path, corrupt, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = r.app.Connect("cursor")
	if err == nil || !strings.Contains(err.Error(), "Tether did not change the file") || strings.Count(err.Error(), "try again") != 1 {
		t.Fatalf("Connect on a corrupt file: %v", err)
	}
	if b, _ := os.ReadFile(cursor.Path); !bytes.Equal(b, corrupt) {
		t.Fatalf("the corrupt file was changed:\n%s", b)
	}
	if _, err := r.app.Connect("no-such-client"); err == nil {
		t.Error("an unknown client connected")
	}
}

func TestExtensionPage(t *testing.T) {
	r := newRig(t, time.Minute)
	s := r.app.Extension()
	if s.Written || s.Connected || s.Version != "0.2.0" || s.ID != broker.DefaultExtensionID || !strings.Contains(s.Steps[2], "press “Write the extension” first") {
		t.Fatalf("before writing: %+v", s)
	}
	s, err := r.app.WriteExtension()
	if err != nil || !s.Written || s.WrittenVersion != "0.2.0" || !strings.Contains(s.Steps[2], "choose the folder "+s.Dir+".") {
		t.Fatalf("WriteExtension = %+v, %v", s, err)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, "tether.json"))
	if err != nil || !strings.Contains(string(b), `"port": 8787`) {
		t.Fatalf("tether.json: %s, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "background.js")); err != nil {
		t.Fatal(err)
	}
	r.profiles.set([]broker.Profile{{ID: "a", Slug: "work", Connected: true}}, nil)
	if s := r.app.Extension(); !s.Connected || s.Known != 1 {
		t.Fatalf("with a profile: %+v", s)
	}
	if err := r.app.RevealExtension(); err != nil {
		t.Fatal(err)
	}
}

// "Open a test browser" runs `tether browser` for the same config dir; a
// failure reaches the window as a notice.
func TestOpenTestBrowser(t *testing.T) {
	r := newRig(t, time.Minute)
	dir := t.TempDir()
	script := filepath.Join(dir, "tether")
	out := filepath.Join(dir, "out")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$@ $TETHER_CONFIG_DIR\" > "+out+"\necho 'tether: no browser found' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r.app.cfg.Executable, r.app.cfg.BrowserEnv = script, []string{"TETHER_CONFIG_DIR=/cfg/x"}
	if err := r.app.OpenTestBrowser(); err != nil {
		t.Fatal(err)
	}
	r.shell.waitEmit(t, "notice", "The test browser did not start: tether: no browser found")
	if b, err := os.ReadFile(out); err != nil || strings.TrimSpace(string(b)) != "browser /cfg/x" {
		t.Fatalf("ran with %q, %v; want `browser` and the config dir", b, err)
	}
}
