//go:build desktop || windows

package cli

// execDesktop does nothing here: this build has the window (or, on
// Windows, cannot exec; tether.exe is built with the window there).
func execDesktop([]string) {}
