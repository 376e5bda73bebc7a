// Package tray is Tether's tray menu: the icon that says what the daemon is
// doing (no extension, connected, AI acting now, approval waiting, paused)
// and the menu that opens the window, connects MCP clients, pauses AI
// access, turns on start-at-login and quits.
//
// It is a client of the daemon's local API, the way tailscale's
// client/systray is: it reads state only from a localclient.Model (the
// same model the window uses, built from the API's event stream) and
// changes it only through localclient.Client, and one event loop (Run)
// selects over the menu's clicks, the model's changes and the context. It
// draws nothing itself: a UI (package tray/native, fyne.io/systray)
// applies the View that Render computes and delivers clicks, so tests
// drive the loop with a fake UI and the one fake daemon
// (localclient/localclienttest).
package tray

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/localclient"
)

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
	// ClickOpen: "Open Tether" opens the window (its own process).
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

// Config configures Run.
type Config struct {
	// Client is the daemon's local API: the tray changes state through it
	// and Run builds its Model from it.
	Client *localclient.Client
	// LoginItem is the start-at-login entry; nil hides "Start at login".
	LoginItem LoginItem
	// OnQuit, if set, runs when the user clicks Quit, before Run returns.
	OnQuit func()
	// Linger keeps the "AI acting now" icon this long after the last call
	// ends, so that a fast call is seen at all (0: none).
	Linger time.Duration
	// Logger receives the outcome of every action.
	Logger *slog.Logger
}

// requestTimeout bounds one request of a click.
const requestTimeout = 10 * time.Second

// Run is the tray's event loop. It runs a localclient.Model of the
// daemon, shows the current view, then waits for a click, a change of the
// model or the end of ctx, and shows the new view. It returns nil when the
// user clicks Quit (the caller then stops the daemon) or ctx ends.
func Run(ctx context.Context, cfg Config, ui UI) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	model := localclient.NewModel(cfg.Client, localclient.ModelOptions{Logger: log})
	go model.Run(ctx)
	t := &loop{cfg: cfg, log: log, ctx: ctx}
	t.readClients()
	t.readLogin()
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	lingering := false
	ended := 0
	for {
		// Take the change channel before reading the view it guards, so
		// that no change between the two is missed.
		changed := model.Changed()
		view := model.View()
		if view.Ended > ended && len(view.Running) == 0 && cfg.Linger > 0 {
			linger.Reset(cfg.Linger)
			lingering = true
		}
		ended = view.Ended
		snap := t.snapshot(view)
		if lingering && snap.Running == 0 {
			snap.Running = 1
		}
		ui.Show(Render(snap))
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
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
			t.click(c, view)
		}
	}
}

// loop is the event loop's state besides the model.
type loop struct {
	cfg     Config
	log     *slog.Logger
	ctx     context.Context
	clients []ClientItem
	login   bool
	notice  string
}

func (t *loop) snapshot(v localclient.View) Snapshot {
	s := Snapshot{
		Profiles:        v.Profiles,
		PendingProfiles: len(v.Pairing),
		Pairing:         v.Pairing,
		PendingCalls:    len(v.Approvals),
		Paused:          v.Paused,
		Running:         len(v.Running),
		Clients:         t.clients,
		LoginItem:       t.login,
		LoginAvailable:  t.cfg.LoginItem != nil,
		WindowAvailable: v.Window,
		Notice:          t.notice,
		Tool:            v.LastTool,
	}
	return s
}

// request is a context for one request of a click.
func (t *loop) request() (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.ctx, requestTimeout)
}

func (t *loop) readClients() {
	ctx, cancel := t.request()
	defer cancel()
	list, err := t.cfg.Client.Clients(ctx)
	if err != nil {
		t.log.Warn("tray: could not list the MCP clients", "err", err)
		return
	}
	items := make([]ClientItem, 0, len(list))
	for _, c := range list {
		items = append(items, ClientItem{ID: c.ID, Name: c.Name, Connected: c.Connected, Path: c.Path})
	}
	t.clients = items
}

func (t *loop) readLogin() {
	if t.cfg.LoginItem != nil {
		t.login = t.cfg.LoginItem.IsEnabled()
	}
}

func (t *loop) click(c Click, v localclient.View) {
	switch c.Kind {
	case ClickConnect:
		t.connect(c.Client)
		t.readClients()
	case ClickPause:
		ctx, cancel := t.request()
		defer cancel()
		paused, err := t.cfg.Client.SetPaused(ctx, !v.Paused)
		if err != nil {
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
		ctx, cancel := t.request()
		defer cancel()
		if err := t.cfg.Client.OpenWindow(ctx); err != nil {
			t.fail("could not open the window", err)
		}
	case MenuOpened:
		t.readClients()
		t.readLogin()
	}
}

// connect connects a client, or disconnects it when already connected, and
// reports the outcome as the notice and in the log (the daemon tells the
// window).
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
	ctx, cancel := t.request()
	defer cancel()
	var (
		o   apitype.ClientOutcome
		err error
	)
	if item.Connected {
		o, err = t.cfg.Client.Disconnect(ctx, id)
	} else {
		o, err = t.cfg.Client.Connect(ctx, id)
	}
	verb := map[bool]string{true: "disconnect", false: "connect"}[item.Connected]
	if err != nil {
		t.fail(fmt.Sprintf("%s: could not %s", item.Name, verb), err)
		return
	}
	t.notice = fmt.Sprintf("%s: %sed", item.Name, verb)
	if o.Changed && o.Client.Reload != "" {
		t.notice += "; next: " + o.Client.Reload
	}
	t.log.Info("client config changed from the tray", "client", id, "action", verb, "changed", o.Changed, "path", o.Client.Path)
}

func (t *loop) fail(what string, err error) {
	t.notice = what
	if err != nil {
		t.notice += ": " + err.Error()
	}
	t.log.Warn("tray action failed", "error", t.notice)
}
