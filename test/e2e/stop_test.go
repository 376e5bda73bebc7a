package e2e

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// `tether stop` does what the tray's Quit does: the daemon exits (its
// in-flight calls first), and the quit is recorded so that AI apps'
// bridges do not start it again; a second stop says nothing runs.
func TestStopCommand(t *testing.T) {
	parallel(t)
	d := StartDaemon(t, Binary(t))
	out := tetherCLI(t, d, "stop")
	// Only the bridges running now stay away (README, "Quit"): the message
	// must not promise that every AI app does.
	if !strings.Contains(out, "stopped") || !strings.Contains(out, "the AI apps running now do not start it again") || !strings.Contains(out, "an AI app started later does") {
		t.Fatalf("tether stop said:\n%s", out)
	}
	if err := d.WaitExit(10 * time.Second); err != nil {
		t.Fatalf("the daemon after tether stop: %v", err)
	}
	if !d.Paths.QuitByUser() {
		t.Error("tether stop did not record the quit: AI apps' bridges would start Tether again")
	}
	if out := tetherCLI(t, d, "stop"); !strings.Contains(out, "not running") {
		t.Errorf("a second tether stop said:\n%s", out)
	}
}

// `tether status` says whether Tether runs and how, what waits for the
// user and which AI apps are connected, each with its command; with none
// running it says so and exits 3, so that a script can tell "not running"
// from an error.
func TestStatusCommand(t *testing.T) {
	parallel(t)
	d := StartDaemon(t, Binary(t))
	out := tetherCLI(t, d, "status")
	for _, want := range []string{
		fmt.Sprintf("is running: pid %d, port %d", d.Record.PID, d.Record.Port),
		"`tether serve`", "Kill switch: off", "Browser profiles: 0 connected", "AI apps connected: none",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("tether status lacks %q:\n%s", want, out)
		}
	}
	// An AI app counts as connected once its initialize is done, before any
	// tool call: here `tether mcp`, as an AI app starts it.
	ctx := Context(t, time.Minute)
	app := stdioClient(t, ctx, d)
	if out := tetherCLI(t, d, "status"); !strings.Contains(out, "AI apps connected: tether-e2e;") {
		t.Fatalf("tether status after an AI app's initialize:\n%s", out)
	}
	// And no longer once it has left (its bridge says so as it exits).
	if err := app.Close(); err != nil {
		t.Fatal(err)
	}
	if out := tetherCLI(t, d, "status"); !strings.Contains(out, "AI apps connected: none") {
		t.Fatalf("tether status after the AI app left:\n%s", out)
	}
	StartBrowser(t, d, BrowserOptions{Label: "Waiting", WaitFor: "new browser profile waiting for approval"})
	tetherCLI(t, d, "pause")
	out = tetherCLI(t, d, "status")
	if !strings.Contains(out, "Kill switch: ON") || !strings.Contains(out, "`tether resume`") ||
		!strings.Contains(out, "Waiting to pair: 1 browser(s)") || !strings.Contains(out, "tether profiles approve CODE") {
		t.Fatalf("tether status, paused with a browser waiting to pair:\n%s", out)
	}
	tetherCLI(t, d, "stop")
	if err := d.WaitExit(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(d.Bin, "status")
	cmd.Env = d.Env()
	got, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || !strings.Contains(string(got), "Tether is not running") || !strings.Contains(string(got), "start it with `tether`") {
		t.Fatalf("tether status with none running: %v\n%s", err, got)
	}
}
