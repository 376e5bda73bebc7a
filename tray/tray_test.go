package tray

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"image/png"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/localclient/localclienttest"
)

func profile(label string, connected bool, tabs int) apitype.ProfileView {
	p := apitype.ProfileView{ID: label + "-id", Label: label, Slug: strings.ToLower(label), Status: "disconnected"}
	if connected {
		p.Status = "connected"
	}
	for i := range tabs {
		p.Tabs = append(p.Tabs, apitype.TabView{Number: i + 1})
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
		{"only disconnected profiles", Snapshot{Profiles: []apitype.ProfileView{gone}}, Disconnected, "No extension connected", "Tether: no extension connected"},
		{"one profile", Snapshot{Profiles: []apitype.ProfileView{work, gone}}, Connected, "1 profile · 2 shared tabs", "Tether: connected"},
		{"two profiles", Snapshot{Profiles: []apitype.ProfileView{work, home}}, Connected, "2 profiles · 5 shared tabs", "Tether: connected"},
		{"one tab", Snapshot{Profiles: []apitype.ProfileView{profile("A", true, 1)}}, Connected, "1 profile · 1 shared tab", "Tether: connected"},
		{"acting", Snapshot{Profiles: []apitype.ProfileView{work}, Running: 1, Tool: "browser_click"}, Acting, "1 profile · 2 shared tabs", "Tether: AI acting now (browser_click)"},
		{"pairing waits", Snapshot{PendingProfiles: 1}, Approval, "No extension connected · waiting for you: 1 profile to pair", "Tether: waiting for you: 1 profile to pair"},
		{"approval beats acting", Snapshot{Profiles: []apitype.ProfileView{work}, Running: 2, PendingCalls: 2}, Approval, "1 profile · 2 shared tabs · waiting for you: 2 calls to approve", "Tether: waiting for you: 2 calls to approve"},
		{"pairing shows codes", Snapshot{PendingProfiles: 2, Pairing: []apitype.PairingView{{Label: "Work", Code: "K7M4PX"}, {Label: "Work", Code: "ZZ9Q2R"}}}, Approval,
			`No extension connected · waiting for you: 2 profiles to pair ("Work" code K7M4PX, "Work" code ZZ9Q2R)`,
			`Tether: waiting for you: 2 profiles to pair ("Work" code K7M4PX, "Work" code ZZ9Q2R)`},
		{"both wait", Snapshot{PendingProfiles: 2, PendingCalls: 1}, Approval, "No extension connected · waiting for you: 2 profiles to pair, 1 call to approve", "Tether: waiting for you: 2 profiles to pair, 1 call to approve"},
		{"paused beats everything", Snapshot{Profiles: []apitype.ProfileView{work}, Paused: true, Running: 1, PendingCalls: 1}, Paused, "1 profile · 2 shared tabs", "Tether: AI access paused"},
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

type rig struct {
	daemon *localclienttest.Fake
	login  *fakeLogin
	ui     *fakeUI
	done   chan error
}

// clientList is the fake daemon's MCP clients: cursor connected.
func clientList(connected ...string) []apitype.Client {
	out := []apitype.Client{
		{ID: "claude-desktop", Name: "Claude Desktop", Path: "/home/u/claude_desktop_config.json", Installed: true},
		{ID: "cursor", Name: "Cursor", Path: "/home/u/.cursor/mcp.json", Installed: true},
		{ID: "zed", Name: "Zed", Path: "/home/u/.config/zed/settings.json", Installed: true},
	}
	for i := range out {
		for _, c := range connected {
			if out[i].ID == c {
				out[i].Connected = true
			}
		}
	}
	return out
}

func start(t *testing.T, linger time.Duration, login bool) *rig {
	f := localclienttest.New(t)
	f.SetAnswer("GET", apitype.PathClients, http.StatusOK, clientList("cursor"))
	r := &rig{
		daemon: f, ui: &fakeUI{views: make(chan View, 1000), clicks: make(chan Click)},
		done: make(chan error, 1),
	}
	cfg := Config{Client: f.Client(), Linger: linger}
	if login {
		r.login = &fakeLogin{}
		cfg.LoginItem = r.login
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { r.done <- Run(ctx, cfg, r.ui) }()
	return r
}

func (r *rig) click(c Click) { r.ui.clicks <- c }

// lastRequest is the newest request the fake daemon recorded.
func (r *rig) lastRequest(t *testing.T) localclienttest.Request {
	t.Helper()
	reqs := r.daemon.Requests()
	if len(reqs) == 0 {
		t.Fatal("the tray sent no request")
	}
	return reqs[len(reqs)-1]
}

func clientItem(v View, id string) ClientItem {
	for _, c := range v.Clients {
		if c.ID == id {
			return c
		}
	}
	return ClientItem{}
}

func TestLoopFollowsTheDaemon(t *testing.T) {
	r := start(t, 0, true)
	v := r.ui.want(t, "the first view", func(v View) bool { return v.WindowAvailable })
	if v.State != Disconnected || !v.LoginAvailable || v.LoginItem || v.Paused {
		t.Fatalf("first view = %+v", v)
	}
	if len(v.Clients) != 3 || !clientItem(v, "cursor").Connected || clientItem(v, "claude-desktop").Connected {
		t.Fatalf("first view's clients = %+v", v.Clients)
	}

	r.daemon.SetState(func(s *apitype.State) { s.Profiles = []apitype.ProfileView{profile("Work", true, 2)} })
	r.ui.want(t, "connected", func(v View) bool { return v.State == Connected && v.Status == "1 profile · 2 shared tabs" })

	r.daemon.Call("c1", apitype.PhaseStarted, apitype.TimelineEntry{Tool: "browser_click", Profile: "work"})
	r.ui.want(t, "acting", func(v View) bool { return v.State == Acting && strings.Contains(v.Tooltip, "browser_click") })
	// A refused call of another id does not end the running one.
	r.daemon.Call("c2", apitype.PhaseFinished, apitype.TimelineEntry{Tool: "browser_evaluate", Outcome: "refused"})
	r.daemon.SetState(func(s *apitype.State) {}) // one more view, after the refusal
	if v := r.ui.want(t, "the view after the refusal", func(View) bool { return true }); v.State != Acting {
		t.Fatalf("a refused call ended the running one: %+v", v)
	}
	r.daemon.Call("c1", apitype.PhaseFinished, apitype.TimelineEntry{Tool: "browser_click", Outcome: "ok"})
	r.ui.want(t, "connected after the call", func(v View) bool { return v.State == Connected })

	r.daemon.SetState(func(s *apitype.State) {
		s.Pairing = []apitype.PairingView{{ID: "x", Label: "New", Code: "K7M4PX"}}
	})
	r.ui.want(t, "approval with the pairing code", func(v View) bool {
		return v.State == Approval && strings.Contains(v.Tooltip, `"New" code K7M4PX`)
	})
	r.daemon.SetState(func(s *apitype.State) { s.Approvals = []apitype.Approval{{ID: "1"}} })
	r.ui.want(t, "a held call", func(v View) bool {
		return v.State == Approval && strings.Contains(v.Status, "1 call to approve")
	})
}

func TestLoopActsOnClicks(t *testing.T) {
	r := start(t, 0, true)
	r.ui.want(t, "the first view", func(v View) bool { return v.WindowAvailable })

	r.click(Click{Kind: ClickOpen})
	r.ui.want(t, "the view after Open Tether", func(View) bool { return true })
	if q := r.lastRequest(t); q.Method != "POST" || q.Path != apitype.PathWindowOpen {
		t.Errorf("Open Tether sent %+v, want POST %s", q, apitype.PathWindowOpen)
	}

	r.click(Click{Kind: ClickPause})
	r.ui.want(t, "paused", func(v View) bool { return v.State == Paused && v.Paused })
	if !r.daemon.State().Paused {
		t.Fatal("the daemon was not paused")
	}
	r.click(Click{Kind: ClickPause})
	r.ui.want(t, "resumed", func(v View) bool { return v.State == Disconnected && !v.Paused })

	claude := clientList("claude-desktop")[0]
	claude.Reload = "restart Claude Desktop"
	r.daemon.SetAnswer("POST", apitype.PathClientConnect, http.StatusOK, apitype.ClientOutcome{Changed: true, Client: claude})
	r.daemon.SetAnswer("GET", apitype.PathClients, http.StatusOK, clientList("cursor", "claude-desktop"))
	r.click(Click{Kind: ClickConnect, Client: "claude-desktop"})
	v := r.ui.want(t, "claude-desktop checked", func(v View) bool { return clientItem(v, "claude-desktop").Connected })
	if v.Notice != "Claude Desktop: connected; next: restart Claude Desktop" || !strings.Contains(v.Tooltip, v.Notice) {
		t.Errorf("notice %q, tooltip %q", v.Notice, v.Tooltip)
	}
	var req apitype.ClientRequest
	if q := r.lastRequest(t); q.Path != apitype.PathClientConnect || json.Unmarshal([]byte(q.Body), &req) != nil || req.ID != "claude-desktop" {
		t.Errorf("Connect sent %+v", q)
	}

	r.daemon.SetAnswer("POST", apitype.PathClientDisconnect, http.StatusOK, apitype.ClientOutcome{Changed: true, Client: clientList()[1]})
	r.daemon.SetAnswer("GET", apitype.PathClients, http.StatusOK, clientList("claude-desktop"))
	r.click(Click{Kind: ClickConnect, Client: "cursor"})
	v = r.ui.want(t, "cursor unchecked", func(v View) bool { return !clientItem(v, "cursor").Connected })
	if !strings.HasPrefix(v.Notice, "Cursor: disconnected") {
		t.Errorf("notice %q", v.Notice)
	}

	r.daemon.SetAnswer("POST", apitype.PathClientConnect, http.StatusConflict, apitype.Error{Error: "mcp.json:3:1: invalid character; fix the file, then connect again"})
	r.click(Click{Kind: ClickConnect, Client: "cursor"})
	r.ui.want(t, "the error", func(v View) bool {
		return v.Notice == "Cursor: could not connect: mcp.json:3:1: invalid character; fix the file, then connect again" && !clientItem(v, "cursor").Connected
	})

	r.daemon.SetAnswer("POST", apitype.PathPause, http.StatusInternalServerError, apitype.Error{Error: "disk full"})
	r.click(Click{Kind: ClickPause})
	r.ui.want(t, "the pause error", func(v View) bool { return strings.Contains(v.Notice, "disk full") && !v.Paused })

	r.click(Click{Kind: ClickLogin})
	r.ui.want(t, "login checked", func(v View) bool { return v.LoginItem && v.Notice == "" })
	r.click(Click{Kind: ClickLogin})
	r.ui.want(t, "login unchecked", func(v View) bool { return !v.LoginItem })

	// A change made outside the tray shows when the menu opens.
	r.daemon.SetAnswer("GET", apitype.PathClients, http.StatusOK, clientList("claude-desktop", "zed"))
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
	r := start(t, 200*time.Millisecond, false)
	r.ui.want(t, "the first view", func(v View) bool { return !v.LoginAvailable && v.WindowAvailable })
	r.daemon.Call("c1", apitype.PhaseStarted, apitype.TimelineEntry{Tool: "browser_snapshot"})
	r.daemon.Call("c1", apitype.PhaseFinished, apitype.TimelineEntry{Tool: "browser_snapshot", Outcome: "error"})
	ui := r.ui
	ui.want(t, "acting", func(v View) bool { return v.State == Acting })
	ended := time.Now()
	ui.want(t, "the end of the linger", func(v View) bool { return v.State == Disconnected })
	if d := time.Since(ended); d < 150*time.Millisecond {
		t.Errorf("the acting icon went after %s, want about 200ms", d)
	}
}
