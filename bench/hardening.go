package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// fuzzTargets are the Go fuzz targets CI runs for 30 s each (.ci/run):
// target name and package.
var fuzzTargets = [][2]string{
	{"FuzzDecode", "./protocol"},
	{"FuzzArgValidator", "./mcp"},
	{"FuzzCleanLabel", "./broker"},
	{"FuzzCleanClientName", "./mcp"},
}

// hardeningResult holds the robustness figures: fuzz executions per target
// in a CI-length run, and the soak test's counts.
type hardeningResult struct {
	FuzzTime  time.Duration
	FuzzExecs map[string]int64
	FuzzErr   string
	Soak      soakFigures
	SoakErr   string
}

// soakFigures are what TestSoak reports on its SOAK line.
type soakFigures struct {
	Calls, Hung, Duplicated int
	Duration                string
}

var (
	execsRe = regexp.MustCompile(`execs: (\d+)`)
	soakRe  = regexp.MustCompile(`SOAK: (\d+) calls over 2 profiles in (\S+); (\d+) hung; (\d+) duplicated actions`)
)

// measureHardening runs each fuzz target for fuzzTime, as CI does, and the
// 3-minute soak test (real Chromium, bin as the tether under test), from the
// module root (the current directory under `make bench`).
func measureHardening(ctx context.Context, bin string, fuzzTime time.Duration) *hardeningResult {
	r := &hardeningResult{FuzzTime: fuzzTime, FuzzExecs: map[string]int64{}}
	for _, t := range fuzzTargets {
		logf("fuzz %s for %s", t[0], fuzzTime)
		out, err := goTest(ctx, nil, "-run", "^$", "-fuzz", "^"+t[0]+"$", "-fuzztime", fuzzTime.String(), t[1])
		all := execsRe.FindAllSubmatch(out, -1)
		if err != nil || len(all) == 0 {
			r.FuzzErr = fmt.Sprintf("%s: %v: %s", t[0], err, tail(out, 600))
			break
		}
		n, _ := strconv.ParseInt(string(all[len(all)-1][1]), 10, 64)
		r.FuzzExecs[t[0]] = n
	}
	logf("soak test (3 minutes, real Chromium)")
	out, err := goTest(ctx, []string{"TETHER_BIN=" + bin}, "-count=1", "-v", "-run", "^TestSoak$", "-timeout", "15m", "./test/e2e/")
	m := soakRe.FindSubmatch(out)
	switch {
	case m == nil:
		r.SoakErr = fmt.Sprintf("no SOAK line (%v): %s", err, tail(out, 600))
	default:
		r.Soak.Calls, _ = strconv.Atoi(string(m[1]))
		r.Soak.Duration = string(m[2])
		r.Soak.Hung, _ = strconv.Atoi(string(m[3]))
		r.Soak.Duplicated, _ = strconv.Atoi(string(m[4]))
		if err != nil {
			r.SoakErr = fmt.Sprintf("the soak test failed (%v); its counts are above", err)
		}
	}
	return r
}

// goTest runs `go test args…` with extra environment and returns its output.
func goTest(ctx context.Context, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", append([]string{"test"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func writeHardening(w io.Writer, r *hardeningResult) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("Fuzzing: each Go fuzz target for %s, one target per run, from its committed seed corpus (what `.ci/run` does in CI).\n\n", r.FuzzTime)
	p("| fuzz target | executions |\n|---|---|\n")
	var total int64
	for _, t := range fuzzTargets {
		if n, ok := r.FuzzExecs[t[0]]; ok {
			p("| `%s` (`%s`) | %d |\n", t[0], t[1], n)
			total += n
		}
	}
	p("| **all** | **%d** |\n\n", total)
	if r.FuzzErr != "" {
		p("Fuzzing failed: %s\n\n", r.FuzzErr)
	}
	p("Soak (`TestSoak`): random tool calls over two real Chromium profiles while their service workers are stopped every 15 s, the daemon is killed once and one browser restarted once; the page's server counts every click and load, so an action that ran twice shows.\n\n")
	if r.Soak.Calls > 0 {
		p("| metric | value |\n|---|---|\n")
		p("| calls | %d in %s |\n| hung calls | %d |\n| duplicated actions | %d |\n\n", r.Soak.Calls, r.Soak.Duration, r.Soak.Hung, r.Soak.Duplicated)
	}
	if r.SoakErr != "" {
		p("Soak: %s\n\n", r.SoakErr)
	}
}
