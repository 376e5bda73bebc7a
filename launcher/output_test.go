package launcher

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// The lines of a real headless start in a container (Chromium 14x): the
// D-Bus and zygote errors stay off the terminal, while what may matter
// shows.
func TestVisible(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"[15595:15644:1201/140727.645145:ERROR:dbus/bus.cc:405] Failed to connect to the bus: Failed to connect to socket /run/dbus/system_bus_socket: No such file or directory", false},
		{"[15595:15595:1201/140727.645232:ERROR:dbus/object_proxy.cc:572] Failed to call method: org.freedesktop.DBus.Properties.GetAll: object_path= /org/freedesktop/UPower/devices/DisplayDevice: unknown error type: ", false},
		{"[15595:15595:1201/140728.327450:ERROR:content/common/zygote/zygote_communication_linux.cc:313] Failed to send GetTerminationStatus message to zygote", false},
		{"[1:2:1201/140728.1:WARNING:chrome/browser/foo.cc:1] anything", false},
		{"[1:2:1201/140728.1:INFO:CONSOLE(1)] page said hi", false},
		{"[1:2:1201/140728.1:ERROR:ui/ozone/platform/x11/ozone_platform_x11.cc:250] Missing X server or $DISPLAY", true},
		{"[1:2:1201/140728.1:ERROR:chrome/browser/extensions/unpacked_installer.cc:100] Could not load extension from '/x'. Manifest file is missing or unreadable", true},
		{"[1:2:1201/140728.1:FATAL:content/browser/zygote_host/zygote_host_impl_linux.cc:128] No usable sandbox!", true},
		{"DevTools listening on ws://127.0.0.1:1/devtools/browser/x", true},
		{"/usr/bin/chromium: 9: [: 25276502016: unexpected operator", false},
		{"/usr/bin/chromium: 12: exec: /usr/lib/chromium/chromium: not found", true},
		{"   ", false},
	} {
		if got := Visible(tc.line); got != tc.want {
			t.Errorf("Visible(%.70q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}

// Every line goes to the file (up to MaxBrowserLog), the visible ones to
// the terminal too, lines split across writes included.
func TestBrowserOutput(t *testing.T) {
	var file, term bytes.Buffer
	o := &browserOutput{file: &file, term: &term}
	noise := "[1:2:1201/140727.1:ERROR:dbus/bus.cc:405] Failed to connect to the bus\n"
	real := "[1:2:1201/140727.1:ERROR:chrome/browser/extensions/unpacked_installer.cc:1] Could not load extension\n"
	fmt.Fprint(o, noise[:10])
	fmt.Fprint(o, noise[10:]+real[:5])
	fmt.Fprint(o, real[5:]+"no newline at the end")
	o.flush()
	if file.String() != noise+real+"no newline at the end\n" {
		t.Errorf("file: %q", file.String())
	}
	if term.String() != real+"no newline at the end\n" {
		t.Errorf("terminal: %q", term.String())
	}
	if !strings.Contains(o.lastLines(), "bus.cc") {
		t.Errorf("last lines lack the noise: %q", o.lastLines())
	}
	file.Reset()
	big := &browserOutput{file: &file, term: &term}
	for range MaxBrowserLog/len(noise) + 10 {
		fmt.Fprint(big, noise)
	}
	if file.Len() > MaxBrowserLog+200 || !strings.Contains(file.String(), "is not logged") {
		t.Errorf("the file grew to %d bytes (cap %d)", file.Len(), MaxBrowserLog)
	}
}

// A window needs a display: without one, the error says to pass --headless.
func TestNeedsDisplay(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	for _, tc := range []struct {
		goos     string
		headless bool
		env      map[string]string
		fails    bool
	}{
		{"linux", false, nil, true},
		{"linux", true, nil, false},
		{"linux", false, map[string]string{"DISPLAY": ":0"}, false},
		{"linux", false, map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, false},
		{"darwin", false, nil, false},
		{"windows", false, nil, false},
	} {
		err := NeedsDisplay(tc.goos, tc.headless, env(tc.env))
		if (err != nil) != tc.fails || err != nil && !strings.Contains(err.Error(), "--headless") {
			t.Errorf("%s headless=%v env=%v: %v", tc.goos, tc.headless, tc.env, err)
		}
	}
}
