package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/localclient"
)

// exitNotRunning is `tether status`'s exit status when no Tether runs for
// the config dir (as `systemctl status` uses 3 for a stopped unit), so
// scripts can tell it from an error (1).
const exitNotRunning = 3

// runStatus is `tether status`: whether Tether runs for this config dir
// and how (pid, port, version, uptime, with the window or not), the kill
// switch, the browser profiles (connected, waiting to pair), the calls
// held for the user's answer or running now, and the AI apps with a live
// MCP session, each with the command that acts on it. down is true when
// none runs (nothing is printed to stderr then: it is an answer).
func runStatus(ctx context.Context, args []string) (down bool, err error) {
	if len(args) > 0 {
		return false, fmt.Errorf("tether status takes no arguments")
	}
	paths, err := config.Resolve()
	if err != nil {
		return false, err
	}
	rec, health, err := daemon.Probe(ctx, paths)
	if err != nil {
		fmt.Printf("%s (config dir %s); start it with `tether` (or `tether serve` without a tray)\n", notRunning(ctx, paths, err), paths.Dir)
		return true, nil
	}
	st, err := localclient.New(paths).State(ctx)
	if err != nil {
		return false, fmt.Errorf("Tether runs (pid %d, port %d) but did not answer its state: %w", rec.PID, rec.Port, err)
	}
	writeStatus(os.Stdout, paths.Dir, rec, health, st)
	return false, nil
}

// writeStatus prints the status of a running Tether (runStatus).
func writeStatus(w io.Writer, dir string, rec config.DaemonRecord, health apitype.Health, st apitype.State) {
	mode := "`tether serve` (no tray, no window)"
	switch {
	case rec.UI && st.Window:
		mode = "the app (tray where there is one; `tether` opens its window)"
	case rec.UI:
		mode = "the app, without its window: " + st.NoWindow
	}
	state := "is running"
	if st.Stopping {
		state = "is stopping"
	}
	fmt.Fprintf(w, "Tether %s %s: pid %d, port %d, up %s, as %s\n", st.Version, state, rec.PID, rec.Port,
		(time.Duration(health.UptimeSeconds) * time.Second).String(), mode)
	if st.Stopping {
		fmt.Fprintf(w, "Stopping: it lets the %d tool call(s) running now finish (up to %s) and refuses new ones; `tether` starts it again once it is gone\n",
			len(st.Running), daemon.DrainTimeout)
	}
	fmt.Fprintf(w, "Config dir: %s\n", dir)
	if st.Paused {
		fmt.Fprintln(w, "Kill switch: ON, every tool call is refused (`tether resume` lets them run)")
	} else {
		fmt.Fprintln(w, "Kill switch: off (`tether pause` refuses every tool call)")
	}
	connected, slugs := 0, []string{}
	for _, p := range st.Profiles {
		if p.Status == "connected" {
			connected++
			slugs = append(slugs, p.Slug)
		}
	}
	line := fmt.Sprintf("Browser profiles: %d connected, %d known", connected, len(st.Profiles))
	if connected > 0 {
		line += " (" + strings.Join(slugs, ", ") + ")"
	}
	fmt.Fprintln(w, line+"; `tether profiles` lists them")
	if n := len(st.Pairing); n > 0 {
		fmt.Fprintf(w, "Waiting to pair: %d browser(s); compare the code its Tether popup shows, then `tether profiles approve CODE`\n", n)
	}
	if n := len(st.Approvals); n > 0 {
		fmt.Fprintf(w, "Held calls: %d waiting for your answer; `tether approvals` lists them\n", n)
	}
	fmt.Fprintf(w, "Tool calls running now: %d\n", len(st.Running))
	if len(st.Apps) == 0 {
		fmt.Fprintln(w, "AI apps connected: none (`tether connect --list` shows the apps Tether can be added to)")
	} else {
		fmt.Fprintf(w, "AI apps connected: %s; `tether timeline --client NAME` shows an app's calls\n", appList(st.Apps))
	}
}

// appList joins app names with ", ", quoting (Go syntax) a name that
// holds anything but ASCII letters, digits, spaces and ._-/()+@: (a
// comma, a quote, a look-alike of one in any script), and the name "none"
// in any case: any client can claim any name, and "cursor, claude-code"
// must not read as two apps.
func appList(apps []string) string {
	out := make([]string, len(apps))
	for i, a := range apps {
		out[i] = a
		if strings.EqualFold(a, "none") || strings.ContainsFunc(a, func(r rune) bool {
			return r > unicode.MaxASCII || !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(" ._-/()+@:", r)
		}) {
			out[i] = strconv.Quote(a)
		}
	}
	return strings.Join(out, ", ")
}
