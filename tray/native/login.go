package native

import (
	"runtime"

	"github.com/emersion/go-autostart"
)

// LoginItem is the start-at-login entry: an XDG autostart file on Linux
// (~/.config/autostart/tether.desktop), a LaunchAgent on macOS, a Startup
// folder shortcut on Windows. It starts `exe --hidden`, so that a login
// starts Tether in the tray without opening a window. configDir, when not
// empty (a config dir other than the default), is passed as
// TETHER_CONFIG_DIR through /usr/bin/env where there is one.
func LoginItem(exe, configDir string) *autostart.App {
	cmd := []string{exe, "--hidden"}
	if configDir != "" && runtime.GOOS != "windows" {
		cmd = append([]string{"/usr/bin/env", "TETHER_CONFIG_DIR=" + configDir}, cmd...)
	}
	return &autostart.App{Name: "tether", DisplayName: "Tether", Exec: cmd}
}
