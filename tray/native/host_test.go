//go:build linux

package native_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/test/desktop"
	"github.com/tether-browser/tether/test/e2e"
)

func needDBusLaunch(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("dbus-launch"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("dbus-launch is required in CI (apt-get install dbus-x11; make deps-test installs it)")
		}
		t.Skip("dbus-launch not found: install dbus-x11")
	}
}

// Bare `tether` on a session bus where no panel runs: one clear line says
// there is no tray host and what still works; no "tray ready", and not
// systray's own "failed to register".
func TestNoTrayHost(t *testing.T) {
	needDBusLaunch(t)
	bin := e2e.Binary(t)
	busAddr := desktop.SessionBus(t)
	home, cfgDir := t.TempDir(), t.TempDir()
	d := e2e.StartTether(t, bin, cfgDir, e2e.UserEnv(home, cfgDir, busAddr, ""))
	line, _, err := d.Log.WaitFor(0, wait, "no tray host")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"level=WARN", "StatusNotifierWatcher", "the daemon, the window and AI apps work as usual"} {
		if !strings.Contains(line, want) {
			t.Errorf("the no-host line lacks %q: %s", want, line)
		}
	}
	time.Sleep(500 * time.Millisecond) // systray's registration attempt runs beside the loop
	log := d.Log.String()
	if strings.Contains(log, "tray ready") || strings.Contains(log, "systray error") {
		t.Errorf("the log claims a tray or shows systray's error:\n%s", log)
	}
	if n := strings.Count(log, "no tray host"); n != 1 {
		t.Errorf("the no-host line is there %d times, want once", n)
	}
}

// With a tray host on the bus, the tray says "tray ready" and registers
// its item with it.
func TestTrayHost(t *testing.T) {
	needDBusLaunch(t)
	bin := e2e.Binary(t)
	busAddr := desktop.SessionBus(t)
	w := desktop.StartWatcher(t, busAddr)
	home, cfgDir := t.TempDir(), t.TempDir()
	d := e2e.StartTether(t, bin, cfgDir, e2e.UserEnv(home, cfgDir, busAddr, ""))
	if _, _, err := d.Log.WaitFor(0, wait, "tray ready", "tray_item="); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.Registered:
	case <-time.After(wait):
		t.Fatal("the tray never registered its item with the host")
	}
	if strings.Contains(d.Log.String(), "no tray host") {
		t.Errorf("no-host line with a host:\n%s", d.Log.String())
	}
}
