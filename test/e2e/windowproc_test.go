//go:build linux

package e2e

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/localclient/localclienttest"
	"github.com/tether-browser/tether/test/desktop"
)

// The window process (`tether-desktop window`), for real under Xvfb,
// against the fake daemon: it paints and reports its first frame, a second
// one asks the daemon to show the first and exits, closing hides it and
// the process lingers, a WindowShow event brings it back, and it exits when
// the daemon is gone. (The real daemon's side is tested where the local
// API is served.)
func TestWindowProcessUnderXvfb(t *testing.T) {
	parallel(t)
	requireDesktop(t)
	desktopBin := filepath.Join(filepath.Dir(Binary(t)), "tether-desktop")
	f := localclienttest.New(t)
	f.SetState(func(s *apitype.State) {
		s.Profiles = []apitype.ProfileView{{ID: "p1", Label: "Work", Slug: "work", Status: "connected"}}
	})
	display := desktop.Xvfb(t)
	env := UserEnv(t.TempDir(), f.Paths.Dir, desktop.SessionBus(t), display)
	const linger = 2 * time.Second
	start := func() *exec.Cmd {
		cmd := exec.Command(desktopBin, "window", "--linger", linger.String(), "--gone-after", "2s")
		cmd.Env = env
		var stderr strings.Builder
		cmd.Stderr = &stderr
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("window process stderr:\n%s", stderr.String())
			}
		})
		return cmd
	}
	waitRequest := func(path string) localclienttest.Request {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			changed := f.Changed()
			for _, r := range f.Requests() {
				if r.Path == path {
					return r
				}
			}
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("the window process never sent %s; got %+v", path, f.Requests())
			}
		}
	}

	w := start()
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- w.Wait() }()
	t.Cleanup(func() { w.Process.Kill() })

	painted := waitRequest(apitype.PathWindowPainted)
	var p apitype.WindowPainted
	if err := json.Unmarshal([]byte(painted.Body), &p); err != nil || p.SinceStartMs <= 0 {
		t.Errorf("first paint report %q: %v", painted.Body, err)
	}
	t.Logf("first frame %.0f ms after the process started", p.SinceStartMs)
	win := desktop.WaitWindow(t, display, "^Tether$")

	// A second one: the lock is held, so it asks the daemon and exits 0.
	second := start()
	if err := second.Run(); err != nil {
		t.Fatalf("second window process: %v", err)
	}
	waitRequest(apitype.PathWindowOpen)

	// Closed, it hides and lingers; the daemon's WindowShow brings it back.
	if got := desktop.Close(t, display, win); got != "unmapped" {
		t.Fatalf("closing the window: %s, want it hidden (unmapped)", got)
	}
	time.Sleep(linger / 4)
	f.Emit(apitype.Event{Kind: apitype.KindWindow, Window: &apitype.WindowEvent{Action: apitype.WindowShow}})
	win = desktop.WaitWindow(t, display, "^Tether$")
	select {
	case err := <-exited:
		t.Fatalf("the window process exited (%v) though it was shown again", err)
	case <-time.After(linger + time.Second):
	}

	// Closed and left alone, it exits after the linger.
	closed := time.Now()
	desktop.Close(t, display, win)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("the window process: %v, want exit 0", err)
		}
		if d := time.Since(closed); d < linger {
			t.Errorf("exited %v after the close, before its linger of %v", d, linger)
		}
	case <-time.After(linger + 10*time.Second):
		t.Fatal("the window process did not exit after its linger")
	}

	// Another one exits when the daemon is gone.
	w = start()
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { exited <- w.Wait() }()
	desktop.WaitWindow(t, display, "^Tether$")
	f.Close()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after the daemon went away: %v, want exit 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the window process outlived its daemon")
	}
}
