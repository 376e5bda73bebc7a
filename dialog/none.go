//go:build !windows && !darwin && !(linux && desktop)

package dialog

// show has no toolkit in this build: on Linux the GTK dialog is linked
// only into tether-desktop (-tags desktop), so that the lean tether never
// loads GTK.
func show(Text) (string, error) { return "", ErrUnavailable }
