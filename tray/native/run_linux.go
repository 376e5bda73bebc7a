//go:build !darwin && !windows

package native

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"fyne.io/systray"
	"github.com/godbus/dbus/v5"

	"github.com/tether-browser/tether/tray"
)

// Run shows the tray and runs its event loop until the user clicks Quit or
// ctx ends. On Linux the tray is a StatusNotifierItem on the D-Bus session
// bus, served from systray's own goroutines: systray.RunWithExternalLoop is
// started and the calling goroutine runs the loop (a Wails window would own
// the main thread instead). Without a session bus there is no tray, only
// the daemon: Run logs it and waits for ctx.
func Run(ctx context.Context, cfg tray.Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// Probe without autolaunch: godbus would otherwise spawn a dbus-daemon
	// (dbus-launch) for a session that has none.
	probe, err := dbus.SessionBusPrivateNoAutoStartup()
	if err != nil {
		log.Warn("no D-Bus session bus: running without a tray icon", "error", err)
		<-ctx.Done()
		return nil
	}
	probe.Close()
	// The menu is built in onReady: systray answers GetLayout only once
	// onReady has returned, so a panel never sees a half-built menu.
	var u *ui
	ready := make(chan struct{})
	start, end := systray.RunWithExternalLoop(func() {
		u = newUI(initialClients(cfg))
		u.onShown = func() { log.Info("tray ready", "item", fmt.Sprintf("org.kde.StatusNotifierItem-%d-1", os.Getpid())) }
		close(ready)
	}, nil)
	start()
	defer end()
	<-ready
	return tray.Run(ctx, cfg, u)
}
