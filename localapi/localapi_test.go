package localapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/timeline"
)

const (
	ctlToken = "control-secret"
	mcpToken = "mcp-secret"
)

// fixture is a Server on real parts (broker, guard, timeline, a clients
// host in a temporary home) behind a real listener.
type fixture struct {
	s    *Server
	url  string // http://127.0.0.1:port
	port int
	tl   *timeline.Store
	g    *policy.Guard
}

func newFixture(t *testing.T, edit func(*Config)) *fixture {
	t.Helper()
	dir := t.TempDir()
	b, err := broker.New(broker.Config{ExtensionIDs: []string{broker.DefaultExtensionID}, StorePath: filepath.Join(dir, "profiles.json")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	g, err := policy.Open(policy.Config{Path: filepath.Join(dir, "policy.json")})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := timeline.Open(filepath.Join(dir, "timeline.db"), timeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	ts := httptest.NewUnstartedServer(nil)
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	cfg := Config{Broker: b, Guard: g, Timeline: tl,
		Clients: clients.Host{OS: "linux", Home: filepath.Join(dir, "home")}, ExtensionDir: filepath.Join(dir, "ext"),
		Port: port, Shutdown: func() {}, ControlToken: ctlToken, MCPToken: mcpToken, Version: "test"}
	if edit != nil {
		edit(&cfg)
	}
	s := New(cfg)
	ts.Config.Handler = s
	ts.Start()
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	return &fixture{s: s, url: ts.URL, port: port, tl: tl, g: g}
}

// do sends a request with the control token unless auth is set ("-" for
// none) and returns the status and body.
func (f *fixture) do(t *testing.T, method, path, body string, edit func(*http.Request)) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+ctlToken)
	if edit != nil {
		edit(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestEveryRouteRefuses walks the route table itself, so a new route
// cannot be left unchecked.
func TestEveryRouteRefuses(t *testing.T) {
	shut := false
	f := newFixture(t, func(c *Config) { c.Shutdown = func() { shut = true } })
	routes := f.s.Routes()
	if len(routes) < 20 {
		t.Fatalf("only %d routes", len(routes))
	}
	cases := []struct {
		name string
		edit func(*http.Request)
		want int
	}{
		{"no token", func(r *http.Request) { r.Header.Del("Authorization") }, http.StatusUnauthorized},
		{"wrong token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+ctlToken+"x") }, http.StatusUnauthorized},
		{"token as Basic", func(r *http.Request) { r.Header.Set("Authorization", "Basic "+ctlToken) }, http.StatusUnauthorized},
		{"MCP token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+mcpToken) }, http.StatusForbidden},
		{"rebinding Host", func(r *http.Request) { r.Host = "evil.example:" + strconv.Itoa(f.port) }, http.StatusMisdirectedRequest},
		{"another port", func(r *http.Request) { r.Host = "127.0.0.1:" + strconv.Itoa(f.port+1) }, http.StatusMisdirectedRequest},
		{"browser Origin", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, http.StatusForbidden},
		{"null Origin", func(r *http.Request) { r.Header.Set("Origin", "null") }, http.StatusForbidden},
		// Remote mode (docs/remote.md): the local API is never served through a proxy.
		{"X-Forwarded-For", func(r *http.Request) { r.Header.Set("X-Forwarded-For", "198.51.100.1") }, http.StatusForbidden},
		{"Forwarded", func(r *http.Request) { r.Header.Set("Forwarded", "for=198.51.100.1;proto=https") }, http.StatusForbidden},
		{"public Host via proxy", func(r *http.Request) {
			r.Host = "tether.example.org"
			r.Header.Set("X-Forwarded-Proto", "https")
		}, http.StatusForbidden},
	}
	for _, r := range routes {
		for _, c := range cases {
			code, body := f.do(t, r.Method, r.Path, `{}`, c.edit)
			if code != c.want {
				t.Errorf("%s %s, %s: %d %s; want %d", r.Method, r.Path, c.name, code, body, c.want)
			}
			var e apitype.Error
			if json.Unmarshal([]byte(body), &e) != nil || e.Error == "" {
				t.Errorf("%s %s, %s: body %q is not an apitype.Error", r.Method, r.Path, c.name, body)
			}
		}
	}
	if shut {
		t.Error("a refused request stopped the daemon")
	}
	// Checked before routing: an unknown route says nothing to a stranger.
	if code, _ := f.do(t, "GET", "/api/nothing", "", func(r *http.Request) { r.Header.Del("Authorization") }); code != http.StatusUnauthorized {
		t.Errorf("unknown route without a token: %d; want 401", code)
	}
	for _, host := range []string{"localhost:" + strconv.Itoa(f.port), "[::1]:" + strconv.Itoa(f.port), "127.0.0.1"} {
		if code, body := f.do(t, "GET", apitype.PathState, "", func(r *http.Request) { r.Host = host }); code != http.StatusOK {
			t.Errorf("GET state with Host %s: %d %s; want 200", host, code, body)
		}
	}
	if code, _ := f.do(t, "DELETE", apitype.PathState, "", nil); code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE state: %d; want 405", code)
	}
}

// TestRoutes exercises the routes that need no browser, window or
// desktop, through HTTP.
func TestRoutes(t *testing.T) {
	f := newFixture(t, nil)
	get := func(path string, out any) {
		t.Helper()
		code, body := f.do(t, "GET", path, "", nil)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, body)
		}
		if err := json.Unmarshal([]byte(body), out); err != nil {
			t.Fatalf("GET %s: %v in %q", path, err, body)
		}
	}
	var st apitype.State
	get(apitype.PathState, &st)
	if st.Version != "test" || st.Paused || st.Window || st.Profiles == nil || st.Running == nil {
		t.Fatalf("state %+v", st)
	}
	if code, body := f.do(t, "POST", apitype.PathPause, `{"paused": true}`, nil); code != http.StatusOK || !strings.Contains(body, `"paused":true`) {
		t.Fatalf("pause: %d %s", code, body)
	}
	if !f.g.Paused() {
		t.Fatal("the guard is not paused")
	}
	if code, _ := f.do(t, "POST", apitype.PathPause, `{}`, nil); code != http.StatusBadRequest {
		t.Fatalf("pause without paused: %d; want 400", code)
	}
	if code, body := f.do(t, "POST", apitype.PathProfileApprove, `{"name": "NOBODY"}`, nil); code != http.StatusNotFound {
		t.Fatalf("approve nobody: %d %s; want 404", code, body)
	}
	if code, body := f.do(t, "POST", apitype.PathApprovalAnswer, `{"id": "x", "answer": "allow_once"}`, nil); code != http.StatusConflict {
		t.Fatalf("answer nothing: %d %s; want 409", code, body)
	}
	if code, body := f.do(t, "POST", apitype.PathApprovalAnswer, `{"id": "x", "answer": "allow_once", "by": "dialog"}`, nil); code != http.StatusBadRequest {
		t.Fatalf("answer by dialog: %d %s; want 400", code, body)
	}
	if _, err := f.tl.Record(context.Background(), timeline.Entry{CallID: "c1", Client: "claude-ai", Tool: "browser_snapshot", Outcome: timeline.OK}); err != nil {
		t.Fatal(err)
	}
	var rows []apitype.TimelineEntry
	get(apitype.PathTimeline+"?client=claude-ai&limit=5", &rows)
	if len(rows) != 1 || rows[0].CallID != "c1" || rows[0].Tool != "browser_snapshot" {
		t.Fatalf("timeline %+v", rows)
	}
	if code, _ := f.do(t, "GET", apitype.PathTimeline+"?outcome=great", "", nil); code != http.StatusBadRequest {
		t.Fatalf("unknown outcome: %d; want 400", code)
	}
	var facets apitype.TimelineFacets
	get(apitype.PathTimelineFacets, &facets)
	if len(facets.Clients) != 1 || facets.Clients[0] != "claude-ai" || len(facets.Outcomes) != 8 {
		t.Fatalf("facets %+v", facets)
	}
	code, body := f.do(t, "GET", apitype.PathTimelineExport, "", nil)
	if got, err := timeline.ReadJSONL(strings.NewReader(body)); code != http.StatusOK || err != nil || len(got) != 1 || got[0].CallID != "c1" {
		t.Fatalf("export: %d %v %+v", code, err, got)
	}
	var list []apitype.Client
	get(apitype.PathClients, &list)
	if len(list) == 0 || list[0].ID == "" {
		t.Fatalf("clients %+v", list)
	}
	if code, body := f.do(t, "POST", apitype.PathClientConnect, `{"id": "no-such-client"}`, nil); code != http.StatusNotFound {
		t.Fatalf("connect an unknown client: %d %s; want 404", code, body)
	}
	var ext apitype.ExtensionState
	get(apitype.PathExtension, &ext)
	if ext.Written || len(ext.Steps) == 0 || !strings.HasSuffix(ext.Dir, "ext") {
		t.Fatalf("extension %+v", ext)
	}
	for _, path := range []string{apitype.PathWindowOpen, apitype.PathTestBrowser, apitype.PathExtensionWrite} {
		code, body := f.do(t, "POST", path, "", nil)
		if code < 400 || !strings.Contains(body, "error") {
			t.Errorf("POST %s without a window, a binary or an extension: %d %s; want an error", path, code, body)
		}
	}
}

// sseEvent is one event read off the stream.
type sseEvent struct {
	id uint64
	ev apitype.Event
}

// sseReader reads events from a raw stream, skipping comments.
type sseReader struct{ r *bufio.Reader }

func (s sseReader) next(t *testing.T) sseEvent {
	t.Helper()
	var out sseEvent
	got := false
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			t.Fatalf("read the event stream: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "" && got:
			return out
		case strings.HasPrefix(line, "id: "):
			out.id, _ = strconv.ParseUint(line[4:], 10, 64)
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &out.ev); err != nil {
				t.Fatalf("event data %q: %v", line, err)
			}
			got = true
		}
	}
}

// subscribe opens GET /api/events on a raw connection (nothing reads it
// until the test does) and waits until the hub counts it.
func (f *fixture) subscribe(t *testing.T, lastID uint64) (net.Conn, sseReader) {
	t.Helper()
	before := f.subscribers()
	isNew := func() bool {
		for s := range f.subscribers() {
			if !before[s] {
				return true
			}
		}
		return false
	}
	c, err := net.Dial("tcp", strings.TrimPrefix(f.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	req := "GET " + apitype.PathEvents + " HTTP/1.1\r\nHost: " + strings.TrimPrefix(f.url, "http://") + "\r\nAuthorization: Bearer " + ctlToken + "\r\n"
	if lastID > 0 {
		req += fmt.Sprintf("Last-Event-ID: %d\r\n", lastID)
	}
	if _, err := io.WriteString(c, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !isNew(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the event stream did not subscribe")
		}
	}
	r := bufio.NewReader(c)
	for { // the response head
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "HTTP/1.1 ") && !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("events: %s", line)
		}
		if line == "\r\n" {
			break
		}
	}
	// Chunked encoding: the reader below sees chunk sizes as lines that are
	// neither id nor data, which it skips.
	return c, sseReader{r}
}

func (f *fixture) subscribers() map[*subscriber]bool {
	f.s.hub.mu.Lock()
	defer f.s.hub.mu.Unlock()
	out := map[*subscriber]bool{}
	for s := range f.s.hub.subs {
		out[s] = true
	}
	return out
}

func (f *fixture) seq() uint64 {
	f.s.hub.mu.Lock()
	defer f.s.hub.mu.Unlock()
	return f.s.hub.seq
}

// TestSlowSubscriberNeverBlocks: a subscriber that stops reading holds
// nothing up; what it missed is counted, reported in State, and told to it
// by a resync once it has room, after which it is live again.
func TestSlowSubscriberNeverBlocks(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.EventBuffer = 8 })
	_, slow := f.subscribe(t, 0)
	start := f.seq()
	big := strings.Repeat("x", 256<<10)
	const notices = 100 // 25 MB: more than any socket buffer holds
	began := time.Now()
	for i := range notices {
		f.s.Notify("info", fmt.Sprintf("%d %s", i, big))
		// Tool calls go on meanwhile, through the timeline.
		e := timeline.Entry{CallID: fmt.Sprintf("call-%d", i), Time: time.Now(), Tool: "browser_snapshot"}
		f.tl.Started(e)
		e.Outcome = timeline.OK
		if _, err := f.tl.Record(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(began); d > 10*time.Second {
		t.Fatalf("publishing took %s with a stalled subscriber", d)
	}
	// The calls' events reach the hub on the forwarding goroutine. The
	// deadline only bounds a hang: CI's loaded 2 cores once left the last 6
	// events unforwarded after 5 s (speed is the bench's, not this test's).
	want := start + notices + 2*notices
	for deadline := time.Now().Add(30 * time.Second); f.seq() < want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("hub at seq %d; want %d", f.seq(), want)
		}
	}
	dropped := f.s.EventsDropped()
	if dropped == 0 {
		t.Fatal("no event was dropped for a subscriber that reads nothing")
	}
	if st := f.s.State(); st.EventsDropped != dropped {
		t.Fatalf("State.EventsDropped = %d; want %d", st.EventsDropped, dropped)
	}
	// Reading again: every event is either received or counted in one
	// resync, in order.
	received, resyncs, reported := 0, 0, 0
	last := start
	for last < want {
		e := slow.next(t)
		if e.id <= last {
			t.Fatalf("event %d after %d", e.id, last)
		}
		last = e.id
		if e.ev.Kind == apitype.KindResync {
			resyncs++
			reported += e.ev.Dropped
			continue
		}
		received++
	}
	// While the socket's buffers still took some events, the writer caught
	// up more than once: one resync per run of drops.
	if resyncs == 0 || int64(reported) != dropped || received+reported != int(want-start) {
		t.Fatalf("received %d, %d resync(s) reporting %d dropped; want resyncs reporting %d dropped, %d in all", received, resyncs, reported, dropped, want-start)
	}
	f.s.Notify("info", "live again")
	if e := slow.next(t); e.ev.Kind != apitype.KindNotice || e.ev.Notice.Text != "live again" {
		t.Fatalf("after the resync: %+v", e.ev)
	}
}

// TestResumeReplaysMissed: Last-Event-ID gets exactly the events after it
// from the ring; an id the ring no longer holds, or another daemon's, gets
// a resync.
func TestResumeReplaysMissed(t *testing.T) {
	f := newFixture(t, nil)
	c, r := f.subscribe(t, 0)
	f.s.Notify("info", "one")
	seen := r.next(t)
	c.Close()
	for i := range 5 {
		f.s.Notify("info", fmt.Sprint("missed ", i))
	}
	_, r = f.subscribe(t, seen.id)
	f.s.Notify("info", "live")
	for i := range 5 {
		e := r.next(t)
		if e.id != seen.id+uint64(i)+1 || e.ev.Notice == nil || e.ev.Notice.Text != fmt.Sprint("missed ", i) {
			t.Fatalf("replay %d: id %d %+v", i, e.id, e.ev)
		}
	}
	if e := r.next(t); e.ev.Notice == nil || e.ev.Notice.Text != "live" {
		t.Fatalf("after the replay: %+v; want the live event, nothing more", e.ev)
	}
	// Up to date: nothing to replay.
	last := f.seq()
	_, r = f.subscribe(t, last)
	f.s.Notify("info", "next")
	if e := r.next(t); e.id != last+1 || e.ev.Notice.Text != "next" {
		t.Fatalf("up to date: %d %+v", e.id, e.ev)
	}
	// Gone from the ring, or from an earlier daemon: resync.
	old := f.seq()
	for range ringSize + 1 {
		f.s.ShowWindow()
	}
	for _, id := range []uint64{old, 1, f.seq() + 10} {
		_, r = f.subscribe(t, id)
		if e := r.next(t); e.ev.Kind != apitype.KindResync {
			t.Fatalf("Last-Event-ID %d: %+v; want a resync", id, e.ev)
		}
	}
}

// TestStateEventsCoalesce: a change of the guard goes out as one State.
func TestStateEventsCoalesce(t *testing.T) {
	f := newFixture(t, nil)
	_, r := f.subscribe(t, 0)
	if err := f.g.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	if err := f.g.AddRule(policy.Rule{Class: policy.Read, Site: "https://a.com", Action: policy.Deny}); err != nil {
		t.Fatal(err)
	}
	e := r.next(t)
	if e.ev.Kind != apitype.KindState || e.ev.State == nil || !e.ev.State.Paused {
		t.Fatalf("%+v; want a paused State", e.ev)
	}
	f.s.Notify("info", "marker")
	if e := r.next(t); e.ev.Kind != apitype.KindNotice {
		t.Fatalf("a burst of changes gave a second event %+v", e.ev)
	}
}

// TestStoppingIsInTheState: once the daemon stops, State says so, and
// the subscribers hear it at once (once).
func TestStoppingIsInTheState(t *testing.T) {
	f := newFixture(t, nil)
	if f.s.State().Stopping {
		t.Fatal("a new daemon's State says it is stopping")
	}
	_, r := f.subscribe(t, 0)
	f.s.Stopping()
	f.s.Stopping()
	if e := r.next(t); e.ev.Kind != apitype.KindState || e.ev.State == nil || !e.ev.State.Stopping {
		t.Fatalf("%+v; want a State that says stopping", e.ev)
	}
	f.s.Notify("info", "marker")
	if e := r.next(t); e.ev.Kind != apitype.KindNotice {
		t.Fatalf("a second Stopping sent %+v", e.ev)
	}
	if !f.s.State().Stopping {
		t.Fatal("State does not say stopping")
	}
}

func TestIsLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:47615": true, "localhost:1": true, "LOCALHOST": true, "[::1]:80": true, "127.8.9.1": true,
		"evil.example": false, "evil.example:47615": false, "0.0.0.0:1": false, "192.168.1.2:47615": false,
		"localhost.evil.example": false, "": false, "[::ffff:127.0.0.1]:1": true,
	} {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestPings: an idle stream sends a comment line every PingInterval.
func TestPings(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.PingInterval = 10 * time.Millisecond })
	c, r := f.subscribe(t, 0)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for pings := 0; pings < 2; {
		line, err := r.r.ReadString('\n')
		if err != nil {
			t.Fatalf("no ping: %v", err)
		}
		if line == ": ping\n" {
			pings++
		}
	}
}

// TestTimelineByProfileName: the timeline's profile filter takes a profile
// as a tool call names it (id, slug or a unique prefix of either) and
// finds its rows, which carry its slug; a slug that rows carry is taken as
// it is, though it is a known profile's prefix (its profile forgotten).
func TestTimelineByProfileName(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "profiles.json")
	if err := os.WriteFile(store, []byte(`{"version": 1, "profiles": [{"id": "d5136b41-0000-4000-8000-000000000000", "label": "Work 2", "slug": "work-2", "secretHash": "00", "lastSeen": "`+time.Now().UTC().Format(time.RFC3339)+`"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := broker.New(broker.Config{ExtensionIDs: []string{broker.DefaultExtensionID}, StorePath: store})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	f := newFixture(t, func(c *Config) { c.Broker = b })
	for i, slug := range []string{"work-2", "work"} { // "work": a profile forgotten since
		if _, err := f.tl.Record(context.Background(), timeline.Entry{CallID: fmt.Sprintf("c%d", i), Client: "claude-ai", Tool: "browser_snapshot", Profile: slug, Tab: 1, Outcome: timeline.OK}); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"work-2": "c0", "work-": "c0", "d5136b41-0000-4000-8000-000000000000": "c0", "d513": "c0", "work": "c1"} {
		var rows []apitype.TimelineEntry
		code, body := f.do(t, "GET", apitype.PathTimeline+"?profile="+url.QueryEscape(name), "", nil)
		if code != http.StatusOK || json.Unmarshal([]byte(body), &rows) != nil || len(rows) != 1 || rows[0].CallID != want {
			t.Errorf("profile %q: %d %s; want the one row %s", name, code, body, want)
		}
		code, body = f.do(t, "GET", apitype.PathTimelineExport+"?profile="+url.QueryEscape(name), "", nil)
		if got, err := timeline.ReadJSONL(strings.NewReader(body)); code != http.StatusOK || err != nil || len(got) != 1 || got[0].CallID != want {
			t.Errorf("export, profile %q: %d %v %+v; want the one row %s", name, code, err, got, want)
		}
	}
}
