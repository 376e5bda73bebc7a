package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/test/mcpclient"
	"github.com/tether-browser/tether/timeline"
)

// events reads the daemon's GET /api/events into a channel until the test
// ends.
func events(t *testing.T, p config.Paths, addr string) <-chan apitype.Event {
	t.Helper()
	tok, err := p.ReadControlToken()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+apitype.PathEvents, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	out := make(chan apitype.Event, 1024)
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var ev apitype.Event
				if json.Unmarshal([]byte(data), &ev) == nil {
					out <- ev
				}
			}
		}
	}()
	return out
}

// nextCall waits for the next KindCall event.
func nextCall(t *testing.T, evs <-chan apitype.Event) apitype.CallEvent {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev := <-evs:
			if ev.Kind == apitype.KindResync {
				t.Fatalf("resync (dropped %d) on a stream that reads as fast as it can", ev.Dropped)
			}
			if ev.Kind == apitype.KindCall {
				return *ev.Call
			}
		case <-timeout:
			t.Fatal("no call event within 10 s")
		}
	}
}

// TestCallIDsThroughThePhases drives real MCP calls: one that runs, one
// refused while paused, one held and answered over the local API. Each
// call's id appears once per phase it goes through, in order, and is the
// id of its approval and of its timeline row.
func TestCallIDsThroughThePhases(t *testing.T) {
	var s Services
	p, addr := startDaemonWith(t, func(c *Config) {
		c.Approver = policy.QueueOnly{}
		c.Services = func(got Services) { s = got }
	})
	evs := events(t, p, addr)
	ctx := context.Background()
	c := mcpClient(t, p, addr)
	phases := map[string][]string{} // call id → phases seen
	var order []string
	collect := func(n int) []apitype.CallEvent {
		var out []apitype.CallEvent
		for range n {
			ce := nextCall(t, evs)
			if ce.ID == "" || ce.Entry.CallID != ce.ID {
				t.Fatalf("call event without its id: %+v", ce)
			}
			if len(phases[ce.ID]) == 0 {
				order = append(order, ce.ID)
			}
			phases[ce.ID] = append(phases[ce.ID], ce.Phase)
			out = append(out, ce)
		}
		return out
	}

	// 1. Runs (and fails: no browser is connected).
	toolText(t, c, "browser_tabs", nil)
	collect(2)

	// 2. Refused before it starts.
	if _, err := localclient.New(p).SetPaused(ctx, true); err != nil {
		t.Fatal(err)
	}
	if text, _ := toolText(t, c, "browser_tabs", nil); text != policy.PausedMessage {
		t.Fatalf("paused: %q", text)
	}
	if got := collect(1); got[0].Phase != apitype.PhaseFinished || got[0].Entry.Outcome != "paused" {
		t.Fatalf("refused call: %+v", got[0])
	}
	if _, err := localclient.New(p).SetPaused(ctx, false); err != nil {
		t.Fatal(err)
	}

	// 3. Held, answered in the window over the local API, then runs.
	if err := s.Guard.AddRule(policy.Rule{Class: policy.Read, Site: "*", Action: policy.Confirm}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, _ = mcpclient.Call(ctx, c, "browser_tabs", nil, nil)
	}()
	held := collect(2)
	if held[0].Phase != apitype.PhaseStarted || held[1].Phase != apitype.PhaseHeld || held[1].Approval == nil || held[1].Approval.ID != held[1].ID {
		t.Fatalf("held call: %+v", held)
	}
	queue, err := localclient.New(p).Approvals(ctx)
	if err != nil || len(queue) != 1 || queue[0].ID != held[1].ID {
		t.Fatalf("approvals: %v %+v; want the call's id %s", err, queue, held[1].ID)
	}
	if err := localclient.New(p).Answer(ctx, held[1].ID, apitype.AllowOnce, "window"); err != nil {
		t.Fatal(err)
	}
	<-done
	rest := collect(2)
	if rest[0].Phase != apitype.PhaseAnswered || rest[0].Answer != apitype.AllowOnce || rest[0].AnsweredBy != "window" {
		t.Fatalf("answered: %+v", rest[0])
	}
	if err := Control(ctx, p, http.MethodPost, apitype.PathApprovalAnswer,
		apitype.AnswerRequest{ID: held[1].ID, Answer: apitype.Deny}, nil); err == nil || !strings.Contains(err.Error(), "already answered") {
		t.Fatalf("a second answer: %v; want 409", err)
	}

	want := [][]string{
		{apitype.PhaseStarted, apitype.PhaseFinished},
		{apitype.PhaseFinished},
		{apitype.PhaseStarted, apitype.PhaseHeld, apitype.PhaseAnswered, apitype.PhaseFinished},
	}
	if len(order) != len(want) {
		t.Fatalf("calls %v; want %d distinct ids", order, len(want))
	}
	for i, id := range order {
		if got := strings.Join(phases[id], " "); got != strings.Join(want[i], " ") {
			t.Errorf("call %d (%s): phases %s; want %s", i+1, id, got, strings.Join(want[i], " "))
		}
	}
	var st apitype.State
	if err := Control(ctx, p, http.MethodGet, apitype.PathState, nil, &st); err != nil || len(st.Running) != 0 || len(st.Approvals) != 0 {
		t.Fatalf("state after the calls: %v running %+v approvals %+v", err, st.Running, st.Approvals)
	}
	var rows []apitype.TimelineEntry
	if err := Control(ctx, p, http.MethodGet, apitype.PathTimeline, nil, &rows); err != nil || len(rows) != 3 {
		t.Fatalf("timeline: %v %+v", err, rows)
	}
	for i, r := range rows { // newest first
		if r.CallID != order[len(order)-1-i] {
			t.Errorf("timeline row %d has call id %q; want %q", r.ID, r.CallID, order[len(order)-1-i])
		}
	}
}

// TestStalledEventStreamDoesNotBlockCalls: a subscriber of /api/events
// that reads nothing does not slow the daemon's tool calls; its missed
// events are counted in State.EventsDropped.
func TestStalledEventStreamDoesNotBlockCalls(t *testing.T) {
	var s Services
	p, addr := startDaemonWith(t, func(c *Config) {
		c.EventBuffer = 4
		c.Services = func(got Services) { s = got }
	})
	tok, err := p.ReadControlToken()
	if err != nil {
		t.Fatal(err)
	}
	// A raw request whose response nobody reads.
	req, _ := http.NewRequest("GET", "http://"+addr+apitype.PathEvents, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	var raw bytes.Buffer
	_ = req.Write(&raw)
	stalled, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if _, err := stalled.Write(raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	c := mcpClient(t, p, addr)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		// Big notices fill the stalled socket quickly; calls go on.
		s.API.Notify("info", strings.Repeat("x", 512<<10))
		began := time.Now()
		toolText(t, c, "browser_tabs", nil)
		if d := time.Since(began); d > 2*time.Second {
			t.Fatalf("a tool call took %s with a stalled event stream", d)
		}
		if s.API.EventsDropped() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no event dropped for a stream that reads nothing")
		}
	}
	var st apitype.State
	if err := Control(context.Background(), p, http.MethodGet, apitype.PathState, nil, &st); err != nil || st.EventsDropped == 0 {
		t.Fatalf("state: %v, EventsDropped %d", err, st.EventsDropped)
	}
	rows, err := s.Timeline.Query(context.Background(), timeline.Filter{})
	if err != nil || len(rows) == 0 || rows[0].CallID == "" {
		t.Fatalf("the calls' rows: %v %+v", err, rows)
	}
}
