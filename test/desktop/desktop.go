//go:build linux

// Package desktop drives a desktop session for end-to-end tests: a private
// D-Bus session bus, the tray's StatusNotifierItem and its
// com.canonical.dbusmenu menu (read with GetLayout, clicked with Event, as
// a panel does), and an Xvfb display for the window.
package desktop

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// The tray's D-Bus names.
const (
	ItemPath  = "/StatusNotifierItem"
	MenuPath  = "/StatusNotifierItem/menu"
	ItemIface = "org.kde.StatusNotifierItem"
	MenuIface = "com.canonical.dbusmenu"
)

// Wait bounds every wait on the desktop.
const Wait = 20 * time.Second

// SessionBus starts a private session bus and returns its address; it is
// stopped at cleanup.
func SessionBus(t testing.TB) string {
	out, err := exec.Command("dbus-launch", "--sh-syntax").Output()
	if err != nil {
		t.Fatalf("dbus-launch: %v", err)
	}
	addr := regexp.MustCompile(`DBUS_SESSION_BUS_ADDRESS='([^']+)'`).FindStringSubmatch(string(out))
	pid := regexp.MustCompile(`DBUS_SESSION_BUS_PID=(\d+)`).FindStringSubmatch(string(out))
	if addr == nil || pid == nil {
		t.Fatalf("dbus-launch printed %q", out)
	}
	t.Cleanup(func() {
		var n int
		fmt.Sscan(pid[1], &n)
		if proc, err := os.FindProcess(n); err == nil {
			proc.Kill()
		}
	})
	return addr[1]
}

// Menu calls com.canonical.dbusmenu.
type Menu struct {
	T   testing.TB
	Obj dbus.BusObject
}

type Node struct {
	ID       int32
	props    map[string]dbus.Variant
	Children []*Node
}

func (n *Node) Label() string {
	s, _ := n.props["label"].Value().(string)
	return s
}

func (n *Node) Toggle() int32 {
	v, _ := n.props["toggle-state"].Value().(int32)
	return v
}

// Has reports whether an item under n is labelled title (a prefix).
func (n *Node) Has(title string) bool {
	if strings.HasPrefix(n.Label(), title) {
		return true
	}
	for _, c := range n.Children {
		if c.Has(title) {
			return true
		}
	}
	return false
}

// Find returns the first node under n labelled title (a prefix), depth first.
func (n *Node) Find(t testing.TB, title string) *Node {
	t.Helper()
	var walk func(*Node) *Node
	walk = func(x *Node) *Node {
		if strings.HasPrefix(x.Label(), title) {
			return x
		}
		for _, c := range x.Children {
			if f := walk(c); f != nil {
				return f
			}
		}
		return nil
	}
	f := walk(n)
	if f == nil {
		t.Fatalf("no menu item %q", title)
	}
	return f
}

type rawLayout struct {
	ID       int32
	Props    map[string]dbus.Variant
	Children []dbus.Variant
}

func toNode(r rawLayout) *Node {
	n := &Node{ID: r.ID, props: r.Props}
	for _, c := range r.Children {
		var cr rawLayout
		if err := dbus.Store([]any{c.Value()}, &cr); err == nil {
			n.Children = append(n.Children, toNode(cr))
		}
	}
	return n
}

func (m *Menu) getLayout(parent int32) *Node {
	var rev uint32
	var r rawLayout
	if err := m.Obj.Call(MenuIface+".GetLayout", 0, parent, int32(-1), []string{}).Store(&rev, &r); err != nil {
		m.T.Fatalf("GetLayout: %v", err)
	}
	return toNode(r)
}

// Layout reads the whole menu. systray answers a panel's first GetLayout
// one level deep only (a workaround for libdbusmenu-gtk3), so submenus are
// read by their own id.
func (m *Menu) Layout() *Node {
	root := m.getLayout(0)
	for i, c := range root.Children {
		if c.props["children-display"].Value() == "submenu" && len(c.Children) == 0 {
			root.Children[i] = m.getLayout(c.ID)
		}
	}
	return root
}

// WaitFor reads the menu again at each signal of the item until ok.
func (m *Menu) WaitFor(sigs <-chan *dbus.Signal, what string, ok func(*Node) bool) {
	m.T.Helper()
	deadline := time.After(Wait)
	for !ok(m.Layout()) {
		select {
		case <-sigs: // LayoutUpdated, ItemsPropertiesUpdated, …: look again
		case <-deadline:
			m.T.Fatalf("the menu did not show %s within %s", what, Wait)
		}
	}
}

func (m *Menu) Click(id int32) {
	if err := m.Obj.Call(MenuIface+".Event", 0, id, "clicked", dbus.MakeVariant(""), uint32(0)).Err; err != nil {
		m.T.Fatalf("Event clicked %d: %v", id, err)
	}
}

type pixmap struct {
	W, H int32
	Pix  []byte
}

// IconColour names the colour of the icon's disc, off its centre (where
// the state's glyph is): each state has its own.
func IconColour(t testing.TB, item dbus.BusObject) string {
	t.Helper()
	var px []pixmap
	if err := item.StoreProperty(ItemIface+".IconPixmap", &px); err != nil {
		t.Fatal(err)
	}
	if len(px) != 1 || px[0].W != 64 || len(px[0].Pix) != 64*64*4 {
		t.Fatalf("IconPixmap: %d pixmaps", len(px))
	}
	i := (48*64 + 48) * 4
	a, r, g, b := px[0].Pix[i], px[0].Pix[i+1], px[0].Pix[i+2], px[0].Pix[i+3]
	if a != 0xff {
		return fmt.Sprintf("transparent (%d)", a)
	}
	for name, c := range map[string][3]byte{
		"grey": {0x8a, 0x8f, 0x98}, "green": {0x1f, 0xa8, 0x5a}, "blue": {0x1d, 0x6f, 0xe0},
		"amber": {0xf0, 0x9a, 0x0b}, "red": {0xd8, 0x32, 0x32},
	} {
		if [3]byte{r, g, b} == c {
			return name
		}
	}
	return fmt.Sprintf("#%02x%02x%02x", r, g, b)
}

// WaitIcon waits for NewIcon signals until the icon has the colour.
func WaitIcon(t testing.TB, sigs <-chan *dbus.Signal, item dbus.BusObject, colour string) {
	t.Helper()
	deadline := time.After(Wait)
	for {
		if c := IconColour(t, item); c == colour {
			return
		}
		select {
		case <-sigs: // NewIcon, LayoutUpdated, …: look again
		case <-deadline:
			t.Fatalf("the icon did not turn %s within %s (it is %s)", colour, Wait, IconColour(t, item))
		}
	}
}

// xvfbStarting is held while one Xvfb starts (see Xvfb).
var xvfbStarting sync.Mutex

// Xvfb starts a virtual X display for the test and returns its name, e.g.
// ":5", once it accepts clients. It picks a free display number itself
// (-displayfd). Readiness is the X server's own signal: started with
// SIGUSR1 ignored, it sends SIGUSR1 to its parent when ready (the protocol
// xinit uses; the display number alone comes too early for GTK). So one
// test process starts one Xvfb at a time: parallel tests wait their turn
// (xvfbStarting) until the one before is ready.
func Xvfb(t testing.TB) string {
	t.Helper()
	xvfbStarting.Lock()
	defer xvfbStarting.Unlock()
	ready := make(chan os.Signal, 1)
	signal.Notify(ready, syscall.SIGUSR1)
	defer signal.Stop(ready)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// exec keeps the shell's pid, so Xvfb's parent is this process.
	cmd := exec.Command("sh", "-c", `trap "" USR1; exec Xvfb -displayfd 3 -screen 0 1280x900x24 -nolisten tcp`)
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatalf("Xvfb: %v", err)
	}
	w.Close()
	// SIGTERM lets the server remove its socket and lock file.
	t.Cleanup(func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() })
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 16)
		n, _ := r.Read(b)
		got <- strings.TrimSpace(string(b[:n]))
	}()
	var display string
	for display == "" || ready != nil {
		select {
		case n := <-got:
			if n == "" {
				t.Fatal("Xvfb exited without a display number")
			}
			display = ":" + n
		case <-ready:
			ready = nil
		case <-time.After(Wait):
			t.Fatal("Xvfb did not start")
		}
	}
	return display
}

// Xdotool runs xdotool on display and returns its output.
func Xdotool(t testing.TB, display string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("xdotool", args...)
	cmd.Env = append(os.Environ(), "DISPLAY="+display)
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// WaitWindow waits until a visible window's title matches the regular
// expression name (xdotool search --sync) and returns its window id. A
// search that fails (xdotool exits on an X error, e.g. BadWindow when a
// window goes away while it walks the tree) is run again until Wait.
func WaitWindow(t testing.TB, display, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	var last string
	for ctx.Err() == nil {
		cmd := exec.CommandContext(ctx, "xdotool", "search", "--sync", "--onlyvisible", "--name", name)
		cmd.Env = append(os.Environ(), "DISPLAY="+display)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if f := strings.Fields(string(out)); err == nil && len(f) > 0 {
			return f[0]
		}
		last = fmt.Sprintf("%v %s", err, strings.TrimSpace(stderr.String()))
		select { // a failed search is retried, not spun on
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("no visible window named %q on %s within %s (last search: %s)", name, display, Wait, last)
	return ""
}

// Visible reports whether a visible window's title matches name now.
func Visible(t testing.TB, display, name string) bool {
	t.Helper()
	out, err := Xdotool(t, display, "search", "--onlyvisible", "--name", name)
	return err == nil && out != ""
}

// Tray is a process's tray icon as a panel sees it on the session bus.
type Tray struct {
	// Item is the StatusNotifierItem; Menu its com.canonical.dbusmenu menu,
	// at the path the item's Menu property names.
	Item dbus.BusObject
	Menu *Menu
	// Signals delivers every signal the item and menu send (NewIcon,
	// LayoutUpdated, …): wait on it before reading again.
	Signals <-chan *dbus.Signal
}

// TrayOf connects to the session bus at addr and returns the tray of the
// process pid (systray names its item org.kde.StatusNotifierItem-<pid>-1).
func TrayOf(t testing.TB, addr string, pid int) *Tray {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	name := fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", pid)
	if err := conn.AddMatchSignal(dbus.WithMatchSender(name)); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan *dbus.Signal, 256)
	conn.Signal(sigs)
	item := conn.Object(name, ItemPath)
	var menu dbus.ObjectPath
	if err := item.StoreProperty(ItemIface+".Menu", &menu); err != nil {
		t.Fatalf("the tray's StatusNotifierItem %s: %v", name, err)
	}
	if menu != MenuPath {
		t.Fatalf("the item's Menu is %s, want %s", menu, MenuPath)
	}
	return &Tray{Item: item, Menu: &Menu{T: t, Obj: conn.Object(name, menu)}, Signals: sigs}
}

// Close asks the window to close the way a window manager's close button
// does (DeleteWindow) and returns what it did: "unmapped" (hidden) or
// "destroyed". window is xdotool's decimal id.
func Close(t testing.TB, display, window string) string {
	t.Helper()
	what, err := DeleteWindow(display, window, Wait)
	if err != nil {
		t.Fatal(err)
	}
	return what
}

// Watcher is a StatusNotifierWatcher, the tray host a panel runs: a tray
// registers its item with it (RegisterStatusNotifierItem, the
// StatusNotifierItem specification of freedesktop.org).
type Watcher struct {
	// Registered receives each registered item's service name or path.
	Registered chan string
}

// RegisterStatusNotifierItem is the method a tray calls.
func (w *Watcher) RegisterStatusNotifierItem(item string) *dbus.Error {
	w.Registered <- item
	return nil
}

// StartWatcher owns org.kde.StatusNotifierWatcher on the session bus at
// addr and returns the watcher; the connection is closed at cleanup.
func StartWatcher(t testing.TB, addr string) *Watcher {
	t.Helper()
	conn, err := dbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	w := &Watcher{Registered: make(chan string, 4)}
	if err := conn.Export(w, "/StatusNotifierWatcher", "org.kde.StatusNotifierWatcher"); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName("org.kde.StatusNotifierWatcher", dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own the watcher's name: %v %v", reply, err)
	}
	return w
}
