//go:build desktop

package cli

import (
	"context"

	"github.com/tether-browser/tether/app"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/extension"
	"github.com/tether-browser/tether/frontend"
	"github.com/tether-browser/tether/tray"
)

// This is the build with the window (-tags desktop,production, and
// webkit2_41 on Linux): bare tether opens it in-process.
func init() { newWindow = openWindow }

func openWindow(s daemon.Services, c windowConfig) appWindow {
	return desktopWindow{app.NewWindow(app.Config{
		Profiles:       s.Broker,
		Guard:          s.Guard,
		Timeline:       s.Timeline,
		Clients:        c.Clients,
		ConnectOptions: c.ConnectOptions,
		Extension:      extension.Dist(),
		ExtensionDir:   c.Paths.UnpackedExtension(),
		ExtensionID:    broker.DefaultExtensionID,
		Port:           c.Port,
		Executable:     c.Executable,
		BrowserEnv:     c.BrowserEnv,
		Version:        versionString(),
		Logger:         c.Logger,
	})}
}

type desktopWindow struct{ *app.Window }

func (w desktopWindow) Run(ctx context.Context, hidden bool) error {
	return w.Window.Run(ctx, app.WindowOptions{Assets: frontend.Dist(), StartHidden: hidden, Icon: tray.Icon(tray.Connected, "linux")})
}
