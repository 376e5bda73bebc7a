package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// pageResult is one server's numbers on one corpus page.
type pageResult struct {
	Page       string
	Err        string
	Navigate   time.Duration
	Snapshots  []time.Duration // 3 repeats after the navigation returned
	Size       int             // bytes of the first snapshot's text
	SizeSpread int             // largest minus smallest of the repeats
	Dialogs    int             // dialogs the bench had to answer first
}

// serverResult is everything measured for one server.
type serverResult struct {
	Name              string
	Pages             []pageResult
	ToolsChars, Tools int
	dialogTool        string
	Noop              []time.Duration
	Click             []time.Duration
	ClickErr          string
	// ClickBytes are the characters each click round trip returned (the
	// click's result, plus the snapshot call after it where the server
	// needs one); SnapshotBytes is the whole snapshot of the fixture.
	ClickBytes    []int
	SnapshotBytes int
	// NoopHTTP is Tether's no-op over streamable HTTP straight to the
	// daemon, without the stdio bridge (Tether only).
	NoopHTTP []time.Duration
	Err      string // the server could not be run at all
}

type options struct {
	bin, corpus          string
	pages, noops, clicks int
	peers, fidelity      bool
	idle                 time.Duration
	concurrencyCalls     int
	smoke                bool
	dump                 string
}

func runAll(args []string) int {
	fs := flag.NewFlagSet("all", flag.ExitOnError)
	var o options
	fs.StringVar(&o.bin, "bin", "bin/tether", "the tether binary (make build)")
	fs.StringVar(&o.corpus, "corpus", filepath.Join("..", "shared", "corpus", "readability"), "folder of <page>/source.html")
	fs.IntVar(&o.pages, "pages", 0, "corpus pages to run (0: all)")
	fs.IntVar(&o.noops, "noops", 200, "no-op calls per server")
	fs.IntVar(&o.clicks, "clicks", 20, "click + snapshot round trips per server")
	fs.BoolVar(&o.peers, "peers", true, "also run Playwright MCP and Chrome DevTools MCP (npm install at run time)")
	fs.BoolVar(&o.fidelity, "fidelity", true, "run the snapshot-fidelity test for recall and precision")
	fs.DurationVar(&o.idle, "idle", 60*time.Second, "how long to watch the idle daemon")
	fs.IntVar(&o.concurrencyCalls, "concurrency-calls", 10000, "calls in the concurrency bench")
	fs.StringVar(&o.dump, "dump", "", "write every first snapshot to DIR/<server>/<page>.txt")
	fs.BoolVar(&o.smoke, "smoke", false, "CI smoke: 5 pages, Tether only, short idle and concurrency runs; fails on any error")
	_ = fs.Parse(args)
	if o.smoke {
		o.pages, o.noops, o.clicks, o.peers, o.fidelity = 5, 30, 5, false, false
		o.idle, o.concurrencyCalls = smokeIdle, 1000
	}
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	r, err := runBench(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	writeReport(os.Stdout, o, r)
	if n := r.errors(o.smoke); n > 0 {
		fmt.Fprintf(os.Stderr, "bench: %d errors (see the report)\n", n)
		return 1
	}
	return 0
}

// benchResult is the whole run.
// loadAverages is the machine's 1-, 5- and 15-minute load averages from
// /proc/loadavg ("0.52 0.48 0.40"), or "" where it cannot be read: with
// runtime.NumCPU, what else ran on the machine during a run.
func loadAverages() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

type benchResult struct {
	Started            time.Time
	LoadAtStart        string          // /proc/loadavg's 1-, 5- and 15-minute averages when the run began ("" where there is none)
	Corpus             []string        // page names
	Servers            []*serverResult // Tether first
	Fidelity           *fidelity
	Idle               idleResult
	Desktop            desktopResult // bare `tether --hidden` and its window, after Idle
	Concurrency        ConcurrencyResult
	ConcurrencyErr     string
	PageLoad           *pageLoadResult // nil in a smoke run
	PageLoadErr        string
	Flood              *floodResult
	FloodErr           string
	Hardening          *hardeningResult // nil in a smoke run
	PageSize           *pageSizeResult
	Chromium, Node, Go string
	CPU                string
	// NoopFloor is mcp-go's floor (floor.go), timed with the peers while
	// Tether idles, as Chrome DevTools MCP's no-op is; NoopFloorErr says
	// why it is missing.
	NoopFloor    []time.Duration
	NoopFloorErr string
	// NoopFloorBridged is the same floor reached as Tether is, through
	// Tether's bridge and loopback HTTP (floor.go); the Err says why it
	// is missing.
	NoopFloorBridged    []time.Duration
	NoopFloorBridgedErr string
}

// smokeIdle is a smoke run's idle window (`tether serve`, `tether --hidden`).
const smokeIdle = 3 * time.Second

// errors counts what must fail a smoke run: any Tether error, and any
// concurrency error. Peers' page errors are reported, not fatal.
func (r *benchResult) errors(smoke bool) int {
	n := r.Concurrency.Errors
	if r.ConcurrencyErr != "" {
		n++
	}
	if r.FloodErr != "" || r.Flood != nil && !r.Flood.HealthyAfter {
		n++
	}
	for i, s := range r.Servers {
		if i > 0 && !smoke {
			if s.Err != "" {
				n++
			}
			continue
		}
		if s.Err != "" || s.ClickErr != "" {
			n++
		}
		for _, p := range s.Pages {
			if p.Err != "" {
				n++
			}
		}
	}
	if r.Idle.Err != "" || r.Desktop.Err != "" {
		n++ // a missing desktop tool (Desktop.Skipped) is no error
	}
	if r.PageSize != nil {
		n += r.PageSize.errors()
	}
	return n
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func runBench(ctx context.Context, o options) (*benchResult, error) {
	r := &benchResult{Started: time.Now(), LoadAtStart: loadAverages()}
	bin, err := filepath.Abs(o.bin)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: %w (make build)", o.bin, err)
	}
	r.Chromium = commandLine(chromiumPath, "--version")
	r.Node = commandLine("node", "--version")
	r.Go = commandLine("go", "env", "GOVERSION")
	r.CPU = cpuModel()

	pages, _ := filepath.Glob(filepath.Join(o.corpus, "*", "source.html"))
	if len(pages) == 0 && o.smoke {
		// A checkout without ../shared: the smoke run still exercises
		// every step on the end-to-end tests' own pages.
		logf("no corpus at %s; the smoke run uses test/e2e/testdata", o.corpus)
		o.corpus = filepath.Join("test", "e2e", "testdata")
		pages, _ = filepath.Glob(filepath.Join(o.corpus, "*.html"))
	}
	if len(pages) == 0 {
		return nil, fmt.Errorf("no corpus pages at %s/*/source.html", o.corpus)
	}
	slices.Sort(pages)
	if o.pages > 0 && o.pages < len(pages) {
		pages = pages[:o.pages]
	}
	paths := map[string]string{} // page name → path under /corpus/
	for _, p := range pages {
		rel, _ := filepath.Rel(o.corpus, p)
		name := filepath.Base(filepath.Dir(p))
		if filepath.Base(p) != "source.html" {
			name = strings.TrimSuffix(filepath.Base(p), ".html")
		}
		r.Corpus = append(r.Corpus, name)
		paths[name] = filepath.ToSlash(rel)
	}
	mux := http.NewServeMux()
	mux.Handle("/corpus/", http.StripPrefix("/corpus/", http.FileServer(http.Dir(o.corpus))))
	mux.HandleFunc("/fixture/click.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(clickFixture))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	tmp, err := os.MkdirTemp("", "tether-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	if o.fidelity {
		logf("snapshot fidelity test (about a minute)")
		r.Fidelity = runFidelity(ctx, bin)
	}

	logf("Tether: %d pages", len(pages))
	tr := &serverResult{Name: "Tether"}
	r.Servers = append(r.Servers, tr)
	t, err := startTether(ctx, bin, tmp)
	idleDone := make(chan idleResult, 1)
	if err != nil {
		tr.Err = err.Error()
		idleDone <- idleResult{Err: "Tether did not start"}
	} else {
		if err := acceptEarlyDialogs(ctx, t, srv.URL+"/fixture/click.html"); err != nil {
			logf("the stand-in user who answers early dialogs is missing: %v", err)
		}
		measure(ctx, &t.server, tr, srv.URL, r.Corpus, paths, o)
		tr.NoopHTTP = noopHTTP(ctx, t, o.noops)
		// The daemon stays up with its browser connected and its MCP
		// session open, doing nothing, while the peers run.
		daemonPID, bridgePID := t.daemon.Process.Pid, t.s.pid()
		go func() {
			idleDone <- watchIdle(ctx, o.idle, daemonPID, bridgePID)
		}()
		if !o.peers {
			r.Idle = <-idleDone
		}
		defer func() { t.s.Close(); t.stop() }()
	}

	peers, err := peersUnder(ctx, tmp, o.peers)
	if err != nil {
		return nil, err
	}
	if o.peers {
		for _, p := range []struct {
			name  string
			start func(context.Context, string, string) (*server, error)
		}{{"Playwright MCP", startPlaywright}, {"Chrome DevTools MCP", startDevtools}} {
			logf("%s: %d pages", p.name, len(pages))
			res := &serverResult{Name: p.name}
			r.Servers = append(r.Servers, res)
			s, err := p.start(ctx, peers, tmp)
			if err != nil {
				res.Err = err.Error()
				logf("%s", res.Err)
				continue
			}
			measure(ctx, s, res, srv.URL, r.Corpus, paths, o)
			s.s.Close()
		}
		logf("mcp-go floor: %d no-op calls", o.noops)
		if r.NoopFloor, err = noopFloor(ctx, filepath.Join(tmp, "floor"), o.noops); err != nil {
			r.NoopFloorErr = err.Error()
			logf("mcp-go floor: %v", err)
		}
		logf("mcp-go floor, bridged: %d no-op calls", o.noops)
		if r.NoopFloorBridged, err = noopFloorBridged(ctx, filepath.Join(tmp, "floor-bridged"), o.noops); err != nil {
			r.NoopFloorBridgedErr = err.Error()
			logf("mcp-go floor, bridged: %v", err)
		}
		r.Idle = <-idleDone
	}

	// Synthetic pages of 1k to 100k interactive elements (a smoke run: 1k
	// and 5k, one round, Tether only).
	sizes, rounds := pageSizes, 3
	if o.smoke {
		sizes, rounds = pageSizes[:2], 1
	}
	logf("page sizes: %v", sizes)
	r.PageSize = measurePageSize(ctx, bin, filepath.Join(tmp, "pagesize"), peers, sizes, rounds, true, false)

	// Bare tether with its window closed, over an idle window as long as
	// the daemon's, once that one is over; then its window.
	r.Desktop = runDesktop(ctx, bin, tmp, o.idle, !o.smoke)

	logf("concurrency: 32 profiles × 8 tabs, %d calls", o.concurrencyCalls)
	c, err := runConcurrency(ctx, 32, 8, o.concurrencyCalls, 32, "")
	if err != nil {
		r.ConcurrencyErr = err.Error()
	}
	r.Concurrency = c

	if !o.smoke {
		logf("page-load cost in unshared tabs: %d corpus pages and a 20-iframe page, with and without the extension", min(len(pages), 30))
		if r.PageLoad, err = measurePageLoad(ctx, bin, o.corpus, 30, 5); err != nil {
			r.PageLoadErr = err.Error()
		}
	}
	floodFor := 20 * time.Second
	if o.smoke {
		floodFor = 3 * time.Second
	}
	logf("unauthenticated flood: %s", floodFor)
	if r.Flood, err = measureFlood(ctx, bin, floodFor); err != nil {
		r.FloodErr = err.Error()
	}
	if !o.smoke {
		r.Hardening = measureHardening(ctx, bin, 30*time.Second)
	}
	return r, nil
}

// measure runs every per-server measurement.
func measure(ctx context.Context, s *server, res *serverResult, base string, pages []string, paths map[string]string, o options) {
	var err error
	if s.dialog != nil {
		res.dialogTool = s.dialog.tool
	}
	if res.ToolsChars, res.Tools, err = s.s.toolsListSize(ctx); err != nil {
		res.Err = "tools/list: " + err.Error()
	}
	for i, name := range pages {
		p := pageResult{Page: name}
		nav := s.navigate(base + "/corpus/" + paths[name])
		_, d, err := s.do(ctx, nav, &p.Dialogs)
		p.Navigate = d
		if err != nil {
			p.Err = err.Error()
		} else {
			minSize, maxSize := -1, 0
			for range 3 {
				text, d, err := s.do(ctx, s.snapshot, &p.Dialogs)
				if err != nil {
					p.Err = err.Error()
					break
				}
				p.Snapshots = append(p.Snapshots, d)
				if p.Size == 0 {
					p.Size = len(text)
					if o.dump != "" {
						d := filepath.Join(o.dump, strings.ReplaceAll(res.Name, " ", "-"))
						_ = os.MkdirAll(d, 0o755)
						_ = os.WriteFile(filepath.Join(d, name+".txt"), []byte(text), 0o644)
					}
				}
				if minSize < 0 || len(text) < minSize {
					minSize = len(text)
				}
				maxSize = max(maxSize, len(text))
			}
			p.SizeSpread = max(maxSize-minSize, 0)
		}
		if p.Err != "" {
			logf("%s: %s: %s", res.Name, name, clip(p.Err, 300))
		}
		if (i+1)%20 == 0 {
			logf("%s: %d/%d pages", res.Name, i+1, len(pages))
		}
		res.Pages = append(res.Pages, p)
	}
	// No-op calls: a few to warm up, then the measured ones.
	for i := range o.noops + 5 {
		_, d, err := s.s.call(ctx, s.noop.tool, s.noop.args)
		if err != nil {
			res.Err = "no-op: " + err.Error()
			break
		}
		if i >= 5 {
			res.Noop = append(res.Noop, d)
		}
	}
	res.Click, res.ClickBytes, res.SnapshotBytes, res.ClickErr = clickRoundTrips(ctx, s, base+"/fixture/click.html", o.clicks)
	if res.ClickErr != "" {
		logf("%s: click: %s", res.Name, res.ClickErr)
	}
}

// do runs c; when the call fails because a page's dialog is open (a page
// script's alert), it answers the dialog as an agent would and runs c once
// more, counting the dialog in *dialogs. Only the retried call is timed.
func (s *server) do(ctx context.Context, c call, dialogs *int) (string, time.Duration, error) {
	text, d, err := s.s.call(ctx, c.tool, c.args)
	if err != nil && s.dialog != nil && strings.Contains(strings.ToLower(err.Error()), "dialog") {
		if _, _, derr := s.s.call(ctx, s.dialog.tool, s.dialog.args); derr == nil {
			*dialogs++
			text, d, err = s.s.call(ctx, c.tool, c.args)
		}
	}
	return text, d, err
}

// clickFixture is the click page: the button's own handler changes the
// status text, which the fresh snapshot must show.
var clickFixture = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Click fixture</title></head>
<body>
<header><h1>Counter</h1><nav><a href="#a">Alpha</a> <a href="#b">Beta</a> <a href="#c">Gamma</a></nav></header>
<main>
<p id="status">Clicks: 0</p>
<button id="press" type="button">Press me</button>
<form><label>Name <input name="n"></label> <label><input type="checkbox"> Remember</label></form>
<ul>` + fixtureItems + `</ul>
</main>
<script>
let n = 0;
document.getElementById('press').addEventListener('click', () => {
  document.getElementById('status').textContent = 'Clicks: ' + (++n);
});
</script>
</body></html>`

var fixtureItems = func() string {
	var sb strings.Builder
	for i := 1; i <= 20; i++ {
		fmt.Fprintf(&sb, `<li><a href="#item-%d">Item %d</a> — a line of text for item %d.</li>`, i, i, i)
	}
	return sb.String()
}()

// clickRoundTrips navigates to the fixture, then times clicks on its button,
// each until a fresh snapshot that shows the click's effect is in hand.
func clickRoundTrips(ctx context.Context, s *server, url string, n int) (times []time.Duration, bytes []int, snapBytes int, failed string) {
	nav := s.navigate(url)
	var dialogs int
	if _, _, err := s.do(ctx, nav, &dialogs); err != nil {
		return nil, nil, 0, err.Error()
	}
	snap, _, err := s.do(ctx, s.snapshot, &dialogs)
	if err != nil {
		return nil, nil, 0, err.Error()
	}
	times, bytes, failed = pressClicks(ctx, s, snap, n)
	return times, bytes, len(snap), failed
}

// pressClicks times n clicks on the page's "Press me" button (its ref read
// from snap), each until a fresh snapshot (or the changes since the last
// one) shows "Clicks: i", and counts the characters each returned. The ref
// is kept from the last result that showed the button: a result that
// carries only changes may leave the button out.
func pressClicks(ctx context.Context, s *server, snap string, n int) ([]time.Duration, []int, string) {
	var out []time.Duration
	var sizes []int
	ref := s.ref(snap, "button", "Press me")
	for i := 1; i <= n; i++ {
		if r := s.ref(snap, "button", "Press me"); r != "" {
			ref = r
		}
		if ref == "" {
			return out, sizes, "no ref for the button in:\n" + clip(snap, 2000)
		}
		var total time.Duration
		size := 0
		for _, c := range s.click(ref) {
			text, d, err := s.s.call(ctx, c.tool, c.args)
			if err != nil {
				return out, sizes, err.Error()
			}
			total += d
			size += len(text)
			snap = text
		}
		if !strings.Contains(snap, "Clicks: "+strconv.Itoa(i)) {
			return out, sizes, fmt.Sprintf("click %d: the snapshot does not show %q:\n%s", i, "Clicks: "+strconv.Itoa(i), clip(snap, 2000))
		}
		out = append(out, total)
		sizes = append(sizes, size)
	}
	return out, sizes, ""
}

// fidelity is the snapshot-fidelity test's outcome.
type fidelity struct {
	Recall, Precision float64
	PerPage           map[string]float64 // recall per page
	Err               string
}

var fidelityLine = regexp.MustCompile(`^\s+(\S+)\s+recall ([\d.]+) precision ([\d.]+) \(chromium`)

// runFidelity runs test/e2e's TestSnapshotFidelity with this binary: it
// compares the snapshot with Chromium's own accessibility tree page by page.
func runFidelity(ctx context.Context, bin string) *fidelity {
	f := &fidelity{PerPage: map[string]float64{}}
	out := filepath.Join(os.TempDir(), fmt.Sprintf("tether-fidelity-%d.json", os.Getpid()))
	defer os.Remove(out)
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-timeout", "20m", "-run", "^TestSnapshotFidelity$", "-v", "./test/e2e")
	cmd.Env = append(os.Environ(), "TETHER_BIN="+bin, "TETHER_FIDELITY_OUT="+out)
	b, err := cmd.CombinedOutput()
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if m := fidelityLine.FindStringSubmatch(sc.Text()); m != nil {
			f.PerPage[m[1]], _ = strconv.ParseFloat(m[2], 64)
		}
	}
	if j, rerr := os.ReadFile(out); rerr == nil {
		var v struct{ Recall, Precision float64 }
		if json.Unmarshal(j, &v) == nil {
			f.Recall, f.Precision = v.Recall, v.Precision
		}
	}
	if err != nil {
		f.Err = fmt.Sprintf("%v\n%s", err, clip(string(b), 2000))
	}
	return f
}

func commandLine(name string, args ...string) string {
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
