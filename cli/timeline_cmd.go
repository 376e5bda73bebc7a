package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gofrs/flock"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localapi"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/timeline"
)

const timelineUsage = `Usage:
  tether timeline [--client C] [--profile P] [--outcome O] [--limit N]
                                   the newest tool calls, newest first (default 50)
  tether timeline export [--out FILE] [--client C] [--profile P] [--outcome O] [--limit N]
                                   every kept call as JSON Lines, oldest first (stdout by default)

Outcomes: ok, error, refused (a deny rule), denied (not approved), paused,
interrupted (Tether stopped while the call acted: it may have acted).
`

func runTimeline(ctx context.Context, args []string) error {
	export := len(args) > 0 && args[0] == "export"
	if export {
		args = args[1:]
	}
	fs := flag.NewFlagSet("timeline", flag.ContinueOnError)
	fs.SetOutput(helpOutput(args))
	fs.Usage = func() { fmt.Fprint(fs.Output(), timelineUsage) }
	var f apitype.TimelineFilter
	fs.StringVar(&f.Client, "client", "", "only this MCP client (its clientInfo name)")
	fs.StringVar(&f.Profile, "profile", "", "only this browser profile (its slug or id, or a unique prefix of either, as in a tool call)")
	fs.StringVar(&f.Outcome, "outcome", "", "only this outcome: ok, error, refused, denied, paused, interrupted, ignored or unrecorded")
	fs.IntVar(&f.Limit, "limit", 0, "at most N calls (list: 50 by default; export: all)")
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
	switch timeline.Outcome(f.Outcome) {
	case "", timeline.OK, timeline.Error, timeline.Refused, timeline.Denied, timeline.Paused, timeline.Interrupted, timeline.Ignored, timeline.Unrecorded:
	default:
		return fmt.Errorf("unknown outcome %q\n\n%s", f.Outcome, timelineUsage)
	}
	if f.Limit < 0 {
		return fmt.Errorf("--limit must be ≥ 0\n\n%s", timelineUsage)
	}
	paths, err := config.Resolve()
	if err != nil {
		return err
	}
	src, closeSrc, err := openTimeline(ctx, paths)
	if err != nil {
		return err
	}
	defer closeSrc()
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
		n, err := src.export(ctx, w, f)
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
	rows, err := src.query(ctx, f)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TIME\tCLIENT\tPROFILE\tTAB\tTOOL\tARGS\tDURATION\tOUTCOME")
	for _, e := range rows {
		tab, outc := "-", e.Outcome
		if e.Tab > 0 {
			tab = fmt.Sprint(e.Tab)
		}
		if e.Error != "" {
			outc += ": " + e.Error
		} else if e.Outcome != string(timeline.OK) && e.Decision != "" {
			// A decision may already start with its outcome ("refused: …").
			outc += ": " + strings.TrimPrefix(e.Decision, e.Outcome+": ")
		}
		took := time.Duration(e.DurationMs * float64(time.Millisecond))
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", time.UnixMilli(e.TimeMs).Local().Format(time.DateTime), clientWithToken(e.Client, e.Token), profileWithRTT(e.Profile, e.RTTMs), tab,
			dash(e.Tool), cut(e.Args, 60), took.Round(time.Millisecond), cut(outc, 80))
	}
	if len(rows) == 0 {
		var set []string
		for _, kv := range [][2]string{{"client", f.Client}, {"profile", f.Profile}, {"outcome", f.Outcome}} {
			if kv[1] != "" {
				set = append(set, fmt.Sprintf("--%s %q", kv[0], kv[1]))
			}
		}
		if len(set) == 0 {
			fmt.Fprintln(w, "(no tool calls recorded)")
		} else {
			// A misspelt name matches nothing: say which filter, and how to see every call.
			fmt.Fprintf(w, "(no tool calls recorded with %s; `tether timeline` without it lists every call, with the clients' and profiles' names)\n", strings.Join(set, " "))
		}
	}
	return w.Flush()
}

// timelineSource is where `tether timeline` reads: the running daemon's
// local API, or, with none running, the store's file through the same
// timeline code the daemon uses.
type timelineSource struct {
	query  func(context.Context, apitype.TimelineFilter) ([]apitype.TimelineEntry, error)
	export func(context.Context, io.Writer, apitype.TimelineFilter) (int, error)
}

func openTimeline(ctx context.Context, paths config.Paths) (timelineSource, func(), error) {
	c := localclient.New(paths)
	if _, err := c.TimelineFacets(ctx); err == nil {
		return timelineSource{query: c.Timeline, export: c.ExportTimeline}, func() {}, nil
	} else if !errors.Is(err, localclient.ErrNotRunning) {
		return timelineSource{}, nil, err
	}
	if _, err := os.Stat(paths.Timeline()); errors.Is(err, os.ErrNotExist) {
		return timelineSource{}, nil, fmt.Errorf("no timeline yet (%s): it is created when the daemon first runs", paths.Timeline())
	}
	store, err := timeline.Open(paths.Timeline(), timeline.Options{})
	if err != nil {
		return timelineSource{}, nil, err
	}
	filter := func(f apitype.TimelineFilter) timeline.Filter {
		return timeline.Filter{Client: f.Client, Profile: f.Profile, Outcome: timeline.Outcome(f.Outcome), BeforeID: f.BeforeID, Limit: f.Limit}
	}
	return timelineSource{
		query: func(ctx context.Context, f apitype.TimelineFilter) ([]apitype.TimelineEntry, error) {
			rows, err := store.Query(ctx, filter(f))
			out := make([]apitype.TimelineEntry, len(rows))
			for i, e := range rows {
				out[i] = localapi.TimelineEntry(e)
			}
			return out, err
		},
		export: func(ctx context.Context, w io.Writer, f apitype.TimelineFilter) (int, error) {
			return store.Export(ctx, w, filter(f))
		},
	}, func() { store.Close() }, nil
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
	res.Paused, err = localclient.New(paths).SetPaused(ctx, paused)
	if errors.Is(err, localclient.ErrNotRunning) {
		// No daemon: the guard's own code on policy.json, under the
		// daemon's lock so that none starts meanwhile.
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

// clientWithToken is a timeline row's client, with the named token it used
// ("claude-code [token laptop]"); "-" for none.
func clientWithToken(client, token string) string {
	if token == "" {
		return dash(client)
	}
	return dash(client) + " [token " + token + "]"
}

// profileWithRTT is a timeline row's profile, with its link's round trip
// when known ("work (RTT 84 ms)"); "-" for none.
func profileWithRTT(profile string, rttMs float64) string {
	if profile == "" || rttMs <= 0 {
		return dash(profile)
	}
	return fmt.Sprintf("%s (RTT %d ms)", profile, max(1, int(rttMs+0.5)))
}
