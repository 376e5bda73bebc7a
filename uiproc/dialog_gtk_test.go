//go:build linux

package uiproc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/test/desktop"
)

// Dialogs with the real tether-desktop under Xvfb: a key answers the
// call, and a call decided elsewhere takes its dialog off the screen.
func TestDialogsWithGTK(t *testing.T) {
	for _, tool := range []string{"Xvfb", "xdotool"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing; CI must run the GTK dialog test (make deps-test)", tool)
			}
			t.Skipf("%s is missing (make deps-test installs it): the real dialog is not tested", tool)
		}
	}
	bin := os.Getenv("TETHER_DESKTOP_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "tether-desktop")
		if out, err := exec.Command("go", "build", "-tags", "desktop,production,webkit2_41", "-o", bin, "..").CombinedOutput(); err != nil {
			t.Fatalf("build tether-desktop (make build first: it embeds frontend/dist): %v\n%s", err, out)
		}
	}
	display := desktop.Xvfb(t)
	path, args, err := DialogCommand(bin)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDialogs(DialogConfig{Path: path, Args: args, Env: append(os.Environ(), "DISPLAY="+display, "TETHER_CONFIG_DIR="+t.TempDir())})
	t.Cleanup(d.Close)
	title := "^" + regexp.QuoteMeta("Tether: allow browser_file_upload?") + "$"

	res := make(chan result, 1)
	go func() { a, err := d.Ask(t.Context(), request("1")); res <- result{a, err} }()
	win := desktop.WaitWindow(t, display, title)
	if _, err := desktop.Xdotool(t, display, "windowfocus", "--sync", win); err != nil {
		t.Fatal(err)
	}
	if _, err := desktop.Xdotool(t, display, "key", "alt+a"); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, res, "Ask"); r.err != nil || r.a != policy.AllowOnce {
		t.Errorf("Ask = %q, %v; want allow_once", r.a, r.err)
	}

	ctx, cancel := context.WithCancel(t.Context())
	go func() { a, err := d.Ask(ctx, request("2")); res <- result{a, err} }()
	desktop.WaitWindow(t, display, title)
	cancel() // answered in the window, say
	if r := wait(t, res, "Ask"); !errors.Is(r.err, context.Canceled) {
		t.Errorf("Ask = %q, %v; want context.Canceled", r.a, r.err)
	}
	deadline := time.Now().Add(desktop.Wait)
	for desktop.Visible(t, display, title) {
		if time.Now().After(deadline) {
			t.Fatalf("the dialog of a decided call is still on screen after %s", desktop.Wait)
		}
		time.Sleep(20 * time.Millisecond) // poll interval
	}
}
