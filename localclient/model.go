package localclient

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/tether-browser/tether/apitype"
)

// View is what the tray and the window show: the daemon's State, with
// Running kept current from the call events, and whether the daemon is
// reachable now.
type View struct {
	apitype.State
	// Connected is true while the event stream is open.
	Connected bool
	// Err, while not Connected, says why (e.g. ErrNotRunning's text).
	Err string
	// Ended counts the calls that started and finished since the model
	// began: a call too fast to be seen in Running still moves it (the
	// tray lingers on "acting" for it).
	Ended int
	// LastTool is the tool of the last call that started.
	LastTool string
}

// Acting reports whether a call runs now on the profile's tab: one naming
// that tab, or one naming no tab when it is the profile's current tab.
func (v View) Acting(profile string, t apitype.TabView) bool {
	for _, c := range v.Running {
		if c.Profile == profile && (c.Tab == t.Number || c.Tab == 0 && t.Current) {
			return true
		}
	}
	return false
}

// ProfileActing reports whether any call runs now on the profile.
func (v View) ProfileActing(profile string) bool {
	for _, c := range v.Running {
		if c.Profile == profile {
			return true
		}
	}
	return false
}

// Model is the daemon's state as the tray and the window see it: one
// State read with GET /api/state, then kept current by the event stream
// (Run). "Calls running now" comes from one rule: a call's started event
// adds it, its held event sets it aside until an answer that allows it,
// its finished event removes it, and each (re)sync replaces the set with
// the daemon's own (which leaves held calls out too). KindState events replace everything else
// (their Running is ignored: a State built before a call event but sent
// after it would bring back a finished call).
type Model struct {
	c   *Client
	log *slog.Logger
	// onEvent, if set, receives every event after the model applied it,
	// in order, on Run's goroutine.
	onEvent func(apitype.Event)

	mu      sync.Mutex
	view    View
	running map[string]apitype.RunningCall
	// held are started calls waiting for the user's answer: not running
	// (the daemon's State.Running leaves them out too) until allowed.
	held    map[string]apitype.RunningCall
	changed chan struct{}
}

// ModelOptions configure NewModel.
type ModelOptions struct {
	// OnEvent, if set, receives every event after the model applied it, in
	// order, on Run's goroutine; it must not block for long. After a
	// (re)connection it first receives a KindResync event: reload what is
	// kept apart from the model (the timeline).
	OnEvent func(apitype.Event)
	Logger  *slog.Logger
}

// NewModel returns a model of c's daemon; Run keeps it current.
func NewModel(c *Client, o ModelOptions) *Model {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Model{c: c, log: log, onEvent: o.OnEvent, running: map[string]apitype.RunningCall{}, held: map[string]apitype.RunningCall{},
		changed: make(chan struct{}), view: View{Err: "connecting to Tether"}}
}

// View returns the current view.
func (m *Model) View() View {
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.view
	v.Running = make([]apitype.RunningCall, 0, len(m.running))
	for _, c := range m.running {
		v.Running = append(v.Running, c)
	}
	slices.SortFunc(v.Running, func(a, b apitype.RunningCall) int {
		if a.SinceMs != b.SinceMs {
			return int(a.SinceMs - b.SinceMs)
		}
		if a.ID < b.ID {
			return -1
		}
		return 1
	})
	return v
}

// Changed is closed at the next change of the view.
func (m *Model) Changed() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}

// notify closes the change channel; call with mu held.
func (m *Model) notify() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// Reconnect bounds the wait between two attempts to reach the daemon.
var (
	reconnectMin = 200 * time.Millisecond
	reconnectMax = 5 * time.Second
)

// Run keeps the model current until ctx ends: it opens the event stream,
// reads the state, applies events, and reconnects (resuming from the last
// event seen) whenever the stream ends. It returns ctx's error.
func (m *Model) Run(ctx context.Context) error {
	var last uint64
	wait := reconnectMin
	for {
		err := m.session(ctx, &last)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m.mu.Lock()
		wasConnected := m.view.Connected
		m.view.Connected, m.view.Err = false, err.Error()
		clear(m.running) // unknown until the next sync
		clear(m.held)
		m.notify()
		m.mu.Unlock()
		if wasConnected {
			m.log.Info("lost the daemon's event stream; reconnecting", "err", err)
			wait = reconnectMin
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, reconnectMax)
	}
}

// session is one connection: stream first (so nothing is missed), then
// the state, then events until the stream ends.
func (m *Model) session(ctx context.Context, last *uint64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := m.c.Events(ctx, *last)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := m.sync(ctx); err != nil {
		return err
	}
	m.deliver(apitype.Event{Kind: apitype.KindResync})
	for {
		ev, err := s.Next()
		if err != nil {
			return err
		}
		if ev.Seq > 0 {
			*last = ev.Seq
		}
		if ev.Kind == apitype.KindResync {
			if err := m.sync(ctx); err != nil {
				return err
			}
		} else {
			m.apply(ev)
		}
		m.deliver(ev)
	}
}

// sync reads the whole state and replaces the model's.
func (m *Model) sync(ctx context.Context) error {
	st, err := m.c.State(ctx)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.running)
	clear(m.held)
	for _, c := range st.Running {
		m.running[c.ID] = c
	}
	m.view = View{State: st, Connected: true, Ended: m.view.Ended, LastTool: m.view.LastTool}
	m.notify()
	return nil
}

// apply updates the model with one event.
func (m *Model) apply(ev apitype.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ev.Kind {
	case apitype.KindState:
		if ev.State == nil {
			return
		}
		m.view.State = *ev.State
		m.view.Running = nil
		m.notify()
	case apitype.KindCall:
		c := ev.Call
		if c == nil || c.ID == "" {
			return
		}
		switch c.Phase {
		case apitype.PhaseStarted:
			m.running[c.ID] = apitype.RunningCall{ID: c.ID, Tool: c.Entry.Tool, Client: c.Entry.Client,
				Profile: c.Entry.Profile, Tab: c.Entry.Tab, SinceMs: c.Entry.TimeMs}
			m.view.LastTool = c.Entry.Tool
			m.notify()
		case apitype.PhaseHeld:
			if r, ok := m.running[c.ID]; ok {
				delete(m.running, c.ID)
				m.held[c.ID] = r
				m.notify()
			}
		case apitype.PhaseAnswered:
			if r, ok := m.held[c.ID]; ok {
				delete(m.held, c.ID)
				if c.Answer == apitype.AllowOnce || c.Answer == apitype.AlwaysAllowSite {
					m.running[c.ID] = r
					m.notify()
				}
			}
		case apitype.PhaseFinished:
			delete(m.held, c.ID)
			if _, ok := m.running[c.ID]; ok {
				delete(m.running, c.ID)
				m.view.Ended++
				m.notify()
			}
		}
	}
}

func (m *Model) deliver(ev apitype.Event) {
	if m.onEvent != nil {
		m.onEvent(ev)
	}
}
