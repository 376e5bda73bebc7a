//go:build windows

package dialog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tether-browser/tether/apitype"
)

var (
	kernel32             = windows.NewLazySystemDLL("kernel32.dll")
	procCreateActCtxW    = kernel32.NewProc("CreateActCtxW")
	procActivateActCtx   = kernel32.NewProc("ActivateActCtx")
	procDeactivateActCtx = kernel32.NewProc("DeactivateActCtx")
	user32               = windows.NewLazySystemDLL("user32.dll")
	procSendMessageW     = user32.NewProc("SendMessageW")
	procSetWindowPos     = user32.NewProc("SetWindowPos")
	procSetForeground    = user32.NewProc("SetForegroundWindow")
)

// Task dialog constants (commctrl.h).
const (
	tdfAllowDialogCancellation = 0x0008
	tdfCallbackTimer           = 0x0800
	tdfSizeToContent           = 0x01000000
	tdWarningIcon              = 0xFFFF // MAKEINTRESOURCEW(-1)
	tdnCreated                 = 0
	tdnTimer                   = 4
	tdmClickButton             = 0x0400 + 102
	tdmUpdateElementText       = 0x0400 + 114
	tdeFooter                  = 2
	idCancel                   = 2
	idYes                      = 6
	idNo                       = 7

	buttonDeny       = 100
	buttonAlwaysSite = 101
	buttonAllowOnce  = 102
)

// show is a task dialog with three command buttons (Deny, Always allow
// for this site, Allow once); Deny is the default, for the reason given on
// the GTK dialog (gtk_linux.go). Esc and the close button dismiss it
// (Closed); so does its deadline. Page-derived text is plain: hyperlinks
// (the only markup a task dialog knows) are not enabled.
//
// TaskDialogIndirect exists only in Common Controls 6, which a process
// gets through a manifest; tether.exe is built by `go build`, without one,
// so show activates the manifest Windows ships for this purpose in
// shell32.dll (resource 124, the one the shell uses) before loading
// comctl32. When that fails, it falls back to a MessageBox: Yes allows
// once, No denies (the default), Cancel dismisses; "Always allow for this
// site" is then left to the Tether window, which the text says.
func show(t Text) (string, error) {
	runtime.LockOSThread() // an activation context belongs to its thread
	defer runtime.UnlockOSThread()
	if deactivate, err := activateCommonControls6(); err == nil {
		defer deactivate()
	}
	comctl32 := windows.NewLazySystemDLL("comctl32.dll")
	proc := comctl32.NewProc("TaskDialogIndirect")
	if proc.Find() != nil {
		return messageBox(t)
	}
	return taskDialog(proc, t)
}

func activateCommonControls6() (func(), error) {
	sys, err := windows.GetSystemDirectory()
	if err != nil {
		return nil, err
	}
	source, err := windows.UTF16PtrFromString(filepath.Join(sys, "shell32.dll"))
	if err != nil {
		return nil, err
	}
	dir, err := windows.UTF16PtrFromString(sys)
	if err != nil {
		return nil, err
	}
	// ACTCTXW (winbase.h), naturally aligned.
	type actCtx struct {
		size            uint32
		flags           uint32
		source          *uint16
		arch            uint16
		langID          uint16
		assemblyDir     *uint16
		resourceName    uintptr
		applicationName *uint16
		module          windows.Handle
	}
	const resourceNameValid, assemblyDirValid = 0x008, 0x004
	ac := actCtx{flags: resourceNameValid | assemblyDirValid, source: source, assemblyDir: dir, resourceName: 124}
	ac.size = uint32(unsafe.Sizeof(ac))
	h, _, err := procCreateActCtxW.Call(uintptr(unsafe.Pointer(&ac)))
	if windows.Handle(h) == windows.InvalidHandle {
		return nil, fmt.Errorf("CreateActCtxW: %w", err)
	}
	var cookie uintptr
	if ok, _, err := procActivateActCtx.Call(h, uintptr(unsafe.Pointer(&cookie))); ok == 0 {
		return nil, fmt.Errorf("ActivateActCtx: %w", err)
	}
	return func() { procDeactivateActCtx.Call(0, cookie) }, nil
}

// packed writes a structure of commctrl.h's task dialog section, which is
// declared under #include <pshpack1.h>: fields follow each other without
// padding, which a Go struct cannot express.
type packed struct{ b []byte }

func (p *packed) u32(v uint32) { p.b = binary.LittleEndian.AppendUint32(p.b, v) }
func (p *packed) ptr(v uintptr) {
	if unsafe.Sizeof(v) == 8 {
		p.b = binary.LittleEndian.AppendUint64(p.b, uint64(v))
	} else {
		p.b = binary.LittleEndian.AppendUint32(p.b, uint32(v))
	}
}

func taskDialog(proc *windows.LazyProc, t Text) (string, error) {
	var keep []*uint16 // what the packed bytes point to, kept alive until the call returns
	str := func(s string) uintptr {
		if s == "" {
			return 0
		}
		p, err := windows.UTF16PtrFromString(strings.ReplaceAll(s, "\x00", ""))
		if err != nil {
			return 0
		}
		keep = append(keep, p)
		return uintptr(unsafe.Pointer(p))
	}
	var buttons packed
	for _, b := range []struct {
		id    uint32
		label string
	}{{buttonDeny, LabelDeny}, {buttonAlwaysSite, LabelAlwaysSite}, {buttonAllowOnce, LabelAllowOnce}} {
		buttons.u32(b.id)
		buttons.ptr(str(b.label))
	}
	var content strings.Builder
	for _, f := range t.Fields {
		fmt.Fprintf(&content, "%s: %s\n", f.Label, f.Value)
	}
	if !t.OneSite {
		content.WriteString("\n" + LabelAlwaysSite + " allows it once: the call names no single site.")
	}
	footer := TimeLeft(t.Deadline, time.Now())
	if footer == "" {
		footer = " "
	}
	callback := windows.NewCallback(func(hwnd, msg, wparam, lparam, ref uintptr) uintptr {
		switch msg {
		case tdnCreated:
			const hwndTopmost, swpNoSize, swpNoMove = ^uintptr(0), 0x0001, 0x0002
			procSetWindowPos.Call(hwnd, hwndTopmost, 0, 0, 0, 0, swpNoSize|swpNoMove)
			procSetForeground.Call(hwnd)
		case tdnTimer:
			if t.Deadline.IsZero() {
				break
			}
			left, _ := windows.UTF16PtrFromString(TimeLeft(t.Deadline, time.Now()))
			procSendMessageW.Call(hwnd, tdmUpdateElementText, tdeFooter, uintptr(unsafe.Pointer(left)))
			runtime.KeepAlive(left)
			if !time.Now().Before(t.Deadline) {
				procSendMessageW.Call(hwnd, tdmClickButton, idCancel, 0)
			}
		}
		return 0 // S_OK
	})
	// TASKDIALOGCONFIG, field by field.
	var c packed
	c.u32(0)                                                                // cbSize, set below
	c.ptr(0)                                                                // hwndParent
	c.ptr(0)                                                                // hInstance
	c.u32(tdfAllowDialogCancellation | tdfCallbackTimer | tdfSizeToContent) // dwFlags
	c.u32(0)                                                                // dwCommonButtons
	c.ptr(str(t.Title))                                                     // pszWindowTitle
	c.ptr(tdWarningIcon)                                                    // pszMainIcon
	c.ptr(str(t.Heading))                                                   // pszMainInstruction
	c.ptr(str(content.String()))                                            // pszContent
	c.u32(3)                                                                // cButtons
	c.ptr(uintptr(unsafe.Pointer(&buttons.b[0])))                           // pButtons
	c.u32(buttonDeny)                                                       // nDefaultButton
	c.u32(0)                                                                // cRadioButtons
	c.ptr(0)                                                                // pRadioButtons
	c.u32(0)                                                                // nDefaultRadioButton
	c.ptr(0)                                                                // pszVerificationText
	c.ptr(0)                                                                // pszExpandedInformation
	c.ptr(0)                                                                // pszExpandedControlText
	c.ptr(0)                                                                // pszCollapsedControlText
	c.ptr(0)                                                                // hFooterIcon
	c.ptr(str(footer))                                                      // pszFooter
	c.ptr(callback)                                                         // pfCallback
	c.ptr(0)                                                                // lpCallbackData
	c.u32(0)                                                                // cxWidth
	binary.LittleEndian.PutUint32(c.b, uint32(len(c.b)))
	var pressed int32
	hr, _, _ := proc.Call(uintptr(unsafe.Pointer(&c.b[0])), uintptr(unsafe.Pointer(&pressed)), 0, 0)
	runtime.KeepAlive(keep)
	runtime.KeepAlive(buttons.b)
	if int32(hr) < 0 {
		return "", fmt.Errorf("TaskDialogIndirect: HRESULT %#x", uint32(hr))
	}
	switch pressed {
	case buttonDeny:
		return apitype.Deny, nil
	case buttonAlwaysSite:
		if t.OneSite {
			return apitype.AlwaysAllowSite, nil
		}
		return apitype.AllowOnce, nil
	case buttonAllowOnce:
		return apitype.AllowOnce, nil
	}
	return Closed, nil
}

func messageBox(t Text) (string, error) {
	var text strings.Builder
	text.WriteString(t.Heading + "\n\n")
	for _, f := range t.Fields {
		fmt.Fprintf(&text, "%s: %s\n", f.Label, f.Value)
	}
	text.WriteString("\nYes: allow once. No: deny. Cancel: decide in the Tether window, which also offers to always allow it for this site.\n")
	text.WriteString(TimeLeft(t.Deadline, time.Now()))
	body, err := windows.UTF16PtrFromString(strings.ReplaceAll(text.String(), "\x00", ""))
	if err != nil {
		return "", err
	}
	title, err := windows.UTF16PtrFromString(strings.ReplaceAll(t.Title, "\x00", ""))
	if err != nil {
		return "", err
	}
	const flags = windows.MB_YESNOCANCEL | windows.MB_ICONWARNING | windows.MB_DEFBUTTON2 | windows.MB_TOPMOST | windows.MB_SETFOREGROUND
	ret, err := windows.MessageBox(0, body, title, flags)
	switch ret {
	case idYes:
		return apitype.AllowOnce, nil
	case idNo:
		return apitype.Deny, nil
	case idCancel:
		return Closed, nil
	}
	return "", errors.Join(errors.New("MessageBox failed"), err)
}
