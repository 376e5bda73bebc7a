// Package tray is Tether's tray menu: the icon that says what the daemon is
// doing (no extension, connected, AI acting now, approval waiting, paused)
// and the menu that connects MCP clients, pauses AI access, turns on
// start-at-login and quits.
//
// It is a thin client of the daemon's in-process API, the way tailscale's
// client/systray is: it reads and changes state only through the small
// interfaces below (which *broker.Broker, *policy.Guard, *timeline.Store
// and clients.Host satisfy), and one event loop (Run) selects over the
// menu's clicks, the broker's and guard's change channels, the timeline's
// live events and the context. It draws nothing itself: a UI (package
// tray/native, fyne.io/systray) applies the View that Render computes and
// delivers clicks, so tests drive the loop with fakes.
package tray

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/timeline"
)

// Profiles is the registry of browser profiles (*broker.Broker).
type Profiles interface {
	Profiles() []broker.Profile
	Pending() []broker.PendingProfile
	// Changed is closed at the next change of the registry.
	Changed() <-chan struct{}
}

// Guard is the pause switch and the approval queue (*policy.Guard).
type Guard interface {
	Paused() bool
	SetPaused(paused bool) error
	Pending() []policy.Request
	// Changed is closed at the next change of the queue or the switch.
	Changed() <-chan struct{}
}

// Activity is the timeline's live stream (*timeline.Store).
type Activity interface {
	Subscribe(buffer int) *timeline.Subscription
}

// Clients edits MCP clients' config files (clients.Host).
type Clients interface {
	List() []clients.Status
	Connect(id string, o clients.Options) (clients.Outcome, error)
	Disconnect(id string) (clients.Outcome, error)
}

// LoginItem is the start-at-login entry (*autostart.App).
type LoginItem interface {
	IsEnabled() bool
	Enable() error
	Disable() error
}

// ClickKind names a menu item.
type ClickKind int

// The menu items a user can click.
const (
	// ClickConnect: an item of "Connect to ▸" (Click.Client names it).
	ClickConnect ClickKind = iota + 1
	// ClickPause: "Pause AI access".
	ClickPause
	// ClickLogin: "Start at login".
	ClickLogin
	// ClickQuit: "Quit".
	ClickQuit
	// ClickOpen: "Open Tether" shows the window.
	ClickOpen
	// MenuOpened: the user opened the menu; files the tray does not watch
	// (client configs, the login item) are read again.
	MenuOpened
)

// Click is one menu click.
type Click struct {
	Kind ClickKind
	// Client is the client's id, for ClickConnect.
	Client string
}

// UI shows views and reports clicks: the native tray, or a test's fake.
type UI interface {
	// Show applies a view; it is called from the event loop after every
	// change, often with an unchanged view, and must not block for long.
	Show(View)
	// Clicks delivers the user's clicks. It must not drop any.
	Clicks() <-chan Click
}

// Window is Tether's window (*app.Window), as the tray sees it.
type Window interface {
	// Show shows and raises the window.
	Show()
	// Notify shows a notice in the window; kind is "info" or "error".
	Notify(kind, text string)
}

// Config configures Run.
type Config struct {
	// Profiles, Guard and Activity are the daemon's in-process API.
	Profiles Profiles
	Guard    Guard
	Activity Activity
	// Clients edits MCP clients' configs; Connect writes ConnectOptions
	// (normally a stdio entry running this binary with "mcp").
	Clients        Clients
	ConnectOptions clients.Options
	// LoginItem is the start-at-login entry; nil hides "Start at login".
	LoginItem LoginItem
	// Window is the window "Open Tether" shows, where the outcome of a
	// Connect click is also shown; nil hides "Open Tether".
	Window Window
	// OnQuit, if set, runs when the user clicks Quit, before Run returns.
	OnQuit func()
	// Linger keeps the "AI acting now" icon this long after the last call
	// ends, so that a fast call is seen at all (0: none).
	Linger time.Duration
	// Logger receives the outcome of every action.
	Logger *slog.Logger
}

// Run is the tray's event loop. It shows the current view, then waits for
// a click, a change of the broker or the guard, a timeline event or the end
// of ctx, and shows the new view. It returns nil when the user clicks Quit
// (the caller then stops the daemon) or ctx ends.
func Run(ctx context.Context, cfg Config, ui UI) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &loop{cfg: cfg, log: log}
	sub := cfg.Activity.Subscribe(256)
	defer sub.Unsubscribe()
	t.readClients()
	t.readLogin()
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	lingering := false
	for {
		// Take the change channels before reading the state they guard,
		// so that no change between the two is missed.
		profilesChanged := cfg.Profiles.Changed()
		guardChanged := cfg.Guard.Changed()
		snap := t.snapshot()
		if lingering && snap.Running == 0 {
			snap.Running = 1
		}
		ui.Show(Render(snap))
		select {
		case <-ctx.Done():
			return nil
		case <-profilesChanged:
		case <-guardChanged:
		case ev, ok := <-sub.C:
			if !ok {
				return fmt.Errorf("the timeline closed its event stream")
			}
			if t.event(ev) && t.running == 0 && cfg.Linger > 0 {
				linger.Reset(cfg.Linger)
				lingering = true
			}
		case <-linger.C:
			lingering = false
		case c := <-ui.Clicks():
			if c.Kind == ClickQuit {
				log.Info("quit from the tray")
				if cfg.OnQuit != nil {
					cfg.OnQuit()
				}
				return nil
			}
			t.click(c)
		}
	}
}

// loop is the event loop's state.
type loop struct {
	cfg     Config
	log     *slog.Logger
	running int    // calls started and not yet recorded
	tool    string // the last started call's tool
	clients []ClientItem
	login   bool
	notice  string
}

func (t *loop) snapshot() Snapshot {
	pairing := t.cfg.Profiles.Pending()
	return Snapshot{
		Profiles:        t.cfg.Profiles.Profiles(),
		PendingProfiles: len(pairing),
		Pairing:         pairing,
		PendingCalls:    len(t.cfg.Guard.Pending()),
		Paused:          t.cfg.Guard.Paused(),
		Running:         t.running,
		Tool:            t.tool,
		Clients:         t.clients,
		LoginItem:       t.login,
		LoginAvailable:  t.cfg.LoginItem != nil,
		WindowAvailable: t.cfg.Window != nil,
		Notice:          t.notice,
	}
}

// event counts running calls; it reports whether a running call ended.
// Refused and paused calls are recorded without a start; a held call,
// announced as started, does not act while it waits, and acts again only
// when its answer lets it run (a denied one is recorded as denied).
func (t *loop) event(ev timeline.Event) bool {
	if ev.Dropped > 0 {
		t.running = 0 // missed events: don't leave the icon stuck on "acting"
	}
	switch ev.Kind {
	case timeline.CallStarted:
		t.running++
		t.tool = ev.Entry.Tool
	case timeline.CallHeld:
		if t.running > 0 {
			t.running--
			return true
		}
	case timeline.CallAnswered:
		if allows(ev.Answer) {
			t.running++
		}
	case timeline.CallRecorded:
		if ev.Entry.Outcome == timeline.OK || ev.Entry.Outcome == timeline.Error {
			if t.running > 0 {
				t.running--
				return true
			}
		}
	}
	return false
}

// allows reports whether a held call's answer lets it run.
func allows(answer string) bool {
	return answer == string(policy.AllowOnce) || answer == string(policy.AlwaysAllowSite)
}

func (t *loop) readClients() {
	list := t.cfg.Clients.List()
	items := make([]ClientItem, 0, len(list))
	for _, s := range list {
		it := ClientItem{ID: s.Client.ID, Name: s.Client.Name, Connected: s.Connected && len(s.Files) > 0}
		if len(s.Files) > 0 {
			it.Path = s.Files[0].Path
		}
		items = append(items, it)
	}
	t.clients = items
}

func (t *loop) readLogin() {
	if t.cfg.LoginItem != nil {
		t.login = t.cfg.LoginItem.IsEnabled()
	}
}

func (t *loop) click(c Click) {
	switch c.Kind {
	case ClickConnect:
		t.connect(c.Client)
		t.readClients()
	case ClickPause:
		paused := !t.cfg.Guard.Paused()
		if err := t.cfg.Guard.SetPaused(paused); err != nil {
			t.fail("could not change the pause switch", err)
			return
		}
		t.log.Info("pause switch set from the tray", "paused", paused)
		t.notice = ""
	case ClickLogin:
		if t.cfg.LoginItem == nil {
			return
		}
		enable := !t.cfg.LoginItem.IsEnabled()
		var err error
		if enable {
			err = t.cfg.LoginItem.Enable()
		} else {
			err = t.cfg.LoginItem.Disable()
		}
		t.readLogin()
		if err != nil {
			t.fail("could not change start at login", err)
			return
		}
		t.log.Info("start at login set from the tray", "enabled", t.login)
		t.notice = ""
	case ClickOpen:
		if t.cfg.Window != nil {
			t.cfg.Window.Show()
		}
	case MenuOpened:
		t.readClients()
		t.readLogin()
	}
}

// connect connects a client, or disconnects it when already connected, and
// reports the outcome as the notice and in the log.
func (t *loop) connect(id string) {
	var item ClientItem
	for _, it := range t.clients {
		if it.ID == id {
			item = it
		}
	}
	if item.ID == "" {
		t.fail("unknown client "+id, nil)
		return
	}
	var (
		o   clients.Outcome
		err error
	)
	if item.Connected {
		o, err = t.cfg.Clients.Disconnect(id)
	} else {
		o, err = t.cfg.Clients.Connect(id, t.cfg.ConnectOptions)
	}
	verb := map[bool]string{true: "disconnect", false: "connect"}[item.Connected]
	if err != nil {
		t.fail(fmt.Sprintf("%s: could not %s", item.Name, verb), err)
		return
	}
	var path string
	if len(o.Files) > 0 {
		path = o.Files[0].Path
	}
	t.notice = fmt.Sprintf("%s: %sed", item.Name, verb)
	if o.Changed && o.Client.Reload != "" {
		t.notice += "; next: " + o.Client.Reload
	}
	t.log.Info("client config changed from the tray", "client", id, "action", verb, "changed", o.Changed, "path", path)
	if t.cfg.Window != nil {
		t.cfg.Window.Notify("info", strings.Join(o.Lines(!item.Connected), "\n"))
	}
}

func (t *loop) fail(what string, err error) {
	t.notice = what
	if err != nil {
		t.notice += ": " + err.Error()
	}
	if t.cfg.Window != nil {
		t.cfg.Window.Notify("error", t.notice)
	}
	t.log.Warn("tray action failed", "error", t.notice)
}
