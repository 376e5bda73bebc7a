//go:build !desktop && !windows

package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/tether-browser/tether/clients"
)

// execDesktop replaces this process, bare tether from the build without
// the window, with tether-desktop next to it (same pid, same arguments and
// environment) when a display exists. It returns when it does not: no
// display, no tether-desktop (the tray then runs alone), or exec failed
// (said on stderr).
func execDesktop(args []string) {
	if !hasDisplay(runtime.GOOS, os.Getenv) {
		return
	}
	exe, err := clients.Executable()
	if err != nil {
		return
	}
	path := filepath.Join(filepath.Dir(exe), desktopName)
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return
	}
	err = syscall.Exec(path, append([]string{path}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "tether: could not start %s (%v); running without the window\n", path, err)
}
