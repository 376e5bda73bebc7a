package e2e

import (
	"strings"
	"testing"
	"time"
)

// `tether stop` does what the tray's Quit does: the daemon exits (its
// in-flight calls first), and the quit is recorded so that AI apps'
// bridges do not start it again; a second stop says nothing runs.
func TestStopCommand(t *testing.T) {
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
