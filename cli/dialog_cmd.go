//go:build desktop || windows

package cli

import (
	"fmt"
	"os"

	"github.com/tether-browser/tether/dialog"
)

// runApprovalDialog is `tether-desktop approval-dialog` (`tether.exe
// approval-dialog` on Windows), started by the daemon (package uiproc) for
// one held call: it reads the question as JSON on stdin, shows the native
// dialog and prints the answer as one JSON line ({"answer":"allow_once"},
// "always_allow_site", "deny" or "closed") on stdout. It starts no WebView.
// Hidden from the usage: people answer in the dialog, not run it.
func runApprovalDialog(args []string) error {
	if len(args) > 0 {
		return fmt.Errorf("approval-dialog takes no arguments (the question comes on stdin), not %q", args[0])
	}
	return dialog.Main(os.Stdin, os.Stdout)
}
