package localclient_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/localclient/localclienttest"
)

// waitView waits, on the model's change channel, until ok holds.
func waitView(t *testing.T, m *localclient.Model, what string, ok func(localclient.View) bool) localclient.View {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		ch := m.Changed()
		if v := m.View(); ok(v) {
			return v
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; view %+v", what, m.View())
		}
	}
}

func TestModelFollowsCallsAndState(t *testing.T) {
	f := localclienttest.New(t)
	f.SetState(func(s *apitype.State) {
		s.Profiles = []apitype.ProfileView{{Slug: "work", Status: "connected", Tabs: []apitype.TabView{{Number: 1, Current: true}, {Number: 2}}}}
		s.Running = []apitype.RunningCall{{ID: "a", Tool: "browser_snapshot", Profile: "work", Tab: 2}}
	})
	var events []apitype.Event
	evc := make(chan apitype.Event, 100)
	m := localclient.NewModel(f.Client(), localclient.ModelOptions{OnEvent: func(e apitype.Event) { evc <- e }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	v := waitView(t, m, "the first sync", func(v localclient.View) bool { return v.Connected })
	if len(v.Running) != 1 || !v.Acting("work", v.Profiles[0].Tabs[1]) || v.Acting("work", v.Profiles[0].Tabs[0]) {
		t.Fatalf("after sync: running %+v", v.Running)
	}
	if e := <-evc; e.Kind != apitype.KindResync {
		t.Fatalf("first event delivered is %q, want resync (reload the timeline)", e.Kind)
	}
	f.Call("b", apitype.PhaseStarted, apitype.TimelineEntry{Tool: "browser_click", Profile: "work"})
	v = waitView(t, m, "call b running", func(v localclient.View) bool { return len(v.Running) == 2 })
	if !v.Acting("work", v.Profiles[0].Tabs[0]) {
		t.Errorf("a call with no tab acts on the current tab; view %+v", v)
	}
	f.Call("a", apitype.PhaseFinished, apitype.TimelineEntry{Tool: "browser_snapshot", Outcome: "ok"})
	f.Call("b", apitype.PhaseFinished, apitype.TimelineEntry{Tool: "browser_click", Outcome: "ok"})
	waitView(t, m, "no call running", func(v localclient.View) bool { return len(v.Running) == 0 })
	// A state event carries no authority over running calls.
	f.Call("c", apitype.PhaseStarted, apitype.TimelineEntry{Tool: "browser_type"})
	f.SetState(func(s *apitype.State) { s.Paused = true; s.Running = nil })
	v = waitView(t, m, "paused", func(v localclient.View) bool { return v.Paused })
	if len(v.Running) != 1 || v.Running[0].ID != "c" {
		t.Errorf("a state event dropped the running call c: %+v", v.Running)
	}
	for len(evc) > 0 {
		events = append(events, <-evc)
	}
	if len(events) == 0 {
		t.Error("OnEvent received none of the call events")
	}
}

func TestModelReconnectsAndRereadsToken(t *testing.T) {
	f := localclienttest.New(t)
	c := f.Client()
	if _, err := c.State(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A rotated token: the client reads the file again after a 401.
	if err := os.WriteFile(f.Paths.ControlToken(), []byte("stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c2 := localclient.New(f.Paths)
	if _, err := c2.State(context.Background()); !localclient.IsStatus(err, http.StatusUnauthorized) {
		t.Fatalf("with a wrong token on disk: %v, want 401", err)
	}
	if err := os.WriteFile(f.Paths.ControlToken(), []byte(localclienttest.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.State(context.Background()); err != nil {
		t.Fatalf("after the token file was fixed, the client did not read it again: %v", err)
	}

	m := localclient.NewModel(c, localclient.ModelOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	waitView(t, m, "connected", func(v localclient.View) bool { return v.Connected })
	f.Close()
	v := waitView(t, m, "disconnected", func(v localclient.View) bool { return !v.Connected })
	if v.Err == "" {
		t.Error("a lost daemon gives no reason")
	}
}

func TestNotRunning(t *testing.T) {
	f := localclienttest.New(t)
	f.Close()
	if err := os.Remove(f.Paths.Daemon()); err != nil {
		t.Fatal(err)
	}
	_, err := f.Client().State(context.Background())
	if err == nil || !errors.Is(err, localclient.ErrNotRunning) {
		t.Fatalf("no daemon: %v, want ErrNotRunning", err)
	}
}

// A held call is not running while it waits, nor once denied; allowed, it
// runs until it finishes.
func TestModelHeldCalls(t *testing.T) {
	f := localclienttest.New(t)
	m := localclient.NewModel(f.Client(), localclient.ModelOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.Run(ctx)
	waitView(t, m, "connected", func(v localclient.View) bool { return v.Connected })
	answer := func(id, a string) {
		f.Emit(apitype.Event{Kind: apitype.KindCall, Call: &apitype.CallEvent{ID: id, Phase: apitype.PhaseAnswered, Answer: a}})
	}
	for _, id := range []string{"x", "y"} {
		f.Call(id, apitype.PhaseStarted, apitype.TimelineEntry{Tool: "browser_file_upload"})
		f.Call(id, apitype.PhaseHeld, apitype.TimelineEntry{Tool: "browser_file_upload"})
	}
	f.SetState(func(s *apitype.State) { s.Paused = true }) // a marker after the holds
	v := waitView(t, m, "the marker", func(v localclient.View) bool { return v.Paused })
	if len(v.Running) != 0 {
		t.Fatalf("held calls count as running: %+v", v.Running)
	}
	answer("x", apitype.Deny)
	answer("y", apitype.AllowOnce)
	v = waitView(t, m, "y running", func(v localclient.View) bool { return len(v.Running) == 1 })
	if v.Running[0].ID != "y" {
		t.Fatalf("running after the answers: %+v", v.Running)
	}
	f.Call("x", apitype.PhaseFinished, apitype.TimelineEntry{Outcome: "denied"})
	f.Call("y", apitype.PhaseFinished, apitype.TimelineEntry{Outcome: "ok"})
	v = waitView(t, m, "nothing running", func(v localclient.View) bool { return len(v.Running) == 0 })
	if v.Ended != 1 {
		t.Errorf("Ended = %d, want 1 (only y ran)", v.Ended)
	}
}
