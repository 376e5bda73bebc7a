// Command bench measures Tether for `make bench` and writes the results as
// Markdown (BENCHMARKS.md). It is not part of `make test`.
//
//	go run ./bench all [-bin bin/tether] [-smoke]   the whole BENCHMARKS.md on stdout
//	go run ./bench concurrency [-profiles 32 -tabs 8 -calls 10000 -workers 32] [-cpuprofile FILE]
//	go run ./bench noop [-bins bin/tether,OTHER] [-calls 200 -rounds 3] [-peers]   the no-op call alone, binaries in turn (before/after), and mcp-go's floor (floor.go)
//	go run ./bench pageload [-pages 30 -rounds 5]   page-load cost in unshared tabs (also in `all`)
//	go run ./bench pagesize [-bin bin/tether] [-rounds 3] [-peers] [-smoke]   snapshots of 1k–100k-element pages (also in `all`; -smoke: 1k and 5k)
//	go run ./bench flood [-duration 20s]            an unauthenticated flood: what it leaves behind (also in `all`)
//	go run ./bench desktop [-bin bin/tether] [-idle 60s] [-smoke]   bare `tether --hidden` and its window (also in `all`)
//
// `all` runs Tether, Playwright MCP and Chrome DevTools MCP side by side on
// the readability corpus (pages.go); -smoke runs 5 pages, Tether only, and is
// what CI runs (`make bench SMOKE=1`). Progress goes to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "concurrency":
		fs := flag.NewFlagSet("concurrency", flag.ExitOnError)
		profiles := fs.Int("profiles", 32, "fake browser profiles")
		tabs := fs.Int("tabs", 8, "shared tabs per profile")
		calls := fs.Int("calls", 10000, "tool calls in all")
		workers := fs.Int("workers", 32, "concurrent MCP sessions")
		cpuprofile := fs.String("cpuprofile", "", "write a CPU profile of the calls (the daemon, clients and fake extensions: one process) to this file")
		_ = fs.Parse(os.Args[2:])
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		r, err := runConcurrency(ctx, *profiles, *tabs, *calls, *workers, *cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		writeConcurrency(os.Stdout, r)
		if r.Errors > 0 || r.AppErrors > 0 || r.Crossings > 0 {
			os.Exit(1)
		}
	case "all":
		os.Exit(runAll(os.Args[2:]))
	case "noop":
		os.Exit(runNoop(os.Args[2:]))
	case "pageload":
		os.Exit(runPageLoad(os.Args[2:]))
	case "flood":
		os.Exit(runFlood(os.Args[2:]))
	case "pagesize":
		os.Exit(runPageSize(os.Args[2:]))
	case "desktop":
		os.Exit(runDesktopCmd(os.Args[2:]))
	case floorServerArg:
		os.Exit(runFloorServer())
	case floorHTTPArg:
		os.Exit(runFloorHTTP())
	case floorBridgeArg:
		if len(os.Args) < 3 {
			usage()
		}
		os.Exit(runFloorBridge(os.Args[2]))
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: bench all [-bin bin/tether] [-smoke] | bench concurrency [flags] | bench noop [flags] | bench pageload [flags] | bench pagesize [flags] | bench flood [flags] | bench desktop [-bin bin/tether] [-idle 60s] [-smoke]")
	os.Exit(2)
}

func writeConcurrency(w io.Writer, r ConcurrencyResult) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	fmt.Fprintf(w, "### Concurrency: %d profiles × %d tabs, %d mixed calls from %d MCP sessions\n\n", r.Profiles, r.Tabs, r.Calls, r.Workers)
	fmt.Fprintf(w, "Machine: %d cores, %s/%s. Fake extensions in Go over real WebSockets; calls through streamable HTTP MCP.\n\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintln(w, "| metric | value |")
	fmt.Fprintln(w, "|---|---|")
	fmt.Fprintf(w, "| errors | %d |\n", r.Errors)
	fmt.Fprintf(w, "| throughput | %.0f calls/s |\n", float64(r.Calls)/r.Elapsed.Seconds())
	if r.CPUSeconds > 0 {
		fmt.Fprintf(w, "| CPU (daemon, MCP clients and fake extensions: one process) | %.2f s, %.2f cores |\n", r.CPUSeconds, r.CPUSeconds/r.Elapsed.Seconds())
		fmt.Fprintf(w, "| throughput per CPU-second | %.0f calls |\n", float64(r.Calls)/r.CPUSeconds)
	}
	fmt.Fprintf(w, "| call latency through Tether, p50 / p99 | %s / %s |\n", ms(r.MCP.P50), ms(r.MCP.P99))
	fmt.Fprintf(w, "| bare WebSocket round trip, p50 / p99 | %s / %s |\n", ms(r.Bare.P50), ms(r.Bare.P99))
	fmt.Fprintf(w, "| added by Tether (MCP + routing), p50 / p99 | %s / %s |\n", ms(r.MCP.P50-r.Bare.P50), ms(r.MCP.P99-r.Bare.P99))
	fmt.Fprintf(w, "| two AI apps (%s) on the first profile meanwhile, each calling its own tab without naming it: calls / errors / crossings | %d / %d / %d |\n",
		strings.Join(r.Apps, ", "), r.AppCalls, r.AppErrors, r.Crossings)
}
