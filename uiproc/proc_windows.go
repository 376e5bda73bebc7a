package uiproc

import "os/exec"

// setProcessGroup does nothing on Windows: the dialog is one process
// (tether.exe approval-dialog), and TerminateProcess ends it.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup terminates the dialog's process.
func killProcessGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }
