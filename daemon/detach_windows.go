//go:build windows

package daemon

import "syscall"

// detachAttr starts the daemon without a console, in its own process group,
// so it outlives the AI app that launched `tether mcp`.
func detachAttr() *syscall.SysProcAttr {
	const detachedProcess = 0x00000008
	return &syscall.SysProcAttr{
		CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | detachedProcess,
		HideWindow:    true,
	}
}
