//go:build darwin || windows

package native

import (
	"context"

	"fyne.io/systray"

	"github.com/tether-browser/tether/tray"
)

// Run shows the tray and runs its event loop until the user clicks Quit or
// ctx ends, without a window. Call it from the main goroutine: on macOS and
// Windows the tray's native event loop must run on the main thread (systray
// locks the main goroutine to it), and with no window to pump that loop,
// systray.Run does it here while the tray's event loop runs beside it.
func Run(ctx context.Context, cfg tray.Config) error {
	errc := make(chan error, 1)
	systray.Run(func() {
		u := newUI(initialClients(cfg))
		if cfg.Logger != nil {
			u.onShown = func() { cfg.Logger.Info("tray ready") }
		}
		go func() {
			errc <- tray.Run(ctx, cfg, u)
			systray.Quit()
		}()
	}, nil)
	select {
	case err := <-errc:
		return err
	default:
		return nil
	}
}

// Start puts the tray on the desktop and returns its event loop, which runs
// until the user clicks Quit or ctx ends. Call Start on the main goroutine
// before the window's event loop (wails.Run) takes it over: it is
// systray.RunWithExternalLoop's start, the shape macOS needs (platform
// notes); the window's loop then pumps the tray's native events too, and
// the returned loop may run on any goroutine.
func Start(cfg tray.Config) (loop func(ctx context.Context) error) {
	return startTray(cfg, func() {
		if cfg.Logger != nil {
			cfg.Logger.Info("tray ready")
		}
	})
}
