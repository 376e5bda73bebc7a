//go:build !windows && !darwin && !(linux && desktop)

package dialog

import (
	"errors"
	"testing"
)

// In the lean build there is no dialog on Linux: Show says so.
func TestShowUnavailableWithoutToolkit(t *testing.T) {
	if _, err := Show(question()); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Show = %v, want ErrUnavailable", err)
	}
}
