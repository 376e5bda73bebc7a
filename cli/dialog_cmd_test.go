//go:build !desktop && !windows

package cli

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The lean tether has no dialog and says where it is; the usage does not
// list the mode (only the daemon runs it).
func TestApprovalDialogNeedsDesktop(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainProcess$")
	cmd.Env = append(os.Environ(), "TETHER_TEST_MAIN=approval-dialog", "TETHER_CONFIG_DIR="+t.TempDir())
	cmd.Stdin = strings.NewReader(`{"id":"1","tool":"browser_click"}`)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Errorf("tether approval-dialog: %v, want exit 1", err)
	}
	if !strings.Contains(errOut.String(), "tether-desktop approval-dialog") || out.Len() > 0 {
		t.Errorf("stdout %q, stderr %q; want only a pointer to tether-desktop on stderr", out.String(), errOut.String())
	}
	if strings.Contains(usage, "approval-dialog") {
		t.Error("the usage lists approval-dialog")
	}
}
