//go:build !darwin && !windows

package native

import (
	"context"
	"fmt"
	stdlog "log"
	"log/slog"
	"os"
	"strings"

	"github.com/godbus/dbus/v5"

	"github.com/tether-browser/tether/tray"
)

// Run shows the tray and runs its event loop until the user clicks Quit or
// ctx ends: Start, then its loop on the calling goroutine (used when there
// is no window, e.g. a D-Bus session without a display).
func Run(ctx context.Context, cfg tray.Config) error {
	return Start(cfg)(ctx)
}

// Start puts the tray on the desktop and returns its event loop, which runs
// until the user clicks Quit or ctx ends. On Linux the tray is a
// StatusNotifierItem on the D-Bus session bus, served from systray's own
// goroutines (systray.RunWithExternalLoop): the loop may run on any
// goroutine while the window's event loop owns the main thread. Without a
// session bus there is no tray, only the daemon (and the window): the loop
// logs it and waits for ctx.
func Start(cfg tray.Config) (loop func(ctx context.Context) error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Probe without autolaunch: godbus would otherwise spawn a dbus-daemon
	// (dbus-launch) for a session that has none.
	probe, err := dbus.SessionBusPrivateNoAutoStartup()
	if err != nil {
		return func(ctx context.Context) error {
			log.Warn("no D-Bus session bus: running without a tray icon", "error", err)
			<-ctx.Done()
			return nil
		}
	}
	host := trayHostRunning(probe)
	probe.Close()
	if !host {
		// systray registers its item with the watcher and says "systray
		// error: failed to register" through the standard logger when there
		// is none; the line below says it once, plainly.
		stdlog.SetFlags(0)
		stdlog.SetOutput(systrayLog{log})
	}
	item := fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid())
	return startTray(cfg, func() {
		if host {
			log.Info("tray ready", "tray_item", item)
			return
		}
		log.Warn("no tray host: nothing on this D-Bus session shows tray icons (no StatusNotifierWatcher: a KDE or other "+
			"panel, or GNOME with the AppIndicator extension), so Tether's icon is not shown; the daemon, the window and "+
			"AI apps work as usual, and the icon appears if a tray host starts later", "tray_item", item)
	})
}

// watcherName is the bus name of the tray host (the panel that shows
// StatusNotifierItems).
const watcherName = "org.kde.StatusNotifierWatcher"

// trayHostRunning reports whether a StatusNotifierWatcher owns its name on
// the session bus conn (a private connection, authenticated here). A bus
// that does not answer counts as having none.
func trayHostRunning(conn *dbus.Conn) bool {
	if conn.Auth(nil) != nil || conn.Hello() != nil {
		return false
	}
	var has bool
	err := conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, watcherName).Store(&has)
	return err == nil && has
}

// systrayLog takes the standard logger's lines (fyne.io/systray writes its
// errors there) into log: its "failed to register" with the missing tray
// host at debug level (Start already said it), anything else as a warning.
type systrayLog struct{ log *slog.Logger }

func (w systrayLog) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	if strings.Contains(line, "failed to register") {
		w.log.Debug(line)
	} else if line != "" {
		w.log.Warn(line)
	}
	return len(p), nil
}
