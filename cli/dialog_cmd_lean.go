//go:build !desktop && !windows

package cli

import "fmt"

// runApprovalDialog refuses in the lean tether: the GTK (or AppKit)
// dialog is linked only into tether-desktop, so that the daemon and every
// AI app's bridge never load it (cli/build_split.go).
func runApprovalDialog([]string) error {
	return fmt.Errorf("the approval dialog is part of %s, not of this build; run %s approval-dialog", desktopName, desktopName)
}
