//go:build !windows

package e2e

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
)

// The tests run side by side: each has its own daemon, config dir, port,
// browser and (for the window) Xvfb display. Alone, a test spends most of
// its time waiting on a browser or a daemon; the long runs beside it keep
// the CPUs busy meanwhile. Two kinds:
//
//   - parallel(t): at most shortSlots of them run at once (-parallel N
//     sets it; default: half the CPUs, at least 1). The tests are
//     CPU-bound once several run (browsers, the soak's calls, the corpus).
//     Measured on two cores: two short tests at a time beside the long
//     runs took the package 418-434 s, at a load average of 13-19; one at
//     a time, 478 s. One is the default there: a slower machine (CI's)
//     meets fewer of the tests' deadlines under such load.
//   - parallelLong(t): the long runs (the 3-minute soak, the corpus), which
//     start as soon as the serial tests are done and run beside the others
//     without taking a slot, so that they never end up last.
//
// A test that asserts a time bound (TestConsoleAndDialogsOnlyWhileShared),
// or whose huge page must answer within the time after which Tether calls
// a page stopped (TestBugReportCases, TestLargeSnapshotComesWhole: on a
// machine this loaded, a 5000-row page's redraw after a click can miss it),
// or that types into the window without seeing it (TestAppApprovals: the
// keys may land before the window shows the approval), calls neither: it
// runs alone, before the others.
var shortSlots chan struct{}

func TestMain(m *testing.M) {
	flag.Parse()
	n := max(runtime.NumCPU()/2, 1)
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			if v, err := strconv.Atoi(f.Value.String()); err == nil && v > 0 {
				n = v
			}
		}
	})
	shortSlots = make(chan struct{}, n)
	// The testing package's own limit must hold back no test: a test
	// waiting for one of shortSlots holds one of its places, and the long
	// runs (and their subtests) take none of shortSlots.
	if err := flag.Set("test.parallel", "10000"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(m.Run())
}

// parallel runs t beside the other tests, once one of shortSlots is free;
// the slot is given back after t's last cleanup.
func parallel(t *testing.T) {
	t.Parallel()
	shortSlots <- struct{}{}
	t.Cleanup(func() { <-shortSlots })
}

// parallelLong runs t beside the other tests from the start (see shortSlots).
func parallelLong(t *testing.T) {
	t.Parallel()
}
