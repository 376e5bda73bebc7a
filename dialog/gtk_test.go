//go:build linux

package dialog

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/test/desktop"
)

// desktopBinary is tether-desktop: $TETHER_DESKTOP_BIN, or built here
// from this tree (it embeds frontend/dist: run `make build` first).
func desktopBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("TETHER_DESKTOP_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "tether-desktop")
	cmd := exec.Command("go", "build", "-tags", "desktop,production,webkit2_41", "-o", bin, "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build tether-desktop (make build first: it embeds frontend/dist): %v\n%s", err, out)
	}
	return bin
}

func needDesktop(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"Xvfb", "xdotool"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is missing; CI must run the GTK dialog test (make deps-test)", tool)
			}
			t.Skipf("%s is missing (make deps-test installs it): the real GTK dialog is not tested", tool)
		}
	}
}

// The real GTK dialog under Xvfb, through `tether-desktop approval-dialog`:
// each key gives its answer on stdout, and a killed dialog disappears.
func TestGTKDialog(t *testing.T) {
	needDesktop(t)
	bin := desktopBinary(t)
	display := desktop.Xvfb(t)

	start := func(t *testing.T, tool string) (*exec.Cmd, *strings.Builder, string) {
		t.Helper()
		q := question()
		q.Tool = tool
		// Page-chosen text with markup, format verbs and a bidi override:
		// shown as text, it must neither crash nor change the dialog.
		q.Summary = "paths: /tmp/<b>x</b> %s%n%n \u202Egnp.exe"
		q.DeadlineMs = time.Now().Add(2 * time.Minute).UnixMilli()
		in, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "approval-dialog")
		cmd.Env = append(os.Environ(), "DISPLAY="+display, "TETHER_CONFIG_DIR="+t.TempDir())
		cmd.Stdin = strings.NewReader(string(in))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		title := "^" + regexp.QuoteMeta("Tether: allow "+tool+"?") + "$"
		return cmd, &out, desktop.WaitWindow(t, display, title)
	}

	for _, c := range []struct{ key, want string }{
		{"alt+a", apitype.AllowOnce},
		{"alt+w", apitype.AlwaysAllowSite},
		{"alt+d", apitype.Deny},
		{"Return", apitype.Deny}, // the default
		{"Escape", Closed},
	} {
		t.Run(c.key, func(t *testing.T) {
			cmd, out, win := start(t, "browser_click_"+strings.ReplaceAll(c.key, "+", "_"))
			if _, err := desktop.Xdotool(t, display, "windowfocus", "--sync", win); err != nil {
				t.Fatalf("focus the dialog: %v", err)
			}
			if _, err := desktop.Xdotool(t, display, "key", c.key); err != nil {
				t.Fatalf("xdotool key %s: %v", c.key, err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("the dialog exited with %v", err)
				}
			case <-time.After(desktop.Wait):
				t.Fatalf("the dialog did not exit within %s of %s", desktop.Wait, c.key)
			}
			var rep Reply
			if err := json.Unmarshal([]byte(out.String()), &rep); err != nil || rep.Answer != c.want {
				t.Errorf("%s printed %q (%v), want answer %q", c.key, out.String(), err, c.want)
			}
			if strings.Count(out.String(), "\n") != 1 {
				t.Errorf("stdout is not one line: %q", out.String())
			}
		})
	}

	t.Run("killed", func(t *testing.T) {
		cmd, _, _ := start(t, "browser_type")
		title := "^" + regexp.QuoteMeta("Tether: allow browser_type?") + "$"
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		deadline := time.Now().Add(desktop.Wait)
		for desktop.Visible(t, display, title) { // the X server destroys a dead client's windows
			if time.Now().After(deadline) {
				t.Fatalf("the killed dialog's window is still visible after %s", desktop.Wait)
			}
			time.Sleep(20 * time.Millisecond) // poll interval, not a wait for an outcome
		}
	})
}
