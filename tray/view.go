package tray

import (
	"fmt"
	"strings"

	"github.com/tether-browser/tether/apitype"
)

// State is what the icon shows, most urgent first in Render's order.
type State string

// The icon states. Each has its own icon file in icons/.
const (
	// Paused: AI access is paused; every tool call is refused (red, pause bars).
	Paused State = "paused"
	// Approval: a browser profile waits for pairing, or a held call for the
	// user's answer (amber, "!").
	Approval State = "approval"
	// Acting: the AI is running a tool call right now (blue, "play").
	Acting State = "acting"
	// Connected: at least one browser profile's extension is connected (green).
	Connected State = "connected"
	// Disconnected: no extension is connected (grey ring).
	Disconnected State = "disconnected"
)

// States lists every state, most urgent first.
var States = []State{Paused, Approval, Acting, Connected, Disconnected}

// Snapshot is what the tray knows at one moment, read from the model of
// the daemon's local API.
type Snapshot struct {
	// Profiles are the known browser profiles (connected or not).
	Profiles []apitype.ProfileView
	// PendingProfiles wait for pairing.
	PendingProfiles int
	// Pairing are those profiles, oldest first: the status line and the
	// tooltip show each one's label and pairing code, so the user approves
	// (in the window or with `tether profiles approve CODE`) the one whose
	// code the browser's popup shows.
	Pairing []apitype.PairingView
	// PendingCalls are tool calls held for the user's answer.
	PendingCalls int
	// Paused is the kill switch.
	Paused bool
	// Running is the number of tool calls running now; Tool the last one started.
	Running int
	Tool    string
	// Clients are the MCP clients, in menu order.
	Clients []ClientItem
	// LoginItem is whether Tether starts at login; LoginAvailable whether
	// the menu offers it at all.
	LoginItem, LoginAvailable bool
	// WindowAvailable is whether there is a window to open.
	WindowAvailable bool
	// Notice is the outcome of the user's last action ("" for none).
	Notice string
}

// ClientItem is one MCP client in the "Connect to" submenu.
type ClientItem struct {
	// ID is the client's id, e.g. "claude-desktop".
	ID string
	// Name is its product name, the item's title.
	Name string
	// Connected puts a check mark on the item.
	Connected bool
	// Path is the config file Connect writes (the item's tooltip).
	Path string
}

// View is what the tray shows: the icon and every menu item's text and
// check mark. Render computes it; a UI applies it.
type View struct {
	State State
	// Status is the menu's first line, e.g. "2 profiles · 5 shared tabs".
	Status string
	// Tooltip is the icon's tooltip: the state in words and the notice.
	Tooltip string
	// Notice is the outcome of the user's last action, shown under the
	// status line ("" hides it).
	Notice  string
	Clients []ClientItem
	Paused  bool
	// LoginItem checks "Start at login"; LoginAvailable shows it.
	LoginItem, LoginAvailable bool
	// WindowAvailable shows "Open Tether".
	WindowAvailable bool
}

// Render computes the view of a snapshot. The icon shows the most urgent
// state: paused, then approval waiting, then AI acting now, then connected,
// then no extension.
func Render(s Snapshot) View {
	connected, tabs := 0, 0
	for _, p := range s.Profiles {
		if p.Status == "connected" {
			connected++
			tabs += len(p.Tabs)
		}
	}
	v := View{
		Notice: s.Notice, Clients: s.Clients, Paused: s.Paused,
		LoginItem: s.LoginItem, LoginAvailable: s.LoginAvailable, WindowAvailable: s.WindowAvailable,
	}
	var words string
	switch {
	case s.Paused:
		v.State, words = Paused, "AI access paused"
	case s.PendingProfiles+s.PendingCalls > 0:
		v.State, words = Approval, waiting(s.PendingProfiles, s.PendingCalls, s.Pairing)
	case s.Running > 0:
		v.State, words = Acting, "AI acting now"
		if s.Tool != "" {
			words += " (" + s.Tool + ")"
		}
	case connected > 0:
		v.State, words = Connected, "connected"
	default:
		v.State, words = Disconnected, "no extension connected"
	}
	if connected == 0 {
		v.Status = "No extension connected"
	} else {
		v.Status = plural(connected, "profile") + " · " + plural(tabs, "shared tab")
	}
	if v.State == Approval {
		v.Status += " · " + words
	}
	v.Tooltip = "Tether: " + words
	if s.Notice != "" {
		v.Tooltip += "\n" + s.Notice
	}
	return v
}

func waiting(profiles, calls int, pairing []apitype.PairingView) string {
	var parts []string
	if profiles > 0 {
		part := plural(profiles, "profile") + " to pair"
		if len(pairing) > 0 {
			var each []string
			for _, p := range pairing {
				each = append(each, fmt.Sprintf("%q code %s", p.Label, p.Code))
			}
			part += " (" + strings.Join(each, ", ") + ")"
		}
		parts = append(parts, part)
	}
	if calls > 0 {
		parts = append(parts, plural(calls, "call")+" to approve")
	}
	return "waiting for you: " + strings.Join(parts, ", ")
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
