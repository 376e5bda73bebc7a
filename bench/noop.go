package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// noopRun is one binary's no-op figures in one round.
type noopRun struct {
	// Bridge and HTTP are the client's wall times of the no-op through
	// `tether mcp` (stdio) and straight over streamable HTTP.
	Bridge, HTTP []time.Duration
	// DaemonCPU and BridgeCPU are the CPU time of `tether serve` and of
	// `tether mcp` per no-op through the bridge (0: /proc not there).
	DaemonCPU, BridgeCPU time.Duration
	Err                  string
}

// runNoop is `bench noop`: the bench's no-op (browser_tabs list, answered
// from the daemon's registry) against a real daemon and browser, for one
// or more tether binaries taken in turn, round after round, so that
// before/after figures share the machine's conditions; with -peers, Chrome
// DevTools MCP's list_pages in each round too (the ratio's peer). Each
// round also times mcp-go's floor (floor.go).
func runNoop(args []string) int {
	fs := flag.NewFlagSet("noop", flag.ExitOnError)
	bins := fs.String("bins", "bin/tether", "comma-separated tether binaries to compare")
	calls := fs.Int("calls", 200, "no-op calls per server and round (after 5 to warm up)")
	rounds := fs.Int("rounds", 3, "rounds")
	peers := fs.Bool("peers", false, "also time Chrome DevTools MCP's list_pages (npm install at run time)")
	_ = fs.Parse(args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	tmp, err := os.MkdirTemp("", "tether-bench-noop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	peerDir, err := peersUnder(ctx, tmp, *peers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	binList := strings.Split(*bins, ",")
	runs := make([][]noopRun, len(binList))
	var devtools, floor, bridged [][]time.Duration
	for r := range *rounds {
		for i, bin := range binList {
			logf("round %d: %s", r+1, bin)
			runs[i] = append(runs[i], noopTether(ctx, bin, filepath.Join(tmp, fmt.Sprintf("r%d-b%d", r, i)), *calls))
		}
		if *peers {
			logf("round %d: Chrome DevTools MCP", r+1)
			s, err := startDevtools(ctx, peerDir, filepath.Join(tmp, fmt.Sprintf("r%d-devtools", r)))
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench: Chrome DevTools MCP:", err)
				return 1
			}
			d, err := noops(ctx, s, *calls)
			s.s.Close()
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				return 1
			}
			devtools = append(devtools, d)
		}
		for _, fl := range []struct {
			name, dir string
			time      func(context.Context, string, int) ([]time.Duration, error)
			into      *[][]time.Duration
		}{{"mcp-go floor", "floor", noopFloor, &floor}, {"mcp-go floor, bridged", "floor-bridged", noopFloorBridged, &bridged}} {
			logf("round %d: %s", r+1, fl.name)
			d, err := fl.time(ctx, filepath.Join(tmp, fmt.Sprintf("r%d-%s", r, fl.dir)), *calls)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s: %v\n", fl.name, err)
				return 1
			}
			*fl.into = append(*fl.into, d)
		}
	}
	writeNoop(os.Stdout, binList, runs, devtools, floor, bridged, *calls)
	for _, rs := range runs {
		for _, r := range rs {
			if r.Err != "" {
				return 1
			}
		}
	}
	return 0
}

// noops times n no-op calls of s after 5 to warm up.
func noops(ctx context.Context, s *server, n int) ([]time.Duration, error) {
	var out []time.Duration
	for i := range n + 5 {
		_, d, err := s.s.call(ctx, s.noop.tool, s.noop.args)
		if err != nil {
			return nil, err
		}
		if i >= 5 {
			out = append(out, d)
		}
	}
	return out, nil
}

// noopTether starts bin's daemon and browser in tmp and times its no-op
// through the bridge (with the CPU time both processes spent on it), then
// over HTTP.
func noopTether(ctx context.Context, bin, tmp string, n int) noopRun {
	var r noopRun
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		r.Err = err.Error()
		return r
	}
	t, err := startTether(ctx, bin, tmp)
	if err != nil {
		r.Err = err.Error()
		logf("%s", r.Err)
		return r
	}
	defer func() { t.s.Close(); t.stop() }()
	// Warm up before the CPU count starts.
	for range 5 {
		if _, _, err := t.s.call(ctx, t.noop.tool, t.noop.args); err != nil {
			r.Err = err.Error()
			return r
		}
	}
	daemonPID, bridgePID := t.daemon.Process.Pid, t.s.pid()
	d0, derr := cpuSeconds(daemonPID)
	b0, berr := cpuSeconds(bridgePID)
	for range n {
		_, d, err := t.s.call(ctx, t.noop.tool, t.noop.args)
		if err != nil {
			r.Err = err.Error()
			return r
		}
		r.Bridge = append(r.Bridge, d)
	}
	if d1, err := cpuSeconds(daemonPID); err == nil && derr == nil {
		r.DaemonCPU = time.Duration((d1 - d0) / float64(n) * float64(time.Second))
	}
	if b1, err := cpuSeconds(bridgePID); err == nil && berr == nil {
		r.BridgeCPU = time.Duration((b1 - b0) / float64(n) * float64(time.Second))
	}
	r.HTTP = noopHTTP(ctx, t, n)
	return r
}

func writeNoop(w io.Writer, bins []string, runs [][]noopRun, devtools, floor, bridged [][]time.Duration, calls int) {
	us := func(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d)/float64(time.Microsecond)) }
	fmt.Fprintf(w, "### No-op call (browser_tabs list): %d calls per round\n\n", calls)
	fmt.Fprintln(w, "| binary | round | bridge p50 | bridge p95 | HTTP p50 | HTTP p95 | daemon CPU / call | bridge CPU / call | Chrome DevTools MCP p50 | bridge p50 ÷ DevTools p50 | mcp-go floor p50 | floor ÷ DevTools | floor bridged p50 | bridged ÷ DevTools |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for i, bin := range bins {
		for r, run := range runs[i] {
			if run.Err != "" {
				fmt.Fprintf(w, "| %s | %d | failed: %s |\n", bin, r+1, clip(run.Err, 200))
				continue
			}
			peer, ratio, low, lowRatio, mid, midRatio := "", "", "", "", "", ""
			if r < len(floor) {
				low = us(quantile(floor[r], 0.5))
			}
			if r < len(bridged) {
				mid = us(quantile(bridged[r], 0.5))
			}
			if r < len(devtools) {
				p := quantile(devtools[r], 0.5)
				peer, ratio = us(p), fmt.Sprintf("%.2f×", float64(quantile(run.Bridge, 0.5))/float64(p))
				if r < len(floor) {
					lowRatio = fmt.Sprintf("%.2f×", float64(quantile(floor[r], 0.5))/float64(p))
				}
				if r < len(bridged) {
					midRatio = fmt.Sprintf("%.2f×", float64(quantile(bridged[r], 0.5))/float64(p))
				}
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", bin, r+1,
				us(quantile(run.Bridge, 0.5)), us(quantile(run.Bridge, 0.95)), us(quantile(run.HTTP, 0.5)), us(quantile(run.HTTP, 0.95)),
				us(run.DaemonCPU), us(run.BridgeCPU), peer, ratio, low, lowRatio, mid, midRatio)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "mcp-go floor: mcp-go's own stdio server with one tool answering a fixed line from memory, one process, no daemon or browser (bench/floor.go), timed with the same client. Floor bridged: the same server over streamable HTTP in its own process, reached through Tether's bridge (package bridge, as `tether mcp` runs it): the shape of Tether's path with none of the daemon's work.")
	fmt.Fprintln(w)
}
