package cli

import (
	"context"
	"path/filepath"
	"runtime"

	"github.com/tether-browser/tether/clients"
)

// Tether ships as two executables from this one source on Linux and macOS:
//
//   - tether (go build .): every command, the daemon and the tray, without
//     the window. Bare `tether`, `tether serve` and `tether mcp` (one per AI
//     app) run from it, so they do not load GTK and WebKit: linked into the
//     binary, those libraries alone took a daemon's idle RSS from 27 MB to
//     72 MB, and each stdio bridge's with it (BENCHMARKS.md).
//   - tether-desktop (go build -tags desktop,production,webkit2_41 .): the
//     same, with the window, which runs as its own process (`tether-desktop
//     window`, a client of the daemon's local API) that the daemon starts
//     next to the lean tether when the window is opened (uiproc.Window).
//
// On Windows the window's WebView2 is loaded at run time, not linked, so
// one tether.exe is built with the window.

// desktopName is the file name of the build with the window.
var desktopName = exeName("tether-desktop")

// leanName is the file name of the build without it.
var leanName = exeName("tether")

func exeName(base string) string {
	if runtime.GOOS == "windows" {
		return base + ".exe"
	}
	return base
}

// windowMain is `window`, the window process; nil in the build without it
// (window.go sets it).
var windowMain func(ctx context.Context, args []string) error

// commandExecutable is the executable that client configs, the login item
// and `tether browser` should run: this one, or, from the build with the
// window, the lean tether next to it when there is one (an AI app's bridge
// should not load WebKit).
func commandExecutable() (string, error) {
	exe, err := clients.Executable()
	if err != nil {
		return "", err
	}
	if filepath.Base(exe) == desktopName {
		if lean := filepath.Join(filepath.Dir(exe), leanName); regularFile(lean) {
			return lean, nil
		}
	}
	return exe, nil
}
