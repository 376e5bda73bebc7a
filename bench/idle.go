package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// procIdle is one process's footprint while idle.
type procIdle struct {
	PID        int
	RSSMeanKB  int
	RSSMaxKB   int
	CPUSeconds float64 // user + system time over the window
}

// idleResult is the idle window: the daemon (`tether serve`, with the
// browser's extension connected and an MCP session open) and the stdio
// bridge (`tether mcp`) that the session runs through.
type idleResult struct {
	Window         time.Duration
	Daemon, Bridge procIdle
	Err            string
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times (100 on Linux).
const clockTicks = 100

func watchIdle(ctx context.Context, window time.Duration, daemon, bridge int) idleResult {
	r := idleResult{Window: window, Daemon: procIdle{PID: daemon}, Bridge: procIdle{PID: bridge}}
	procs := []*procIdle{&r.Daemon, &r.Bridge}
	start := make([]float64, len(procs))
	sums := make([]int, len(procs))
	for i, p := range procs {
		c, err := cpuSeconds(p.PID)
		if err != nil {
			r.Err = err.Error()
			return r
		}
		start[i] = c
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	deadline := time.Now().Add(window)
	samples := 0
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			r.Err = ctx.Err().Error()
			return r
		case <-tick.C:
		}
		samples++
		for i, p := range procs {
			kb, err := rssKB(p.PID)
			if err != nil {
				r.Err = err.Error()
				return r
			}
			sums[i] += kb
			p.RSSMaxKB = max(p.RSSMaxKB, kb)
		}
	}
	for i, p := range procs {
		c, err := cpuSeconds(p.PID)
		if err != nil {
			r.Err = err.Error()
			return r
		}
		p.CPUSeconds = c - start[i]
		if samples > 0 {
			p.RSSMeanKB = sums[i] / samples
		}
	}
	return r
}

func rssKB(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

func cpuSeconds(pid int) (float64, error) {
	f, err := statFields(pid)
	if err != nil {
		return 0, err
	}
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / clockTicks, nil
}

// statFields are /proc/<pid>/stat's fields from the state on (field 3 of
// proc(5) is f[0]: the ppid is f[1], utime f[11], stime f[12]), after the
// command name, which may hold spaces.
func statFields(pid int) ([]string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return nil, fmt.Errorf("short /proc/%d/stat", pid)
	}
	return f, nil
}
