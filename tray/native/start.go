package native

import (
	"context"
	"runtime"

	"fyne.io/systray"

	"github.com/tether-browser/tether/tray"
)

// startTray starts systray with systray.RunWithExternalLoop and returns the
// tray's event loop; onShown runs once the first view is shown. The menu is
// built in onReady: systray answers GetLayout only once onReady has
// returned, so a panel never sees a half-built menu.
func startTray(cfg tray.Config, onShown func()) (loop func(ctx context.Context) error) {
	var u *ui
	ready := make(chan struct{})
	// Before start: on Linux systray exports the item's properties from
	// what it holds then, while onReady runs beside it, and a setter called
	// before the export is done but after its values were read is lost (an
	// item with no Title, and an Id of "systray_<pid>" that panels cannot
	// remember it by; seen in `make test-dist`, 2026-12-03). The icon too:
	// a daemon starts with no extension connected, and the first view's
	// icon, if it is lost so, is this one.
	systray.SetTitle(trayTitle)
	systray.SetIcon(tray.Icon(tray.Disconnected, runtime.GOOS))
	start, end := systray.RunWithExternalLoop(func() {
		u = newUI(initialClients(cfg))
		u.onShown = onShown
		close(ready)
	}, nil)
	start()
	return func(ctx context.Context) error {
		defer end()
		select {
		case <-ready:
		case <-ctx.Done():
			return nil
		}
		return tray.Run(ctx, cfg, u)
	}
}
