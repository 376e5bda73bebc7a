//go:build darwin

package dialog

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"

	"github.com/tether-browser/tether/apitype"
)

// AppKit must be used from the main thread; the main goroutine stays on
// it from here on.
func init() { runtime.LockOSThread() }

var loadAppKit = sync.OnceValue(func() error {
	_, err := purego.Dlopen("/System/Library/Frameworks/AppKit.framework/AppKit", purego.RTLD_GLOBAL|purego.RTLD_NOW)
	return err
})

// NSAlert returns NSAlertFirstButtonReturn (1000) for its first button,
// 1001 for the second, and so on.
const firstButton = 1000

// show is an NSAlert, called through the Objective-C runtime with purego
// (no cgo). Its buttons are Deny (first: the default, Return, for the
// reason given on the GTK dialog in gtk_linux.go), Always allow for this
// site and Allow once. Unlike GTK and Windows, Esc answers nothing: an
// NSAlert gives Esc only to a button titled Cancel, and a fourth button
// would be a fourth choice. So the alert stays until answered, or until
// the daemon kills its process when the call is decided elsewhere (the
// window's queue, the CLI, the timeout). The text is set as NSString,
// never as attributed or HTML text. The process is an accessory app (no
// Dock icon) and comes to the front; the alert floats above other windows.
func show(t Text) (string, error) {
	if err := loadAppKit(); err != nil {
		return "", fmt.Errorf("load AppKit: %w", err)
	}
	sel := objc.RegisterName
	nsString := func(s string) objc.ID {
		return objc.ID(objc.GetClass("NSString")).Send(sel("stringWithUTF8String:"), s+"\x00")
	}
	pool := objc.ID(objc.GetClass("NSAutoreleasePool")).Send(sel("new"))
	defer pool.Send(sel("drain"))

	app := objc.ID(objc.GetClass("NSApplication")).Send(sel("sharedApplication"))
	const accessory = 1 // NSApplicationActivationPolicyAccessory
	objc.Send[bool](app, sel("setActivationPolicy:"), accessory)
	app.Send(sel("activateIgnoringOtherApps:"), true)

	alert := objc.ID(objc.GetClass("NSAlert")).Send(sel("new"))
	defer alert.Send(sel("release"))
	var info strings.Builder
	for _, f := range t.Fields {
		info.WriteString(f.Label + ": " + f.Value + "\n")
	}
	if left := TimeLeft(t.Deadline, time.Now()); left != "" {
		info.WriteString("\n" + left)
	}
	alert.Send(sel("setMessageText:"), nsString(t.Heading))
	alert.Send(sel("setInformativeText:"), nsString(info.String()))
	const warning = 0 // NSAlertStyleWarning
	alert.Send(sel("setAlertStyle:"), warning)
	window := alert.Send(sel("window"))
	window.Send(sel("setTitle:"), nsString(t.Title))
	const floating = 3 // NSFloatingWindowLevel
	window.Send(sel("setLevel:"), floating)
	alert.Send(sel("addButtonWithTitle:"), nsString(LabelDeny))
	always := alert.Send(sel("addButtonWithTitle:"), nsString(LabelAlwaysSite))
	always.Send(sel("setEnabled:"), t.OneSite)
	once := alert.Send(sel("addButtonWithTitle:"), nsString(LabelAllowOnce))
	once.Send(sel("setKeyEquivalent:"), nsString(""))
	always.Send(sel("setKeyEquivalent:"), nsString(""))

	switch objc.Send[int](alert, sel("runModal")) {
	case firstButton:
		return apitype.Deny, nil
	case firstButton + 1:
		return apitype.AlwaysAllowSite, nil
	case firstButton + 2:
		return apitype.AllowOnce, nil
	}
	return Closed, nil
}
