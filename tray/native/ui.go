// Package native puts package tray's menu on the desktop with
// fyne.io/systray: a StatusNotifierItem over D-Bus on Linux, a notification
// area icon on Windows, a status item on macOS. It owns only the widgets and
// the per-OS start-up (run_*.go); what they show is decided by package tray.
package native

import (
	"runtime"

	"fyne.io/systray"

	"github.com/tether-browser/tether/tray"
)

// Titles of the fixed menu items (the end-to-end test finds them by title).
const (
	TitleOpen    = "Open Tether"
	TitleConnect = "Connect to"
	TitlePause   = "Pause AI access"
	TitleLogin   = "Start at login"
	TitleQuit    = "Quit"
)

// ui is the tray.UI of the systray menu. Show runs on the event loop only;
// each item's clicks are forwarded by a goroutine of its own that always
// receives, so a click is never dropped while the loop is busy (systray
// drops a click nobody is receiving).
type ui struct {
	clicks  chan tray.Click
	status  *systray.MenuItem
	notice  *systray.MenuItem
	open    *systray.MenuItem
	connect *systray.MenuItem
	clients map[string]*systray.MenuItem
	pause   *systray.MenuItem
	login   *systray.MenuItem
	shown   bool
	last    tray.View
	// onShown, if set, is called after the first view is shown.
	onShown func()
}

// trayTitle is the tray item's Title (and its StatusNotifierItem Id).
const trayTitle = "Tether"

// newUI builds the menu, one "Connect to" item per client, and starts
// forwarding clicks. Call it once systray is ready.
func newUI(clientItems []tray.ClientItem) *ui {
	u := &ui{clicks: make(chan tray.Click, 64), clients: map[string]*systray.MenuItem{}}
	systray.SetTitle(trayTitle)
	u.status = systray.AddMenuItem("Tether", "")
	u.status.Disable()
	u.notice = systray.AddMenuItem("", "")
	u.notice.Disable()
	u.notice.Hide()
	systray.AddSeparator()
	u.open = systray.AddMenuItem(TitleOpen, "Show Tether's window: profiles, timeline, approvals")
	u.open.Hide()
	u.forward(u.open, tray.Click{Kind: tray.ClickOpen})
	u.connect = systray.AddMenuItem(TitleConnect, "Add Tether to an MCP client's config, or remove it")
	for _, c := range clientItems {
		it := u.connect.AddSubMenuItemCheckbox(c.Name, c.Path, c.Connected)
		u.clients[c.ID] = it
		u.forward(it, tray.Click{Kind: tray.ClickConnect, Client: c.ID})
	}
	u.pause = systray.AddMenuItemCheckbox(TitlePause, "Refuse every tool call until resumed", false)
	u.forward(u.pause, tray.Click{Kind: tray.ClickPause})
	u.login = systray.AddMenuItemCheckbox(TitleLogin, "Start Tether, in the tray, when you log in", false)
	u.forward(u.login, tray.Click{Kind: tray.ClickLogin})
	systray.AddSeparator()
	quit := systray.AddMenuItem(TitleQuit, "Stop Tether: AI apps lose the browser until it runs again")
	u.forward(quit, tray.Click{Kind: tray.ClickQuit})
	go func() {
		for range systray.TrayOpenedCh {
			u.clicks <- tray.Click{Kind: tray.MenuOpened}
		}
	}()
	return u
}

func (u *ui) forward(it *systray.MenuItem, c tray.Click) {
	go func() {
		for range it.ClickedCh {
			u.clicks <- c
		}
	}()
}

func (u *ui) Clicks() <-chan tray.Click { return u.clicks }

// Show applies what changed since the last view: every systray setter
// signals the desktop, so unchanged items are left alone.
func (u *ui) Show(v tray.View) {
	first := !u.shown
	u.shown = true
	old := u.last
	u.last = v
	if first || v.State != old.State {
		systray.SetIcon(tray.Icon(v.State, runtime.GOOS))
	}
	if first || v.Tooltip != old.Tooltip {
		systray.SetTooltip(v.Tooltip)
	}
	if first || v.Status != old.Status {
		u.status.SetTitle(v.Status)
	}
	if first || v.Notice != old.Notice {
		u.notice.SetTitle(v.Notice)
		if v.Notice == "" {
			u.notice.Hide()
		} else {
			u.notice.Show()
		}
	}
	was := map[string]bool{}
	for _, c := range old.Clients {
		was[c.ID] = c.Connected
	}
	for _, c := range v.Clients {
		it, ok := u.clients[c.ID]
		if !ok || (!first && was[c.ID] == c.Connected) {
			continue
		}
		setChecked(it, c.Connected)
	}
	if first || v.Paused != old.Paused {
		setChecked(u.pause, v.Paused)
	}
	if first || v.LoginItem != old.LoginItem || v.LoginAvailable != old.LoginAvailable {
		setChecked(u.login, v.LoginItem)
		if v.LoginAvailable {
			u.login.Show()
		} else {
			u.login.Hide()
		}
	}
	if first || v.WindowAvailable != old.WindowAvailable {
		if v.WindowAvailable {
			u.open.Show()
		} else {
			u.open.Hide()
		}
	}
	if first && u.onShown != nil {
		u.onShown()
	}
}

func setChecked(it *systray.MenuItem, on bool) {
	if on {
		it.Check()
	} else {
		it.Uncheck()
	}
}
