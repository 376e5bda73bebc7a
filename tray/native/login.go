package native

import (
	"runtime"

	"github.com/emersion/go-autostart"
)

// LoginItem is the start-at-login entry: an XDG autostart file on Linux
// (~/.config/autostart/tether.desktop), a LaunchAgent on macOS, a Startup
// folder shortcut on Windows. It starts `exe --hidden`, so that a login
// starts Tether in the tray without opening a window. env (e.g.
// TETHER_CONFIG_DIR=… and TETHER_PORT=… when they are not the defaults) is
// passed through /usr/bin/env where there is one.
func LoginItem(exe string, env []string) *autostart.App {
	cmd := []string{exe, "--hidden"}
	if len(env) > 0 && runtime.GOOS != "windows" {
		cmd = append(append([]string{"/usr/bin/env"}, env...), cmd...)
	}
	return &autostart.App{Name: "tether", DisplayName: "Tether", Exec: cmd}
}
