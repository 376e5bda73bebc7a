package cli

import (
	"runtime"
	"slices"
	"testing"
)

// env is a getenv over kv.
func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestHasDesktop(t *testing.T) {
	for _, tc := range []struct {
		goos string
		env  map[string]string
		want bool
	}{
		{"darwin", nil, true},
		{"windows", nil, true},
		{"linux", nil, false},
		{"linux", map[string]string{"DISPLAY": ":0"}, true},
		{"linux", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, true},
		{"linux", map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus"}, true},
		{"freebsd", map[string]string{"HOME": "/home/u"}, false},
	} {
		if got := hasDesktop(tc.goos, env(tc.env)); got != tc.want {
			t.Errorf("hasDesktop(%s, %v) = %v, want %v", tc.goos, tc.env, got, tc.want)
		}
	}
}

func TestDaemonCommand(t *testing.T) {
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	if got := daemonCommand("/bin/tether"); runtime.GOOS == "linux" && !slices.Equal(got, []string{"/bin/tether", "serve"}) {
		t.Errorf("without a desktop: %v, want the headless daemon", got)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/tmp/bus")
	if got := daemonCommand("/bin/tether"); !slices.Equal(got, []string{"/bin/tether", "--hidden"}) {
		t.Errorf("with a desktop: %v, want bare tether (the tray), its window hidden", got)
	}
}

func TestHasDisplay(t *testing.T) {
	for _, tc := range []struct {
		goos string
		env  map[string]string
		want bool
	}{
		{"darwin", nil, true},
		{"windows", nil, true},
		{"linux", nil, false},
		{"linux", map[string]string{"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus"}, false}, // a tray, no window
		{"linux", map[string]string{"DISPLAY": ":0"}, true},
		{"linux", map[string]string{"WAYLAND_DISPLAY": "wayland-0"}, true},
	} {
		if got := hasDisplay(tc.goos, env(tc.env)); got != tc.want {
			t.Errorf("hasDisplay(%s, %v) = %v, want %v", tc.goos, tc.env, got, tc.want)
		}
	}
}
