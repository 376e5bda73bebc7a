package tray

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image/png"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/timeline"
)

func profile(label string, connected bool, tabs int) broker.Profile {
	p := broker.Profile{ID: label + "-id", Label: label, Slug: strings.ToLower(label), Connected: connected}
	for i := range tabs {
		p.Tabs = append(p.Tabs, protocol.TabInfo{Tab: i + 1})
	}
	return p
}

func TestRender(t *testing.T) {
	work := profile("Work", true, 2)
	home := profile("Home", true, 3)
	gone := profile("Old", false, 4)
	for _, tc := range []struct {
		name    string
		snap    Snapshot
		state   State
		status  string
		tooltip string
	}{
		{"nothing", Snapshot{}, Disconnected, "No extension connected", "Tether: no extension connected"},
		{"only disconnected profiles", Snapshot{Profiles: []broker.Profile{gone}}, Disconnected, "No extension connected", "Tether: no extension connected"},
		{"one profile", Snapshot{Profiles: []broker.Profile{work, gone}}, Connected, "1 profile · 2 shared tabs", "Tether: connected"},
		{"two profiles", Snapshot{Profiles: []broker.Profile{work, home}}, Connected, "2 profiles · 5 shared tabs", "Tether: connected"},
		{"one tab", Snapshot{Profiles: []broker.Profile{profile("A", true, 1)}}, Connected, "1 profile · 1 shared tab", "Tether: connected"},
		{"acting", Snapshot{Profiles: []broker.Profile{work}, Running: 1, Tool: "browser_click"}, Acting, "1 profile · 2 shared tabs", "Tether: AI acting now (browser_click)"},
		{"pairing waits", Snapshot{PendingProfiles: 1}, Approval, "No extension connected · waiting for you: 1 profile to pair", "Tether: waiting for you: 1 profile to pair"},
		{"approval beats acting", Snapshot{Profiles: []broker.Profile{work}, Running: 2, PendingCalls: 2}, Approval, "1 profile · 2 shared tabs · waiting for you: 2 calls to approve", "Tether: waiting for you: 2 calls to approve"},
		{"pairing shows codes", Snapshot{PendingProfiles: 2, Pairing: []broker.PendingProfile{{Label: "Work", Code: "K7M4PX"}, {Label: "Work", Code: "ZZ9Q2R"}}}, Approval,
			`No extension connected · waiting for you: 2 profiles to pair ("Work" code K7M4PX, "Work" code ZZ9Q2R)`,
			`Tether: waiting for you: 2 profiles to pair ("Work" code K7M4PX, "Work" code ZZ9Q2R)`},
		{"both wait", Snapshot{PendingProfiles: 2, PendingCalls: 1}, Approval, "No extension connected · waiting for you: 2 profiles to pair, 1 call to approve", "Tether: waiting for you: 2 profiles to pair, 1 call to approve"},
		{"paused beats everything", Snapshot{Profiles: []broker.Profile{work}, Paused: true, Running: 1, PendingCalls: 1}, Paused, "1 profile · 2 shared tabs", "Tether: AI access paused"},
		{"notice in tooltip", Snapshot{Notice: "Cursor: connected"}, Disconnected, "No extension connected", "Tether: no extension connected\nCursor: connected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := Render(tc.snap)
			if v.State != tc.state || v.Status != tc.status || v.Tooltip != tc.tooltip {
				t.Errorf("Render = state %q, status %q, tooltip %q; want %q, %q, %q", v.State, v.Status, v.Tooltip, tc.state, tc.status, tc.tooltip)
			}
			if v.Paused != tc.snap.Paused || v.Notice != tc.snap.Notice {
				t.Errorf("Render = paused %v notice %q; want %v %q", v.Paused, v.Notice, tc.snap.Paused, tc.snap.Notice)
			}
		})
	}
}

// Every state has a PNG and an ICO of its own, 64×64, that decode.
func TestIcons(t *testing.T) {
	seen := map[string]State{}
	for _, s := range States {
		p := Icon(s, "linux")
		img, err := png.Decode(bytes.NewReader(p))
		if err != nil {
			t.Fatalf("%s.png: %v", s, err)
		}
		if b := img.Bounds(); b.Dx() != 64 || b.Dy() != 64 {
			t.Errorf("%s.png is %v, want 64×64", s, b)
		}
		if other, ok := seen[string(p)]; ok {
			t.Errorf("%s and %s have the same icon", s, other)
		}
		seen[string(p)] = s
		ico := Icon(s, "windows")
		var hdr struct {
			Reserved, Type, Count uint16
			W, H, Colors, _       uint8
			Planes, BPP           uint16
			Size, Offset          uint32
		}
		if err := binary.Read(bytes.NewReader(ico), binary.LittleEndian, &hdr); err != nil {
			t.Fatalf("%s.ico: %v", s, err)
		}
		if hdr.Type != 1 || hdr.Count != 1 || hdr.W != 64 || int(hdr.Offset)+int(hdr.Size) != len(ico) || !bytes.Equal(ico[hdr.Offset:], p) {
			t.Errorf("%s.ico is not one 64×64 PNG image: %+v", s, hdr)
		}
	}
}

// notifier is the Changed() idiom of the broker and the guard.
type notifier struct {
	mu sync.Mutex
	ch chan struct{}
}

func (n *notifier) Changed() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *notifier) notifyLocked() {
	if n.ch != nil {
		close(n.ch)
	}
	n.ch = make(chan struct{})
}

type fakeProfiles struct {
	notifier
	profiles []broker.Profile
	pending  []broker.PendingProfile
}

func (f *fakeProfiles) Profiles() []broker.Profile {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]broker.Profile(nil), f.profiles...)
}

func (f *fakeProfiles) Pending() []broker.PendingProfile {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]broker.PendingProfile(nil), f.pending...)
}

func (f *fakeProfiles) set(ps []broker.Profile, pending []broker.PendingProfile) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.profiles, f.pending = ps, pending
	f.notifyLocked()
}

type fakeGuard struct {
	notifier
	paused  bool
	pending []policy.Request
	err     error
}

func (g *fakeGuard) Paused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.paused
}

func (g *fakeGuard) SetPaused(p bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.err != nil {
		return g.err
	}
	g.paused = p
	g.notifyLocked()
	return nil
}

func (g *fakeGuard) Pending() []policy.Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]policy.Request(nil), g.pending...)
}

type fakeClients struct {
	mu        sync.Mutex
	connected map[string]bool
	opts      []clients.Options
	err       error
}

func (f *fakeClients) List() []clients.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []clients.Status
	for _, c := range clients.All() {
		out = append(out, clients.Status{Client: c, Connected: f.connected[c.ID],
			Files: []clients.FileStatus{{Path: "/home/u/" + c.ID + ".json", Connected: f.connected[c.ID]}}})
	}
	return out
}

func (f *fakeClients) Connect(id string, o clients.Options) (clients.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts = append(f.opts, o)
	c, _ := clients.Lookup(id)
	if f.err != nil {
		return clients.Outcome{Client: c}, f.err
	}
	f.connected[id] = true
	return clients.Outcome{Client: c, Changed: true, Files: []clients.FileResult{{Path: "/home/u/" + id + ".json", Change: clients.Added}}}, nil
}

func (f *fakeClients) Disconnect(id string) (clients.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, _ := clients.Lookup(id)
	delete(f.connected, id)
	return clients.Outcome{Client: c, Changed: true, Files: []clients.FileResult{{Path: "/home/u/" + id + ".json", Change: clients.Removed}}}, nil
}

type fakeLogin struct {
	mu sync.Mutex
	on bool
}

func (l *fakeLogin) IsEnabled() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.on }
func (l *fakeLogin) Enable() error   { l.mu.Lock(); defer l.mu.Unlock(); l.on = true; return nil }
func (l *fakeLogin) Disable() error  { l.mu.Lock(); defer l.mu.Unlock(); l.on = false; return nil }

type fakeUI struct {
	views  chan View
	clicks chan Click
}

func (u *fakeUI) Show(v View)          { u.views <- v }
func (u *fakeUI) Clicks() <-chan Click { return u.clicks }

// want reads views until one satisfies ok.
func (u *fakeUI) want(t *testing.T, what string, ok func(View) bool) View {
	t.Helper()
	deadline := time.After(10 * time.Second)
	var last View
	for {
		select {
		case v := <-u.views:
			if ok(v) {
				return v
			}
			last = v
		case <-deadline:
			t.Fatalf("no view with %s; last: %+v", what, last)
		}
	}
}

// fakeWindow records what the tray asks of the window.
type fakeWindow struct {
	mu      sync.Mutex
	shown   int
	notices []string
}

func (w *fakeWindow) Show() { w.mu.Lock(); w.shown++; w.mu.Unlock() }

func (w *fakeWindow) Notify(kind, text string) {
	w.mu.Lock()
	w.notices = append(w.notices, kind+": "+text)
	w.mu.Unlock()
}

type rig struct {
	window   *fakeWindow
	profiles *fakeProfiles
	guard    *fakeGuard
	tl       *timeline.Store
	clients  *fakeClients
	login    *fakeLogin
	ui       *fakeUI
	done     chan error
}

func start(t *testing.T) *rig {
	tl, err := timeline.Open(filepath.Join(t.TempDir(), "timeline.db"), timeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	r := &rig{
		window: &fakeWindow{}, profiles: &fakeProfiles{}, guard: &fakeGuard{}, tl: tl,
		clients: &fakeClients{connected: map[string]bool{"cursor": true}}, login: &fakeLogin{},
		ui:   &fakeUI{views: make(chan View, 1000), clicks: make(chan Click)},
		done: make(chan error, 1),
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		r.done <- Run(ctx, Config{
			Profiles: r.profiles, Guard: r.guard, Activity: tl, Clients: r.clients,
			ConnectOptions: clients.Options{Executable: "/opt/tether"}, LoginItem: r.login, Window: r.window,
		}, r.ui)
	}()
	return r
}

func (r *rig) click(c Click) { r.ui.clicks <- c }

func clientItem(v View, id string) ClientItem {
	for _, c := range v.Clients {
		if c.ID == id {
			return c
		}
	}
	return ClientItem{}
}

func TestLoopFollowsTheDaemon(t *testing.T) {
	r := start(t)
	v := r.ui.want(t, "the first view", func(View) bool { return true })
	if v.State != Disconnected || !v.LoginAvailable || v.LoginItem || v.Paused || !v.WindowAvailable {
		t.Fatalf("first view = %+v", v)
	}
	if len(v.Clients) != len(clients.All()) || !clientItem(v, "cursor").Connected || clientItem(v, "claude-desktop").Connected {
		t.Fatalf("first view's clients = %+v", v.Clients)
	}

	r.profiles.set([]broker.Profile{profile("Work", true, 2)}, nil)
	r.ui.want(t, "connected", func(v View) bool { return v.State == Connected && v.Status == "1 profile · 2 shared tabs" })

	r.tl.Started(timeline.Entry{Tool: "browser_click"})
	r.ui.want(t, "acting", func(v View) bool { return v.State == Acting && strings.Contains(v.Tooltip, "browser_click") })
	// A refused call was never started: it does not end the running one.
	if _, err := r.tl.Record(context.Background(), timeline.Entry{Tool: "browser_evaluate", Outcome: timeline.Refused}); err != nil {
		t.Fatal(err)
	}
	if v := r.ui.want(t, "the view after the refusal", func(View) bool { return true }); v.State != Acting {
		t.Fatalf("a refused call ended the running one: %+v", v)
	}
	if _, err := r.tl.Record(context.Background(), timeline.Entry{Tool: "browser_click", Outcome: timeline.OK}); err != nil {
		t.Fatal(err)
	}
	r.ui.want(t, "connected after the call", func(v View) bool { return v.State == Connected })

	// A held call does not act while it waits, and a denied one never does.
	held := timeline.Entry{CallID: "h1", Tool: "browser_file_upload"}
	r.tl.Started(held)
	r.ui.want(t, "acting at the held call's start", func(v View) bool { return v.State == Acting })
	r.tl.Held(held, timeline.Hold{})
	r.ui.want(t, "not acting while held", func(v View) bool { return v.State == Connected })
	r.tl.Answered(held, string(policy.DenyOnce), policy.ByWindow)
	held.Outcome = timeline.Denied
	if _, err := r.tl.Record(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	r.tl.Started(timeline.Entry{Tool: "browser_click"})
	r.ui.want(t, "acting again", func(v View) bool { return v.State == Acting })
	if _, err := r.tl.Record(context.Background(), timeline.Entry{Tool: "browser_click", Outcome: timeline.OK}); err != nil {
		t.Fatal(err)
	}
	r.ui.want(t, "connected: the denied call left no count behind", func(v View) bool { return v.State == Connected })

	r.profiles.set([]broker.Profile{profile("Work", true, 2)}, []broker.PendingProfile{{ID: "x", Label: "New", Code: "K7M4PX"}})
	r.ui.want(t, "approval with the pairing code", func(v View) bool {
		return v.State == Approval && strings.Contains(v.Tooltip, `"New" code K7M4PX`)
	})
	r.guard.mu.Lock()
	r.guard.pending = []policy.Request{{ID: "1"}}
	r.guard.notifyLocked()
	r.guard.mu.Unlock()
	r.ui.want(t, "a held call", func(v View) bool {
		return v.State == Approval && strings.Contains(v.Status, "1 call to approve")
	})
}

func TestLoopActsOnClicks(t *testing.T) {
	r := start(t)
	r.ui.want(t, "the first view", func(View) bool { return true })

	r.click(Click{Kind: ClickOpen})
	r.ui.want(t, "the view after Open Tether", func(View) bool { return true })
	r.window.mu.Lock()
	if r.window.shown != 1 {
		t.Errorf("Open Tether showed the window %d times, want 1", r.window.shown)
	}
	r.window.mu.Unlock()

	r.click(Click{Kind: ClickPause})
	r.ui.want(t, "paused", func(v View) bool { return v.State == Paused && v.Paused })
	if !r.guard.Paused() {
		t.Fatal("the guard was not paused")
	}
	r.click(Click{Kind: ClickPause})
	r.ui.want(t, "resumed", func(v View) bool { return v.State == Disconnected && !v.Paused })

	r.click(Click{Kind: ClickConnect, Client: "claude-desktop"})
	v := r.ui.want(t, "claude-desktop checked", func(v View) bool { return clientItem(v, "claude-desktop").Connected })
	if !strings.HasPrefix(v.Notice, "Claude Desktop: connected") || !strings.Contains(v.Tooltip, v.Notice) {
		t.Errorf("notice %q, tooltip %q", v.Notice, v.Tooltip)
	}
	r.window.mu.Lock()
	if len(r.window.notices) != 1 || !strings.HasPrefix(r.window.notices[0], "info: Claude Desktop: added Tether in ") {
		t.Errorf("the window's notices after Connect: %q", r.window.notices)
	}
	r.window.mu.Unlock()
	if len(r.clients.opts) != 1 || r.clients.opts[0].Executable != "/opt/tether" {
		t.Errorf("Connect got %+v", r.clients.opts)
	}
	r.click(Click{Kind: ClickConnect, Client: "cursor"})
	v = r.ui.want(t, "cursor unchecked", func(v View) bool { return !clientItem(v, "cursor").Connected })
	if !strings.HasPrefix(v.Notice, "Cursor: disconnected") {
		t.Errorf("notice %q", v.Notice)
	}

	r.clients.mu.Lock()
	r.clients.err = errors.New("claude_desktop_config.json:3:1: invalid character")
	r.clients.mu.Unlock()
	r.click(Click{Kind: ClickConnect, Client: "cursor"})
	r.ui.want(t, "the error", func(v View) bool {
		return v.Notice == "Cursor: could not connect: claude_desktop_config.json:3:1: invalid character" && !clientItem(v, "cursor").Connected
	})

	r.guard.mu.Lock()
	r.guard.err = errors.New("disk full")
	r.guard.mu.Unlock()
	r.click(Click{Kind: ClickPause})
	r.ui.want(t, "the pause error", func(v View) bool { return strings.Contains(v.Notice, "disk full") && !v.Paused })

	r.click(Click{Kind: ClickLogin})
	r.ui.want(t, "login checked", func(v View) bool { return v.LoginItem && v.Notice == "" })
	r.click(Click{Kind: ClickLogin})
	r.ui.want(t, "login unchecked", func(v View) bool { return !v.LoginItem })

	// A change made outside the tray shows when the menu opens.
	r.clients.mu.Lock()
	r.clients.connected["zed"] = true
	r.clients.mu.Unlock()
	r.click(Click{Kind: MenuOpened})
	r.ui.want(t, "zed checked", func(v View) bool { return clientItem(v, "zed").Connected })

	r.click(Click{Kind: ClickQuit})
	select {
	case err := <-r.done:
		if err != nil {
			t.Fatalf("Run after Quit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Quit")
	}
}

// The acting icon lingers after a call so that a fast one shows at all.
func TestActingLingers(t *testing.T) {
	tl, err := timeline.Open(filepath.Join(t.TempDir(), "timeline.db"), timeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tl.Close()
	ui := &fakeUI{views: make(chan View, 100), clicks: make(chan Click)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go Run(ctx, Config{Profiles: &fakeProfiles{}, Guard: &fakeGuard{}, Activity: tl,
		Clients: &fakeClients{connected: map[string]bool{}}, Linger: 200 * time.Millisecond}, ui)
	ui.want(t, "the first view", func(v View) bool { return !v.LoginAvailable && !v.WindowAvailable })
	tl.Started(timeline.Entry{Tool: "browser_snapshot"})
	if _, err := tl.Record(ctx, timeline.Entry{Tool: "browser_snapshot", Outcome: timeline.Error}); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	ui.want(t, "acting", func(v View) bool { return v.State == Acting })
	ui.want(t, "the end of the linger", func(v View) bool { return v.State == Disconnected })
	if d := time.Since(ended); d < 150*time.Millisecond {
		t.Errorf("the acting icon went after %s, want about 200ms", d)
	}
}
