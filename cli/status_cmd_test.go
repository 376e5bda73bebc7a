package cli

import (
	"strings"
	"testing"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
)

// A daemon that is stopping says so, with what it still does, instead of
// "is running".
func TestStatusOfAStoppingDaemon(t *testing.T) {
	rec := config.DaemonRecord{PID: 42, Port: 47615}
	st := apitype.State{Version: "1.2.3", Running: []apitype.RunningCall{{}}, Apps: []string{}}
	var running strings.Builder
	writeStatus(&running, "/cfg", rec, apitype.Health{UptimeSeconds: 60}, st)
	if !strings.Contains(running.String(), "Tether 1.2.3 is running: pid 42, port 47615, up 1m0s") || strings.Contains(running.String(), "Stopping") {
		t.Fatalf("a running daemon:\n%s", running.String())
	}
	st.Stopping = true
	var stopping strings.Builder
	writeStatus(&stopping, "/cfg", rec, apitype.Health{UptimeSeconds: 60}, st)
	out := stopping.String()
	for _, want := range []string{"Tether 1.2.3 is stopping: pid 42", "lets the 1 tool call(s) running now finish (up to 1m5s)", "refuses new ones"} {
		if !strings.Contains(out, want) {
			t.Errorf("a stopping daemon's status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "is running") {
		t.Errorf("a stopping daemon's status says it is running:\n%s", out)
	}
}

// An app's name with a separator or quote in it is quoted: any client can
// claim any name, and one must not read as two.
func TestStatusQuotesAppNames(t *testing.T) {
	st := apitype.State{Version: "1.2.3", Apps: []string{"Visual Studio Code", "claude-code", `cursor, "x"`, "a‚ b", "c， d", "none", "NONE", "eꓹ f", "日本語"}}
	var out strings.Builder
	writeStatus(&out, "/cfg", config.DaemonRecord{PID: 42, Port: 47615}, apitype.Health{}, st)
	want := `AI apps connected: Visual Studio Code, claude-code, "cursor, \"x\"", "a‚ b", "c， d", "none", "NONE", "eꓹ f", "日本語"; `
	if !strings.Contains(out.String(), want) {
		t.Fatalf("status lacks %q:\n%s", want, out.String())
	}
}
