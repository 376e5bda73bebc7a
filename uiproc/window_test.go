package uiproc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tether-browser/tether/config"
)

// The fake window executable is this test binary, re-run as
// TestWindowProcess with UIPROC_TEST_WINDOW naming what it does.
const envMode = "UIPROC_TEST_WINDOW"

// TestWindowProcess is the fake window process. It appends a line with its
// pid and TETHER_CONFIG_DIR to the file named by UIPROC_TEST_STARTS, then:
// "stay" runs until SIGTERM; "deaf" ignores SIGTERM; "crash" writes to
// stderr and exits 3; "exit" exits 0 at once (a window whose linger ended).
func TestWindowProcess(t *testing.T) {
	mode := os.Getenv(envMode)
	if mode == "" {
		t.Skip("only run as the fake window of the uiproc tests")
	}
	// Signals are set up before the start line: the tests signal once
	// they read it.
	term := make(chan os.Signal, 1)
	switch mode {
	case "stay":
		signal.Notify(term, syscall.SIGTERM)
	case "deaf":
		signal.Ignore(syscall.SIGTERM)
	}
	f, err := os.OpenFile(os.Getenv("UIPROC_TEST_STARTS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		os.Exit(10)
	}
	fmt.Fprintf(f, "%d %s\n", os.Getpid(), os.Getenv(config.EnvConfigDir))
	f.Close()
	switch mode {
	case "stay":
		<-term
		os.Exit(0)
	case "deaf":
		time.Sleep(time.Minute)
	case "crash":
		fmt.Fprintln(os.Stderr, "line one\nwebkit: could not open display")
		os.Exit(3)
	case "exit":
		os.Exit(0)
	}
	os.Exit(11)
}

type fakeWindow struct {
	w      *Window
	starts string
	shows  *atomic.Int32
	log    *syncBuffer
}

func newFake(t *testing.T, mode string) fakeWindow {
	t.Helper()
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv(envMode, mode)
	t.Setenv("UIPROC_TEST_STARTS", starts)
	var shows atomic.Int32
	log := &syncBuffer{}
	w := NewWindow(WindowConfig{
		Path:     os.Args[0],
		Args:     []string{"-test.run=^TestWindowProcess$"},
		Env:      ConfigEnv(config.Paths{Dir: "/tmp/tether-test-config"}),
		Show:     func() { shows.Add(1) },
		StopWait: 500 * time.Millisecond,
		Logger:   slog.New(slog.NewTextHandler(log, nil)),
	})
	t.Cleanup(func() { w.Close() })
	return fakeWindow{w, starts, &shows, log}
}

// lines returns the fake's start lines once there are n, failing after 5 s.
func (f fakeWindow) lines(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, _ := os.ReadFile(f.starts)
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(b) > 0 && len(lines) >= n {
			return lines
		}
		if time.Now().After(deadline) {
			started := 0
			if len(b) > 0 {
				started = len(lines)
			}
			t.Fatalf("the window process started %d times, want %d", started, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting for " + what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Opens at the same time start one process; the others ask it to show
// itself. It gets the config dir in its environment.
func TestOpenStartsOneProcess(t *testing.T) {
	f := newFake(t, "stay")
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.w.Open(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	lines := f.lines(t, 1)
	time.Sleep(100 * time.Millisecond)
	if lines = f.lines(t, 1); len(lines) != 1 {
		t.Fatalf("started %d window processes, want 1: %v", len(lines), lines)
	}
	if !strings.HasSuffix(lines[0], " /tmp/tether-test-config") {
		t.Errorf("the window process saw TETHER_CONFIG_DIR %q, want /tmp/tether-test-config", lines[0])
	}
	if got := f.shows.Load(); got != 19 {
		t.Errorf("Show called %d times, want 19 (every Open but the one that started it)", got)
	}
	if !f.w.Running() {
		t.Error("not Running")
	}
}

// Close ends the process (SIGTERM); later Opens are refused.
func TestCloseEndsTheProcess(t *testing.T) {
	f := newFake(t, "stay")
	if err := f.w.Open(); err != nil {
		t.Fatal(err)
	}
	f.lines(t, 1) // it installed its SIGTERM handler before writing
	if err := f.w.Close(); err != nil {
		t.Fatal(err)
	}
	if f.w.Running() {
		t.Error("still Running after Close")
	}
	if err := f.w.Open(); err != ErrClosed {
		t.Errorf("Open after Close: %v, want ErrClosed", err)
	}
	if strings.Contains(f.log.String(), "crashed") {
		t.Errorf("a stop logged as a crash:\n%s", f.log)
	}
}

// A process that ignores SIGTERM is killed after StopWait.
func TestCloseKillsADeafProcess(t *testing.T) {
	f := newFake(t, "deaf")
	if err := f.w.Open(); err != nil {
		t.Fatal(err)
	}
	f.lines(t, 1)
	start := time.Now()
	if err := f.w.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 500*time.Millisecond || d > 4*time.Second {
		t.Errorf("Close took %v, want about StopWait (500ms)", d)
	}
	if !strings.Contains(f.log.String(), "killing it") {
		t.Errorf("the kill is not logged:\n%s", f.log)
	}
}

// A crash is logged with its exit status and last stderr lines, and the
// next Open starts a new process.
func TestCrashIsLoggedAndTheNextOpenStartsAgain(t *testing.T) {
	f := newFake(t, "crash")
	if err := f.w.Open(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the crash to be reaped", func() bool { return !f.w.Running() })
	log := f.log.String()
	for _, want := range []string{"window process crashed", "exit status 3", "could not open display"} {
		if !strings.Contains(log, want) {
			t.Errorf("the crash log lacks %q:\n%s", want, log)
		}
	}
	if err := f.w.Open(); err != nil {
		t.Fatal(err)
	}
	f.lines(t, 2)
	if f.shows.Load() != 0 {
		t.Error("Show was called for a process that had crashed")
	}
}

// onExit is a slog handler that runs hook, in its own goroutine, when
// "window process exited" is logged, and only returns 100 ms later: what
// the daemon does while a tray click reads the log line races it.
type onExit struct {
	slog.Handler
	hook func()
}

func (h onExit) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "window process exited" {
		go h.hook()
		time.Sleep(100 * time.Millisecond)
	}
	return h.Handler.Handle(ctx, r)
}

// An Open that comes once the exit is logged (Open Tether as the linger
// ends) starts a new process; it used to ask the dead one to show itself,
// and no window came.
func TestOpenAsTheProcessExitsStartsANewOne(t *testing.T) {
	starts := filepath.Join(t.TempDir(), "starts")
	t.Setenv(envMode, "exit")
	t.Setenv("UIPROC_TEST_STARTS", starts)
	var shows atomic.Int32
	opened := make(chan error, 1)
	var w *Window
	h := onExit{Handler: slog.NewTextHandler(io.Discard, nil)}
	var once sync.Once
	h.hook = func() { once.Do(func() { opened <- w.Open() }) }
	w = NewWindow(WindowConfig{
		Path: os.Args[0], Args: []string{"-test.run=^TestWindowProcess$"},
		Show: func() { shows.Add(1) }, StopWait: 500 * time.Millisecond, Logger: slog.New(h),
	})
	t.Cleanup(func() { w.Close() })
	if err := w.Open(); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatal(err)
	}
	f := fakeWindow{w: w, starts: starts, shows: &shows}
	f.lines(t, 2)
	if n := shows.Load(); n != 0 {
		t.Errorf("Show was called %d times for a process that had exited", n)
	}
}

// A missing executable is an error that says what to do.
func TestOpenWithoutTheExecutable(t *testing.T) {
	w := NewWindow(WindowConfig{Path: filepath.Join(t.TempDir(), "tether-desktop")})
	if err := w.Open(); err == nil || !strings.Contains(err.Error(), "reinstall Tether") {
		t.Errorf("Open without the executable: %v", err)
	}
	if w.Running() {
		t.Error("Running without a process")
	}
}

func TestWindowExecutableAndEnv(t *testing.T) {
	exe := filepath.Join("/opt", "tether", "tether")
	if got, want := WindowExecutable(exe), filepath.Join("/opt", "tether", "tether-desktop"); got != want && got != exe {
		t.Errorf("WindowExecutable(%s) = %s", exe, got)
	}
	if env := ConfigEnv(config.Paths{Dir: "/x"}); len(env) != 1 || env[0] != config.EnvConfigDir+"=/x" {
		t.Errorf("ConfigEnv of a custom dir: %v", env)
	}
}
