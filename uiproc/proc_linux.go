package uiproc

import "syscall"

// setParentDeathSignal asks the kernel to SIGKILL the dialog when the
// thread that started it exits (prctl PR_SET_PDEATHSIG): with the Go
// runtime's threads that is, in practice, when the daemon dies.
func setParentDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
