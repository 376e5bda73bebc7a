//go:build !darwin && !windows

package native

import (
	"context"
	"fmt"
	"log/slog"
	"os"

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
	probe.Close()
	return startTray(cfg, func() {
		log.Info("tray ready", "item", fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid()))
	})
}
