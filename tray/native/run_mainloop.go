//go:build darwin || windows

package native

import (
	"context"

	"fyne.io/systray"

	"github.com/tether-browser/tether/tray"
)

// Run shows the tray and runs its event loop until the user clicks Quit or
// ctx ends. Call it from the main goroutine: on macOS and Windows the tray's
// native event loop must run on the main thread (systray locks the main
// goroutine to it), and with no Wails window yet to pump that loop,
// systray.Run does it here while the tray's event loop runs beside it.
// Once the window lands, it owns the main thread and this becomes
// systray.RunWithExternalLoop started before wails.Run, as on Linux.
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
