//go:build linux && desktop

package dialog

/*
#cgo pkg-config: gtk+-3.0
#include <stdlib.h>
#include "gtk_linux.h"
*/
import "C"

import (
	"errors"
	"runtime"
	"time"
	"unsafe"

	"github.com/tether-browser/tether/apitype"
)

// GTK must be called from the thread that initialised it; the main
// goroutine stays on the main thread from here on.
func init() { runtime.LockOSThread() }

// show is a GtkDialog with Deny, Always allow this app on this site and Allow once
// (mnemonics Alt+D, Alt+W, Alt+A). Deny is the default (Enter): the dialog
// appears unasked, over whatever the user is typing in, and a stray Enter
// must not let an AI act in their browser; Deny is also what the daemon
// does when nobody answers, so it loses nothing but a retry. Esc and the
// close button dismiss it without an answer (Closed). It is an ordinary
// top-level window kept above others, modal to nothing.
func show(t Text) (string, error) {
	if C.gtk_init_check(nil, nil) == 0 {
		return "", errors.New("cannot open a GTK window: no display (DISPLAY or WAYLAND_DISPLAY)")
	}
	title, heading := C.CString(t.Title), C.CString(t.Heading)
	defer C.free(unsafe.Pointer(title))
	defer C.free(unsafe.Pointer(heading))
	var deadline C.longlong
	if !t.Deadline.IsZero() {
		deadline = C.longlong(t.Deadline.UnixMilli())
	}
	oneSite := C.int(0)
	if t.OneSite {
		oneSite = 1
	}
	d := C.tether_dialog_new(title, heading, deadline, oneSite)
	for _, f := range t.Fields {
		k, v := C.CString(f.Label), C.CString(f.Value)
		C.tether_dialog_field(d, k, v)
		C.free(unsafe.Pointer(k))
		C.free(unsafe.Pointer(v))
	}
	switch C.tether_dialog_run(d) {
	case C.TETHER_DENY:
		return apitype.Deny, nil
	case C.TETHER_ALWAYS_SITE:
		return apitype.AlwaysAllowSite, nil
	case C.TETHER_ALLOW_ONCE:
		return apitype.AllowOnce, nil
	}
	return Closed, nil
}

// tetherTimeLeft is the countdown line for the C side (freed there).
//
//export tetherTimeLeft
func tetherTimeLeft(deadlineMs C.longlong) *C.char {
	return C.CString(TimeLeft(time.UnixMilli(int64(deadlineMs)), time.Now()))
}
