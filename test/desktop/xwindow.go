package desktop

import (
	"fmt"
	"strconv"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// DeleteWindow asks a window to close the way a window manager's close
// button does, with a WM_DELETE_WINDOW client message (ICCCM §4.2.8.1,
// which xdotool cannot send: its windowclose destroys the window), and
// waits up to wait for what the window does: it returns "unmapped"
// (hidden) or "destroyed". window is xdotool's decimal id. It needs no
// testing.TB, so that the bench uses it too.
func DeleteWindow(display, window string, wait time.Duration) (string, error) {
	id, err := strconv.ParseUint(window, 10, 32)
	if err != nil {
		return "", fmt.Errorf("window id %q: %w", window, err)
	}
	win := xproto.Window(id)
	x, err := xgb.NewConnDisplay(display)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", display, err)
	}
	defer x.Close()
	// Hear the window's unmap or destruction on this connection.
	if err := xproto.ChangeWindowAttributesChecked(x, win, xproto.CwEventMask, []uint32{xproto.EventMaskStructureNotify}).Check(); err != nil {
		return "", fmt.Errorf("watch window %s: %w", window, err)
	}
	atom := func(name string) (xproto.Atom, error) {
		r, err := xproto.InternAtom(x, false, uint16(len(name)), name).Reply()
		if err != nil {
			return 0, fmt.Errorf("InternAtom %s: %w", name, err)
		}
		return r.Atom, nil
	}
	protocols, err := atom("WM_PROTOCOLS")
	if err != nil {
		return "", err
	}
	del, err := atom("WM_DELETE_WINDOW")
	if err != nil {
		return "", err
	}
	ev := xproto.ClientMessageEvent{
		Format: 32, Window: win, Type: protocols,
		Data: xproto.ClientMessageDataUnionData32New([]uint32{uint32(del), uint32(xproto.TimeCurrentTime), 0, 0, 0}),
	}
	if err := xproto.SendEventChecked(x, false, win, xproto.EventMaskNoEvent, string(ev.Bytes())).Check(); err != nil {
		return "", fmt.Errorf("send WM_DELETE_WINDOW to %s: %w", window, err)
	}
	got := make(chan string, 1)
	go func() {
		for {
			e, err := x.WaitForEvent()
			if e == nil && err == nil {
				got <- "connection closed"
				return
			}
			switch e := e.(type) {
			case xproto.UnmapNotifyEvent:
				if e.Window == win {
					got <- "unmapped"
					return
				}
			case xproto.DestroyNotifyEvent:
				if e.Window == win {
					got <- "destroyed"
					return
				}
			}
		}
	}()
	select {
	case what := <-got:
		return what, nil
	case <-time.After(wait):
		return "", fmt.Errorf("window %s neither hid nor closed within %s of WM_DELETE_WINDOW", window, wait)
	}
}
