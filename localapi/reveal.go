package localapi

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// revealDir opens dir in the file manager of the daemon's session:
// open(1) on macOS, explorer on Windows, xdg-open elsewhere. A quick
// failure (no file manager: xdg-open exits 3) is returned; one still
// running after 5 s is taken to have opened it.
func revealDir(dir string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", dir)
	case "windows":
		cmd = exec.Command("explorer", dir)
	default:
		cmd = exec.Command("xdg-open", dir)
	}
	var out strings.Builder
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", cmd.Path, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil && runtime.GOOS != "windows" { // explorer exits 1 even when it opened the folder
			return fmt.Errorf("%s: %v %s", filepath.Base(cmd.Path), err, strings.TrimSpace(out.String()))
		}
	case <-time.After(5 * time.Second):
	}
	return nil
}
