//go:build !windows

package daemon

import "syscall"

// detachAttr starts the daemon in its own session, so it outlives the AI app
// that launched `tether mcp`.
func detachAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
