// Command bench measures Tether for `make bench` and writes the results as
// Markdown (BENCHMARKS.md sections). It is not part of `make test`.
//
//	go run ./bench concurrency [-profiles 32 -tabs 8 -calls 10000 -workers 32]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] != "concurrency" {
		fmt.Fprintln(os.Stderr, "usage: bench concurrency [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("concurrency", flag.ExitOnError)
	profiles := fs.Int("profiles", 32, "fake browser profiles")
	tabs := fs.Int("tabs", 8, "shared tabs per profile")
	calls := fs.Int("calls", 10000, "tool calls in all")
	workers := fs.Int("workers", 32, "concurrent MCP sessions")
	_ = fs.Parse(os.Args[2:])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r, err := runConcurrency(ctx, *profiles, *tabs, *calls, *workers)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }
	fmt.Printf("### Concurrency: %d profiles × %d tabs, %d mixed calls from %d MCP sessions\n\n", r.Profiles, r.Tabs, r.Calls, r.Workers)
	fmt.Printf("Machine: %d cores, %s/%s. Fake extensions in Go over real WebSockets; calls through streamable HTTP MCP.\n\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	fmt.Println("| metric | value |")
	fmt.Println("|---|---|")
	fmt.Printf("| errors | %d |\n", r.Errors)
	fmt.Printf("| throughput | %.0f calls/s |\n", float64(r.Calls)/r.Elapsed.Seconds())
	fmt.Printf("| call latency through Tether, p50 / p99 | %s / %s |\n", ms(r.MCP.P50), ms(r.MCP.P99))
	fmt.Printf("| bare WebSocket round trip, p50 / p99 | %s / %s |\n", ms(r.Bare.P50), ms(r.Bare.P99))
	fmt.Printf("| added by Tether (MCP + routing), p50 / p99 | %s / %s |\n", ms(r.MCP.P50-r.Bare.P50), ms(r.MCP.P99-r.Bare.P99))
	if r.Errors > 0 {
		os.Exit(1)
	}
}
