package timeline

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func open(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func entry(i int, client, profile string, outcome Outcome, at time.Time) Entry {
	return Entry{Time: at, Client: client, Profile: profile, Tab: i, Tool: "browser_click",
		Args: "ref=e" + string(rune('0'+i%10)), Class: "interact", Site: "https://a.com",
		Decision: "allow (default for interact actions)", Duration: time.Duration(i) * time.Millisecond, Outcome: outcome}
}

func TestPersistReopenAndFilters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "timeline.db")
	s := open(t, path, Options{})
	base := time.Now().Add(-time.Hour)
	rows := []Entry{
		entry(1, "claude-ai", "work", OK, base),
		entry(2, "cursor", "work", Error, base.Add(time.Second)),
		entry(3, "claude-ai", "home", Denied, base.Add(2*time.Second)),
		entry(4, "claude-ai", "work", OK, base.Add(3*time.Second)),
	}
	rows[1].Error = "stale_ref: " + strings.Repeat("x", 1000)
	for _, e := range rows {
		if _, err := s.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("timeline.db: %v mode %v", err, info.Mode())
	}

	s = open(t, path, Options{})
	all, err := s.Query(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	facets, err := s.Facets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Facets{Clients: []string{"claude-ai", "cursor"}, Profiles: []string{"home", "work"}}); !reflect.DeepEqual(facets, want) {
		t.Errorf("Facets = %+v, want %+v", facets, want)
	}
	if len(all) != 4 || all[0].Tab != 4 || all[3].Tab != 1 {
		t.Fatalf("not newest first after reopen: %+v", all)
	}
	got := all[3]
	want := rows[0]
	want.ID, want.Time = got.ID, time.UnixMicro(want.Time.UnixMicro())
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, want)
	}
	if e := all[2].Error; len([]rune(e)) > maxError || !strings.HasPrefix(e, "stale_ref") {
		t.Fatalf("error not shortened: %d chars", len(e))
	}
	for _, tt := range []struct {
		f    Filter
		tabs []int
	}{
		{Filter{Client: "claude-ai"}, []int{4, 3, 1}},
		{Filter{Profile: "work"}, []int{4, 2, 1}},
		{Filter{Outcome: OK}, []int{4, 1}},
		{Filter{Client: "claude-ai", Profile: "work", Outcome: OK}, []int{4, 1}},
		{Filter{Limit: 2}, []int{4, 3}},
		{Filter{BeforeID: all[1].ID}, []int{2, 1}},
		{Filter{Client: "nobody"}, nil},
	} {
		res, err := s.Query(ctx, tt.f)
		if err != nil {
			t.Fatal(err)
		}
		var tabs []int
		for _, e := range res {
			tabs = append(tabs, e.Tab)
		}
		if !reflect.DeepEqual(tabs, tt.tabs) {
			t.Errorf("%+v: tabs %v, want %v", tt.f, tabs, tt.tabs)
		}
	}
}

func TestRetention(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	path := filepath.Join(t.TempDir(), "timeline.db")
	s := open(t, path, Options{MaxRows: 5, MaxAge: 24 * time.Hour, Now: func() time.Time { return now }})
	// Two rows too old, then ten recent ones.
	for i := range 12 {
		at := now.Add(-time.Duration(12-i) * time.Minute)
		if i < 2 {
			at = now.Add(-48 * time.Hour)
		}
		if _, err := s.Record(ctx, entry(i, "c", "p", OK, at)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Prune(ctx)
	if err != nil || n != 7 {
		t.Fatalf("pruned %d (%v), want 7", n, err)
	}
	res, _ := s.Query(ctx, Filter{})
	if len(res) != 5 || res[0].Tab != 11 || res[4].Tab != 7 {
		t.Fatalf("kept %+v", res)
	}
	// Age alone: a day later every row is too old, pruned on open.
	s.Close()
	later := open(t, path, Options{MaxAge: 24 * time.Hour, Now: func() time.Time { return now.Add(25 * time.Hour) }})
	if res, _ := later.Query(ctx, Filter{}); len(res) != 0 {
		t.Fatalf("old rows kept: %d", len(res))
	}
}

func TestExportRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "timeline.db"), Options{})
	var want []Entry
	for i := range 5 {
		e, err := s.Record(ctx, entry(i, "claude-ai", "work", OK, time.Now().Add(time.Duration(i)*time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, e)
	}
	var buf bytes.Buffer
	n, err := s.Export(ctx, &buf, Filter{})
	if err != nil || n != 5 {
		t.Fatalf("export: %d, %v", n, err)
	}
	if lines := strings.Count(buf.String(), "\n"); lines != 5 {
		t.Fatalf("%d lines", lines)
	}
	got, err := ReadJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries", len(got))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) {
			t.Fatalf("time %v != %v", got[i].Time, want[i].Time)
		}
		got[i].Time = want[i].Time
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("entry %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	buf.Reset()
	if n, _ := s.Export(ctx, &buf, Filter{Limit: 2}); n != 2 {
		t.Fatalf("limited export: %d", n)
	}
	got, _ = ReadJSONL(&buf)
	if got[0].ID != want[3].ID || got[1].ID != want[4].ID {
		t.Fatalf("limit keeps the newest, oldest first: %+v", got)
	}
}

func TestEventsNeverBlockAndCountDrops(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "timeline.db"), Options{})
	slow := s.Subscribe(2)
	fast := s.Subscribe(100)
	s.Started(Entry{Tool: "browser_click"})
	for i := range 5 {
		if _, err := s.Record(ctx, entry(i, "c", "p", OK, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	if len(fast.C) != 6 {
		t.Fatalf("fast subscriber got %d events", len(fast.C))
	}
	if e := <-fast.C; e.Kind != CallStarted || e.Entry.Tool != "browser_click" {
		t.Fatalf("%+v", e)
	}
	if slow.Dropped() != 4 {
		t.Fatalf("slow dropped %d, want 4", slow.Dropped())
	}
	<-slow.C
	<-slow.C
	if _, err := s.Record(ctx, entry(9, "c", "p", OK, time.Now())); err != nil {
		t.Fatal(err)
	}
	if e := <-slow.C; e.Dropped != 4 || e.Entry.Tab != 9 {
		t.Fatalf("next event should say 4 dropped: %+v", e)
	}
	slow.Unsubscribe()
	slow.Unsubscribe()
	if _, ok := <-slow.C; ok {
		t.Fatal("channel open after Unsubscribe")
	}
	if _, err := s.Record(ctx, entry(10, "c", "p", OK, time.Now())); err != nil {
		t.Fatal(err)
	}
}

// sum has the rules Tether's tools declare (package mcp; the daemon's
// tests check that the real wiring redacts typed text).
var sum = NewSummarizer(map[string]ArgRules{
	"browser_type":        {Redacted: []string{"text"}},
	"browser_evaluate":    {Redacted: []string{"expression"}},
	"browser_file_upload": {Whole: []string{"paths"}},
	"browser_press_key":   {Plain: []string{"key"}},
})

func TestSummarize(t *testing.T) {
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"browser_type", map[string]any{"ref": "e4", "text": "hunter2 secret", "submit": true, "profile": "work", "tab": 3.0},
			`ref=e4 submit=true text=<redacted, 14 chars>`},
		{"browser_evaluate", map[string]any{"expression": "document.cookie"}, `expression=<redacted, 15 chars>`},
		{"browser_navigate", map[string]any{"url": "https://u:pw@a.com/x?q=1&access_token=abc"},
			`url=https://u:redacted@a.com/x?access_token=redacted&q=1`},
		{"browser_file_upload", map[string]any{"ref": "e1", "paths": []any{"/home/u/cv.pdf"}}, `paths=[/home/u/cv.pdf] ref=e1`},
		{"browser_press_key", map[string]any{"key": "Enter"}, `key=Enter`},
		{"browser_find", map[string]any{"query": "Sign in"}, `query="Sign in"`},
		{"browser_x", map[string]any{"password": "p"}, `password=<redacted, 1 chars>`},
		{"browser_snapshot", map[string]any{}, ``},
	} {
		if got := sum.Summarize(tt.tool, tt.args); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.tool, got, tt.want)
		}
	}
	long := sum.Summarize("browser_find", map[string]any{"query": strings.Repeat("a", 1000)})
	if n := len([]rune(long)); n > maxValue+10 {
		t.Errorf("long value: %d runes", n)
	}
}

// TestMigratesVersion1File: a timeline written before call ids keeps its
// rows and takes new ones with their call id; opening it again is a no-op.
func TestMigratesVersion1File(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "timeline.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	const v1 = `CREATE TABLE calls (
	id INTEGER PRIMARY KEY AUTOINCREMENT, time_us INTEGER NOT NULL, client TEXT NOT NULL DEFAULT '',
	profile TEXT NOT NULL DEFAULT '', tab INTEGER NOT NULL DEFAULT 0, tool TEXT NOT NULL,
	args TEXT NOT NULL DEFAULT '', class TEXT NOT NULL DEFAULT '', site TEXT NOT NULL DEFAULT '',
	decision TEXT NOT NULL DEFAULT '', duration_us INTEGER NOT NULL DEFAULT 0, outcome TEXT NOT NULL,
	error TEXT NOT NULL DEFAULT '');
CREATE INDEX calls_time ON calls(time_us);
PRAGMA user_version = 1;
INSERT INTO calls (time_us, client, tool, outcome) VALUES (?, 'claude-ai', 'browser_snapshot', 'ok');`
	if _, err := db.Exec(v1, time.Now().UnixMicro()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	for range 2 {
		s, err := Open(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Record(ctx, Entry{CallID: "c1", Tool: "browser_click", Outcome: OK, Token: "ci-agent", RTT: 42 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	s := open(t, path, Options{})
	rows, err := s.Query(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[2].Tool != "browser_snapshot" || rows[2].CallID != "" || rows[0].CallID != "c1" || rows[1].CallID != "c1" {
		t.Fatalf("rows after migration: %+v", rows)
	}
	if rows[0].Token != "ci-agent" || rows[0].RTT != 42*time.Millisecond || rows[2].Token != "" || rows[2].RTT != 0 {
		t.Fatalf("token and RTT after migration: %+v", rows)
	}
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion {
		t.Fatalf("user_version %d, %v; want %d", v, err, schemaVersion)
	}
}

// TestRunningFollowsCallIDs: Running holds what started and was not
// recorded, without the calls waiting for an answer; a late answer's row
// ends nothing.
func TestRunningFollowsCallIDs(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "timeline.db"), Options{})
	sub := s.Subscribe(16)
	defer sub.Unsubscribe()
	at := time.Now()
	a := Entry{CallID: "a", Time: at, Tool: "browser_click"}
	b := Entry{CallID: "b", Time: at.Add(time.Millisecond), Tool: "browser_file_upload"}
	s.Started(a)
	s.Started(b)
	s.Held(b, Hold{Sites: []string{"https://a.com"}, Since: at, Deadline: at.Add(time.Minute)})
	if got := ids(s.Running()); got != "a" {
		t.Fatalf("running while b is held: %q; want a", got)
	}
	s.Answered(b, "allow_once", "window")
	if got := ids(s.Running()); got != "a b" {
		t.Fatalf("running after b's answer: %q; want a b", got)
	}
	if _, err := s.Record(ctx, Entry{CallID: "a", Tool: "browser_click", Outcome: Ignored}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Record(ctx, Entry{CallID: "b", Tool: "browser_file_upload", Outcome: OK}); err != nil {
		t.Fatal(err)
	}
	if got := ids(s.Running()); got != "a" {
		t.Fatalf("running: %q; want a (an ignored row ends no call)", got)
	}
	var kinds []string
	for range 6 {
		ev := <-sub.C
		kinds = append(kinds, string(ev.Kind)+":"+ev.Entry.CallID)
		if ev.Kind == CallHeld && (ev.Hold == nil || ev.Hold.Sites[0] != "https://a.com") {
			t.Fatalf("held event without its hold: %+v", ev)
		}
		if ev.Kind == CallAnswered && (ev.Answer != "allow_once" || ev.AnsweredBy != "window") {
			t.Fatalf("answered event: %+v", ev)
		}
	}
	if got := strings.Join(kinds, " "); got != "started:a started:b held:b answered:b recorded:a recorded:b" {
		t.Fatalf("events %s", got)
	}
}

func ids(es []Entry) string {
	var out []string
	for _, e := range es {
		out = append(out, e.CallID)
	}
	return strings.Join(out, " ")
}

// An upload's paths are never shortened: each is whole in the summary, or
// Fits says the summary cannot hold them all.
func TestSummarizeKeepsEveryUploadPathWhole(t *testing.T) {
	long := "/home/user/Documents/" + strings.Repeat("quarterly-report-", 6) + ".pdf"
	args := map[string]any{"ref": "e1", "paths": []any{long, "/home/user/.ssh/id_ed25519"}}
	if s := sum.Summarize("browser_file_upload", args); !strings.Contains(s, long) || !strings.Contains(s, "/home/user/.ssh/id_ed25519") || !sum.Fits("browser_file_upload", args) {
		t.Errorf("summary %q hides a path", s)
	}
	args["paths"] = []any{long, long, long, long, "/home/user/.ssh/id_ed25519"}
	if sum.Fits("browser_file_upload", args) {
		t.Errorf("summary %q fits?", sum.Summarize("browser_file_upload", args))
	}
	if !sum.Fits("browser_navigate", map[string]any{"url": "https://a.example/" + strings.Repeat("x", 5000)}) {
		t.Error("a long URL is cut, not refused")
	}
}

// A terminal escape or a bidi override in an argument never reaches the
// summary raw: `tether approvals` and `tether timeline` print it to a
// terminal, where "\x1b[2K\r" could redraw a held upload as something else.
func TestSummarizeEscapesControlAndBidiCharacters(t *testing.T) {
	s := sum.Summarize("browser_click", map[string]any{"ref": "e1\x1b[2K\rbrowser_snapshot", "element": "abc\u202eexe.pdf"})
	if strings.ContainsAny(s, "\x1b\r\u202e") || !strings.Contains(s, `\x1b[2K\r`) || !strings.Contains(s, `\u202e`) {
		t.Errorf("summary %q", s)
	}
}

// A config dir whose name holds "#", "?" or "%" keeps its timeline inside
// it: the path is escaped for SQLite's URI filename, which would otherwise
// end it at "#" or "?" (and open or create another file) or decode "%41".
func TestTimelineInAFolderNamedWithURIChars(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	for _, name := range []string{"app#tether", "q?x", "pct%41x", "a b&c=d"} {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "timeline.db")
		s := open(t, path, Options{})
		if _, err := s.Record(ctx, Entry{Tool: "browser_click", Outcome: OK}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s.Close()
		again := open(t, path, Options{})
		if rows, err := again.Query(ctx, Filter{}); err != nil || len(rows) != 1 {
			t.Fatalf("%s: reopened, %d rows, %v; want the one recorded", name, len(rows), err)
		}
	}
	// Nothing was written outside those folders ("app", "q", "pctAx").
	got, _ := os.ReadDir(root)
	if len(got) != 4 {
		var names []string
		for _, e := range got {
			names = append(names, e.Name())
		}
		t.Fatalf("files next to the config dirs: %v", names)
	}
}
