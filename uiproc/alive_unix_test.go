//go:build unix

package uiproc

import "syscall"

// alive reports whether a process with this pid exists (a zombie counts:
// Ask must have reaped it).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
