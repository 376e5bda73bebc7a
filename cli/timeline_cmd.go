package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gofrs/flock"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/timeline"
)

const timelineUsage = `Usage:
  tether timeline [--client C] [--profile P] [--outcome O] [--limit N]
                                   the newest tool calls, newest first (default 50)
  tether timeline export [--out FILE] [--client C] [--profile P] [--outcome O] [--limit N]
                                   every kept call as JSON Lines, oldest first (stdout by default)

Outcomes: ok, error, refused (a deny rule), denied (not approved), paused.
`

func runTimeline(ctx context.Context, args []string) error {
	export := len(args) > 0 && args[0] == "export"
	if export {
		args = args[1:]
	}
	fs := flag.NewFlagSet("timeline", flag.ContinueOnError)
	fs.SetOutput(helpOutput(args))
	fs.Usage = func() { fmt.Fprint(fs.Output(), timelineUsage) }
	var f timeline.Filter
	fs.StringVar(&f.Client, "client", "", "only this MCP client (its clientInfo name)")
	fs.StringVar(&f.Profile, "profile", "", "only this browser profile (slug)")
	outcome := fs.String("outcome", "", "only this outcome: ok, error, refused, denied, paused or ignored")
	limit := fs.Int("limit", 0, "at most N calls (list: 50 by default; export: all)")
	out := ""
	if export {
		fs.StringVar(&out, "out", "", "write to FILE (mode 0600) instead of stdout")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected %q\n\n%s", fs.Arg(0), timelineUsage)
	}
	f.Outcome, f.Limit = timeline.Outcome(*outcome), *limit
	switch f.Outcome {
	case "", timeline.OK, timeline.Error, timeline.Refused, timeline.Denied, timeline.Paused, timeline.Ignored:
	default:
		return fmt.Errorf("unknown outcome %q\n\n%s", *outcome, timelineUsage)
	}
	paths, err := config.Resolve()
	if err != nil {
		return err
	}
	if _, err := os.Stat(paths.Timeline()); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no timeline yet (%s): it is created when the daemon first runs", paths.Timeline())
	}
	// SQLite in WAL mode lets this process read while the daemon writes.
	store, err := timeline.Open(paths.Timeline(), timeline.Options{})
	if err != nil {
		return err
	}
	defer store.Close()
	if export {
		var w io.Writer = os.Stdout
		if out != "" {
			file, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				return fmt.Errorf("create %s: %w", out, err)
			}
			defer file.Close()
			w = file
		}
		n, err := store.Export(ctx, w, f)
		if err != nil {
			return err
		}
		if out != "" {
			fmt.Fprintf(os.Stderr, "exported %d calls to %s\n", n, out)
		}
		return nil
	}
	if f.Limit == 0 {
		f.Limit = 50
	}
	rows, err := store.Query(ctx, f)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TIME\tCLIENT\tPROFILE\tTAB\tTOOL\tARGS\tDURATION\tOUTCOME")
	for _, e := range rows {
		tab, outc := "-", string(e.Outcome)
		if e.Tab > 0 {
			tab = fmt.Sprint(e.Tab)
		}
		if e.Error != "" {
			outc += ": " + e.Error
		} else if e.Outcome != timeline.OK && e.Decision != "" {
			outc += ": " + e.Decision
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format(time.DateTime), dash(e.Client), dash(e.Profile), tab,
			e.Tool, cut(e.Args, 60), e.Duration.Round(time.Millisecond), cut(outc, 80))
	}
	if len(rows) == 0 {
		fmt.Fprintln(w, "(no tool calls recorded)")
	}
	return w.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func cut(s string, n int) string {
	s = strings.ReplaceAll(s, "\t", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// runPause pauses (paused true) or resumes AI access: through the running
// daemon, or in policy.json when none runs.
func runPause(ctx context.Context, args []string, paused bool) error {
	if len(args) > 0 {
		return fmt.Errorf("tether pause and tether resume take no arguments")
	}
	paths, err := config.Resolve()
	if err != nil {
		return err
	}
	var res apitype.Pause
	err = daemon.Control(ctx, paths, http.MethodPost, apitype.PathPause, apitype.Pause{Paused: paused}, &res)
	if errors.Is(err, daemon.ErrNotRunning) {
		if err := paths.Ensure(); err != nil {
			return err
		}
		lock := flock.New(paths.Lock())
		if ok, lerr := lock.TryLock(); lerr != nil || !ok {
			return fmt.Errorf("the daemon is starting or stopping; retry: %v", err)
		}
		defer lock.Unlock()
		g, gerr := policy.Open(policy.Config{Path: paths.Policy()})
		if gerr != nil {
			return gerr
		}
		if gerr := g.SetPaused(paused); gerr != nil {
			return gerr
		}
		res.Paused = g.Paused()
	} else if err != nil {
		return err
	}
	if res.Paused {
		fmt.Println("AI access is paused: every tool call is refused until `tether resume`")
	} else {
		fmt.Println("AI access resumed")
	}
	return nil
}
