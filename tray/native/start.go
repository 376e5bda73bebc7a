package native

import (
	"context"

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
