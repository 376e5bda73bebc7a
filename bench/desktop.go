package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
	testdesktop "github.com/tether-browser/tether/test/desktop"
	"github.com/tether-browser/tether/test/e2e"
)

// desktopWait bounds every wait on the desktop session: the X server, the
// bus, tether's log lines, the window's WebKit processes.
const desktopWait = 30 * time.Second

// desktopTools are what the desktop session needs (`make deps-test`
// installs them). Without one the row is not measured, and that is no error.
var desktopTools = []struct{ cmd, pkg string }{{"Xvfb", "xvfb"}, {"dbus-launch", "dbus-x11"}, {"xdotool", "xdotool"}}

// windowTitle is the window's title; the window process's unmapped GTK
// leader window is "tether-desktop", which "^Tether$" does not match.
const windowTitle = "Tether"

// treeIdle is one process and its descendants, sampled every second.
type treeIdle struct {
	Self     procIdle // the process itself
	Children procIdle // its descendants, summed per sample (PID 0)
	Total    procIdle // both, summed per sample (PID 0)
	// PSSMeanKB and PSSMaxKB are the total's proportional set size
	// (/proc/<pid>/smaps_rollup): pages shared between the processes (the
	// WebKitGTK and GTK libraries) split between them, not counted in each.
	PSSMeanKB, PSSMaxKB int
	Names               []string // the descendants' executables, sorted
	// Procs is the most processes (the process and its descendants) seen
	// at one sample; WebKitProcs the most of them that mapped WebKitGTK or
	// JavaScriptCore (/proc/<pid>/maps) at one sample, and WebKitNames
	// their executables, sorted.
	Procs, WebKitProcs int
	WebKitNames        []string
}

// windowOpen is one "Open Tether": POST /api/window/open through
// localclient until the window's KindWindow "painted" event arrived.
type windowOpen struct {
	// Paint is the bench's clock from the request to the event's arrival;
	// SinceStart the window's own figure (its process start to its first
	// frame, apitype.WindowEvent.SinceStartMs).
	Paint, SinceStart time.Duration
}

// desktopResult is bare `tether --hidden` (daemon and tray, what the login
// item runs; the window is its own process, started on demand) on a fresh
// Xvfb display and a private D-Bus session: idle with its window closed,
// then the window opened, watched, and closed.
type desktopResult struct {
	Window time.Duration // the idle window
	// treeIdle is `tether --hidden` and every process under it, idle,
	// its window closed (not opened yet).
	treeIdle
	// Cold is the first open; Reopens (not in a smoke run) open a new
	// window process each, after the one before exited.
	Cold    windowOpen
	Reopens []windowOpen
	// Open is the window process (tether-desktop) and its WebKit
	// processes, over OpenFor from its first painted frame.
	Open    treeIdle
	OpenFor time.Duration
	// Gone is from the window's WM_DELETE_WINDOW to the exit of the last
	// of the window's processes (GoneNames); 0 when not measured (a smoke
	// run). GoneLeft names those still running after goneWait.
	Gone      time.Duration
	GoneNames []string
	GoneLeft  []string
	Skipped   string // a desktop tool is missing: why (reported, not an error)
	Err       string
}

// Targets of the desktop rows.
const (
	desktopRSSTarget = 40 << 10 // KiB: `tether --hidden` idle, all its processes
	openTarget       = 1500 * time.Millisecond
	goneTarget       = 70 * time.Second // the default linger (60 s) and the exit
	// reopens is how many times a full run opens a new window process
	// after the cold open.
	reopens = 5
	// goneWait bounds the wait for the window's processes after its close.
	goneWait = 2 * goneTarget
	// openWatch is how long the open window is watched (at most the idle
	// window).
	openWatch = 10 * time.Second
)

// measureDesktop starts an X display, a session bus and `tether --hidden`
// on them in a fresh config dir and HOME under tmp, pairs a headless
// Chromium with it and opens an MCP session, as for the `tether serve` idle
// row, then watches it, silent, for window (as long as that row's) with its
// window closed. Then it opens the window through the local API as the
// tray's "Open Tether" does, times its first painted frame and watches its
// process while open. With full (not a smoke run) it also closes the window
// as a window manager does, times until its processes are gone (the real
// default linger), and opens it again. It stops everything it started.
func measureDesktop(ctx context.Context, bin, tmp string, window time.Duration, full bool) desktopResult {
	r := desktopResult{Window: window, OpenFor: min(window, openWatch)}
	for _, t := range desktopTools {
		if _, err := exec.LookPath(t.cmd); err != nil {
			r.Skipped = fmt.Sprintf("`%s` not found (apt-get install %s; `make deps-test` installs it)", t.cmd, t.pkg)
			return r
		}
	}
	var stops []func()
	defer func() {
		for _, stop := range slices.Backward(stops) {
			stop()
		}
	}()
	d, err := newDesktop(filepath.Join(tmp, "desktop"))
	if err != nil {
		r.Err = err.Error()
		return r
	}
	display, stop, err := startXvfb(ctx, d.env)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	stops = append(stops, stop)
	bus, stop, err := startBus(ctx, d.env)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	stops = append(stops, stop)
	app, log, err := startApp(bin, d, display, bus)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	stops = append(stops, func() { stopGroup(app) }) // the window process is in its group
	fail := func(err error) desktopResult {
		r.Err = fmt.Sprintf("%v\ntether's log:\n%s", err, log.String())
		return r
	}
	browser, err := pairBrowser(ctx, bin, d, log)
	if browser != nil {
		stops = append(stops, func() { stopGroup(browser) })
	}
	if err != nil {
		return fail(err)
	}
	// The MCP session through the stdio bridge, open and silent, after one
	// no-op call that goes through the paired extension.
	s, err := startSession(ctx, "Tether (window closed)", d.dir, d.tetherEnv(), bin, "mcp")
	if err != nil {
		return fail(err)
	}
	stops = append(stops, s.Close)
	if _, _, err := s.call(ctx, "browser_tabs", map[string]any{"action": "list"}); err != nil {
		return fail(err)
	}
	pid := app.Process.Pid
	if err := checkClosed(ctx, d.env, display, pid); err != nil {
		return fail(err)
	}
	logf("Tether with its window closed: idle for %s on display %s", window, display)
	if r.treeIdle, err = watchTree(ctx, window, pid); err != nil {
		return fail(err)
	}
	if err := checkClosed(ctx, d.env, display, pid); err != nil {
		return fail(err)
	}

	client := localclient.New(config.Paths{Dir: d.config})
	open, win, err := openWindow(ctx, client, pid)
	if err != nil {
		return fail(err)
	}
	r.Cold = open
	logf("the window painted %s after Open Tether; watching it for %s", ms(open.Paint), r.OpenFor)
	if r.Open, err = watchTree(ctx, r.OpenFor, win); err != nil {
		return fail(fmt.Errorf("the open window: %w", err))
	}
	if !full {
		return r
	}
	logf("closing the window (WM_DELETE_WINDOW); waiting for its processes to exit (default linger %s)", 60*time.Second)
	if err := closeWindow(ctx, &r, d.env, display, win, log); err != nil {
		return fail(err)
	}
	if len(r.GoneLeft) > 0 {
		return r // still running: no reopen
	}
	// Opens of a new process: the first after the cold one's linger, the
	// others each after SIGTERM to the one before.
	for i := range reopens {
		if i > 0 {
			if err := endWindow(ctx, win, log); err != nil {
				return fail(err)
			}
		}
		if open, win, err = openWindow(ctx, client, pid); err != nil {
			return fail(err)
		}
		r.Reopens = append(r.Reopens, open)
	}
	return r
}

// openWindow opens the window as the tray's "Open Tether" does (POST
// /api/window/open through localclient) and waits on the event stream,
// subscribed before the request, for the window's "painted" event. It
// returns the times and the window process's pid (tether-desktop under
// tether's pid).
func openWindow(ctx context.Context, client *localclient.Client, pid int) (windowOpen, int, error) {
	var o windowOpen
	ctx, cancel := context.WithTimeout(ctx, desktopWait)
	defer cancel()
	events, err := client.Events(ctx, 0)
	if err != nil {
		return o, 0, fmt.Errorf("the event stream: %w", err)
	}
	defer events.Close()
	start := time.Now()
	if err := client.OpenWindow(ctx); err != nil {
		return o, 0, fmt.Errorf("open the window: %w", err)
	}
	for {
		ev, err := events.Next()
		if err != nil {
			return o, 0, fmt.Errorf("no \"painted\" event within %s of opening the window: %w", desktopWait, err)
		}
		if ev.Kind == apitype.KindWindow && ev.Window != nil && ev.Window.Action == apitype.WindowPaintedAction {
			o.Paint = time.Since(start)
			o.SinceStart = time.Duration(ev.Window.SinceStartMs * float64(time.Millisecond))
			break
		}
	}
	for _, c := range descendants(pid) {
		if procName(c) == "tether-desktop" {
			return o, c, nil
		}
	}
	return o, 0, fmt.Errorf("the window painted, but no tether-desktop runs under tether (pid %d)", pid)
}

// closeWindow closes the visible window titled "Tether" as a window
// manager's close button does (WM_DELETE_WINDOW; it hides), then waits
// for the window process win and its descendants to exit (exitWatch). It
// sets r.Gone, r.GoneNames and, past goneWait, r.GoneLeft. The daemon must
// log the window process's exit (not a crash).
func closeWindow(ctx context.Context, r *desktopResult, env []string, display string, win int, log *e2e.LogWatcher) error {
	ids, err := xdotoolSync(ctx, env, display, "--onlyvisible", "--name", "^"+windowTitle+"$")
	if err != nil {
		return fmt.Errorf("the open window: %w", err)
	}
	w, err := watchExit(win)
	if err != nil {
		return err
	}
	defer w.Close()
	r.GoneNames = w.names()
	from := log.Len()
	start := time.Now()
	what, err := testdesktop.DeleteWindow(display, ids[0], desktopWait)
	if err != nil {
		return err
	}
	if what != "unmapped" {
		return fmt.Errorf("closing the window: it was %s, want hidden (unmapped)", what)
	}
	if r.Gone, r.GoneLeft, err = w.wait(ctx, start, goneWait); err != nil || len(r.GoneLeft) > 0 {
		return err
	}
	line, err := windowExitLine(log, from, win)
	if err != nil {
		return err
	}
	if !strings.Contains(line, "window process exited") {
		return fmt.Errorf("the window process did not exit cleanly after its linger: %s", line)
	}
	return nil
}

// endWindow ends the window process win with SIGTERM (as the daemon does
// when it stops) and waits until it and its descendants exited and the
// daemon logged its exit (it has forgotten it then), so that the next Open
// starts a new process.
func endWindow(ctx context.Context, win int, log *e2e.LogWatcher) error {
	w, err := watchExit(win)
	if err != nil {
		return err
	}
	defer w.Close()
	from := log.Len()
	start := time.Now()
	if err := syscall.Kill(win, syscall.SIGTERM); err != nil {
		return fmt.Errorf("end the window process (pid %d): %w", win, err)
	}
	_, left, err := w.wait(ctx, start, desktopWait)
	if err == nil && len(left) > 0 {
		err = fmt.Errorf("still running %s after SIGTERM to the window process: %s", desktopWait, strings.Join(left, ", "))
	}
	if err != nil {
		return err
	}
	line, err := windowExitLine(log, from, win)
	if err != nil {
		return err
	}
	if strings.Contains(line, "crashed") {
		return fmt.Errorf("the window process crashed on SIGTERM: %s", line)
	}
	return nil
}

// windowExitLine waits for the daemon's line on the exit of the window
// process pid (uiproc: "window process exited", "… stopped" or "…
// crashed …"), logged after line from; the daemon has forgotten the
// process then.
func windowExitLine(log *e2e.LogWatcher, from, pid int) (string, error) {
	field := regexp.MustCompile(`\bpid=` + strconv.Itoa(pid) + `\b`)
	for {
		line, i, err := log.WaitFor(from, desktopWait, "window process", "pid="+strconv.Itoa(pid))
		if err != nil {
			return "", fmt.Errorf("the window process (pid %d) exited, but the daemon did not log it: %w", pid, err)
		}
		if field.MatchString(line) && !strings.Contains(line, "window process started") {
			return line, nil
		}
		from = i + 1 // another pid with these digits first
	}
}

// exitWatch sees a process and its descendants exit: a pidfd for each,
// opened before what ends them, so that none exits unseen, and poll(2),
// which reports the exit (no sampling).
type exitWatch []watched

type watched struct {
	pid  int
	name string
	fd   int
}

// watchExit watches pid and the processes under it now.
func watchExit(pid int) (exitWatch, error) {
	var w exitWatch
	for _, p := range append([]int{pid}, descendants(pid)...) {
		fd, err := unix.PidfdOpen(p, 0)
		if err != nil {
			w.Close()
			return nil, fmt.Errorf("pidfd of %s (pid %d): %w", procName(p), p, err)
		}
		w = append(w, watched{p, procName(p), fd})
	}
	return w, nil
}

func (w exitWatch) names() []string {
	var out []string
	for _, p := range w {
		out = append(out, p.name)
	}
	slices.Sort(out)
	return out
}

// Close closes the pidfds.
func (w exitWatch) Close() {
	for _, p := range w {
		_ = unix.Close(p.fd)
	}
}

// wait waits, at most limit after start, until every watched process
// exited; it returns how long after start the last one did, and those
// still running at the limit.
func (w exitWatch) wait(ctx context.Context, start time.Time, limit time.Duration) (time.Duration, []string, error) {
	var last time.Duration
	deadline := start.Add(limit)
	for len(w) > 0 {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		if err := ctx.Err(); err != nil {
			return 0, nil, err
		}
		fds := make([]unix.PollFd, len(w))
		for i, p := range w {
			fds[i] = unix.PollFd{Fd: int32(p.fd), Events: unix.POLLIN}
		}
		n, err := unix.Poll(fds, int(min(left, time.Second).Milliseconds())+1)
		if errors.Is(err, unix.EINTR) || n == 0 {
			continue // a signal, or a second passed: look at ctx and the deadline
		}
		if err != nil {
			return 0, nil, fmt.Errorf("poll the window's processes: %w", err)
		}
		now := time.Since(start)
		var running exitWatch
		for i, p := range w {
			if fds[i].Revents != 0 {
				last = now
			} else {
				running = append(running, p)
			}
		}
		w = running
	}
	var still []string
	for _, p := range w {
		still = append(still, fmt.Sprintf("%s (pid %d)", p.name, p.pid))
	}
	return last, still, nil
}

// checkClosed checks that tether's window is closed: no tether-desktop
// runs under it, and the display has no window titled "Tether" (mapped or
// not).
func checkClosed(ctx context.Context, env []string, display string, pid int) error {
	for _, c := range descendants(pid) {
		if procName(c) == "tether-desktop" {
			return fmt.Errorf("a window process (tether-desktop, pid %d) runs under tether --hidden, which should open none", c)
		}
	}
	ids, err := xdotoolSearch(ctx, env, display, "--name", "^"+windowTitle+"$")
	if err != nil {
		return err
	}
	if len(ids) > 0 {
		return fmt.Errorf("the display %s has a window titled %q (xdotool: %v) though tether --hidden opened none", display, windowTitle, ids)
	}
	return nil
}

// desktop is the session's folders and the environment every process in it
// gets: the bench's own without its display, bus and Tether settings, and
// with a fresh HOME and runtime dir (WebKit's caches, the accessibility bus
// that the session bus starts) so that nothing touches the user's.
type desktop struct {
	dir, config string
	env         []string
}

func newDesktop(dir string) (*desktop, error) {
	d := &desktop{dir: dir, config: filepath.Join(dir, "config")}
	home, run := filepath.Join(dir, "home"), filepath.Join(dir, "run")
	for _, p := range []string{home, run, d.config} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			return nil, err
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
			"DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", config.EnvConfigDir, config.EnvPort:
			continue
		}
		d.env = append(d.env, kv)
	}
	d.env = append(d.env, "HOME="+home, "XDG_RUNTIME_DIR="+run)
	return d, nil
}

// tetherEnv is added for tether's own commands: the session's config dir.
func (d *desktop) tetherEnv() []string { return []string{config.EnvConfigDir + "=" + d.config} }

// startXvfb starts a virtual X display and returns its name (":N", a free
// number that Xvfb picks itself: -displayfd) once it accepts clients.
// Readiness is the X server's own signal (the protocol xinit uses): started
// with SIGUSR1 ignored, it sends SIGUSR1 to its parent when ready; sh execs
// it, so its parent is the bench. -noreset: it never resets, so it never
// signals again. stop ends it.
func startXvfb(ctx context.Context, env []string) (string, func(), error) {
	ready := make(chan os.Signal, 1)
	signal.Notify(ready, syscall.SIGUSR1)
	r, w, err := os.Pipe()
	if err != nil {
		signal.Stop(ready)
		return "", nil, err
	}
	defer r.Close()
	errs := &tailBuffer{max: 4 << 10}
	cmd := exec.Command("sh", "-c", `trap "" USR1; exec Xvfb -displayfd 3 -noreset -screen 0 1280x900x24 -nolisten tcp`)
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = errs
	err = cmd.Start()
	w.Close()
	if err != nil {
		signal.Stop(ready)
		return "", nil, fmt.Errorf("Xvfb: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		signal.Stop(ready) // after it exited: no SIGUSR1 can come any more
	}
	got := make(chan string, 1)
	go func() {
		b := make([]byte, 16)
		n, _ := r.Read(b) // "N\n", or EOF when it exits first
		got <- strings.TrimSpace(string(b[:n]))
	}()
	deadline := time.NewTimer(desktopWait)
	defer deadline.Stop()
	var display string
	for wait := ready; display == "" || wait != nil; {
		select {
		case n := <-got:
			if n == "" {
				stop()
				return "", nil, fmt.Errorf("Xvfb exited without a display number: %s", errs)
			}
			display = ":" + n
			got = nil
		case <-wait:
			wait = nil
		case <-deadline.C:
			stop()
			return "", nil, fmt.Errorf("Xvfb did not start within %s: %s", desktopWait, errs)
		case <-ctx.Done():
			stop()
			return "", nil, ctx.Err()
		}
	}
	return display, stop, nil
}

var (
	busAddr = regexp.MustCompile(`DBUS_SESSION_BUS_ADDRESS='([^']+)'`)
	busPID  = regexp.MustCompile(`DBUS_SESSION_BUS_PID=(\d+)`)
)

// startBus starts a private D-Bus session bus with dbus-launch (which
// returns once the bus listens) and returns its address; stop ends it. No
// panel runs on it, so the tray's item has no StatusNotifierWatcher to
// register with (tether logs that, and its item is on the bus all the same).
func startBus(ctx context.Context, env []string) (string, func(), error) {
	ctx, cancel := context.WithTimeout(ctx, desktopWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "dbus-launch", "--sh-syntax")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("dbus-launch: %w", err)
	}
	addr, pid := busAddr.FindSubmatch(out), busPID.FindSubmatch(out)
	if addr == nil || pid == nil {
		return "", nil, fmt.Errorf("dbus-launch printed %q", out)
	}
	n, _ := strconv.Atoi(string(pid[1]))
	return string(addr[1]), func() { _ = syscall.Kill(n, syscall.SIGTERM) }, nil
}

// startApp runs `tether --hidden` (what the login item runs) on display
// and bus, in the session's config dir, on a free port (TETHER_PORT=0),
// and waits until its daemon listens and its tray is up.
func startApp(bin string, d *desktop, display, bus string) (*exec.Cmd, *e2e.LogWatcher, error) {
	cmd := exec.Command(bin, "--hidden")
	cmd.Env = append(slices.Clone(d.env), "DISPLAY="+display, "DBUS_SESSION_BUS_ADDRESS="+bus, config.EnvPort+"=0")
	cmd.Env = append(cmd.Env, d.tetherEnv()...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // WebKit's processes join its group
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	log := e2e.NewLogWatcher(stderr)
	// No panel runs on the bus: the tray logs "no tray host", with its item.
	for _, line := range []string{"tether daemon listening", "tray_item="} {
		if _, _, err := log.WaitFor(0, desktopWait, line); err != nil {
			stopGroup(cmd)
			return nil, nil, fmt.Errorf("tether --hidden: %w\ntether's log:\n%s", err, log.String())
		}
	}
	return cmd, log, nil
}

var pendingProfile = regexp.MustCompile(`code=([` + broker.CodeAlphabet + `]{6})`)

// pairBrowser starts headless Chromium with the extension (`tether browser
// --headless`, the flags of every browser in the bench) and pairs it as a
// user would: bare tether asks before a new profile connects, so the bench
// approves the pairing code from the daemon's "waiting for approval" line with
// `tether profiles approve`. The browser is returned even on error, to stop.
func pairBrowser(ctx context.Context, bin string, d *desktop, log *e2e.LogWatcher) (*exec.Cmd, error) {
	from := log.Len()
	args := append([]string{"browser", "--headless", "--user-data-dir", filepath.Join(d.dir, "chrome"), "--"}, chromiumFlags...)
	browser := exec.Command(bin, args...)
	browser.Env = append(slices.Clone(d.env), d.tetherEnv()...)
	browser.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := browser.Start(); err != nil {
		return nil, err
	}
	line, _, err := log.WaitFor(from, 60*time.Second, "new browser profile waiting for approval")
	if err != nil {
		return browser, err
	}
	id := pendingProfile.FindStringSubmatch(line)
	if id == nil {
		return browser, fmt.Errorf("no pairing code in %q", line)
	}
	actx, cancel := context.WithTimeout(ctx, desktopWait)
	defer cancel()
	approve := exec.CommandContext(actx, bin, "profiles", "approve", id[1])
	approve.Env = browser.Env
	if out, err := approve.CombinedOutput(); err != nil {
		return browser, fmt.Errorf("tether profiles approve %s: %w\n%s", id[1], err, out)
	}
	_, _, err = log.WaitFor(from, desktopWait, "browser profile approved", "code="+id[1])
	return browser, err
}

// stopGroup ends a process the bench started with its own process group,
// and what it started: SIGTERM, then SIGKILL after 10 s.
func stopGroup(c *exec.Cmd) {
	if c == nil || c.Process == nil {
		return
	}
	kill := func(sig syscall.Signal) {
		if syscall.Kill(-c.Process.Pid, sig) != nil {
			_ = c.Process.Signal(sig) // no group of its own
		}
	}
	kill(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		kill(syscall.SIGKILL)
		<-done
	}
}

// xdotoolSync waits until a window matching args exists (xdotool search
// --sync), at most desktopWait, and returns the ids.
func xdotoolSync(ctx context.Context, env []string, display string, args ...string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, desktopWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xdotool", append([]string{"search", "--sync"}, args...)...)
	cmd.Env = append(slices.Clone(env), "DISPLAY="+display)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ids := strings.Fields(string(out)); err == nil && len(ids) > 0 {
		return ids, nil
	}
	return nil, fmt.Errorf("no window matching %q on %s within %s: %v %s", args, display, desktopWait, err, strings.TrimSpace(stderr.String()))
}

// xdotoolSearch runs `xdotool search` and returns the window ids; none
// found is its exit status 1 with no output.
func xdotoolSearch(ctx context.Context, env []string, display string, args ...string) ([]string, error) {
	out, err := xdotool(ctx, env, display, append([]string{"search"}, args...)...)
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 && out == "" {
		return nil, nil
	}
	return strings.Fields(out), err
}

func xdotool(ctx context.Context, env []string, display string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "xdotool", args...)
	cmd.Env = append(slices.Clone(env), "DISPLAY="+display)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil && stderr.Len() > 0 {
		err = fmt.Errorf("xdotool %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), err
}

// watchTree samples pid and its descendants (found again at every sample)
// every second for window: RSS from /proc/<pid>/status, PSS from
// /proc/<pid>/smaps_rollup, CPU (user + system) from /proc/<pid>/stat,
// whether it maps WebKit from /proc/<pid>/maps. A descendant that goes
// away between listing and reading is skipped; one that appears counts
// its CPU from its start.
func watchTree(ctx context.Context, window time.Duration, pid int) (treeIdle, error) {
	r := treeIdle{Self: procIdle{PID: pid}}
	cpuStart, cpuLast := map[int]float64{}, map[int]float64{}
	names, webkit := map[string]bool{}, map[string]bool{}
	for _, p := range append([]int{pid}, descendants(pid)...) {
		if c, err := cpuSeconds(p); err == nil {
			cpuStart[p], cpuLast[p] = c, c
		}
	}
	if _, ok := cpuStart[pid]; !ok {
		return r, fmt.Errorf("tether (pid %d) is gone", pid)
	}
	var selfSum, childSum, pssSum, samples int
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for deadline := time.Now().Add(window); time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-tick.C:
		}
		self, err := rssKB(pid)
		if err != nil {
			return r, fmt.Errorf("tether (pid %d): %w", pid, err)
		}
		cpuLast[pid], _ = cpuSeconds(pid)
		pss, _ := pssKB(pid)
		procs, mapping := 1, 0
		if mapsWebKit(pid) {
			mapping++
			webkit[procName(pid)] = true
		}
		children := 0
		for _, c := range descendants(pid) {
			kb, err := rssKB(c)
			if err != nil {
				continue // gone, or a zombie
			}
			procs++
			if mapsWebKit(c) {
				mapping++
				webkit[procName(c)] = true
			}
			children += kb
			if v, err := pssKB(c); err == nil {
				pss += v
			}
			if v, err := cpuSeconds(c); err == nil {
				cpuLast[c] = v
			}
			names[procName(c)] = true
		}
		samples++
		r.Procs, r.WebKitProcs = max(r.Procs, procs), max(r.WebKitProcs, mapping)
		selfSum, childSum, pssSum = selfSum+self, childSum+children, pssSum+pss
		r.Self.RSSMaxKB = max(r.Self.RSSMaxKB, self)
		r.Children.RSSMaxKB = max(r.Children.RSSMaxKB, children)
		r.Total.RSSMaxKB = max(r.Total.RSSMaxKB, self+children)
		r.PSSMaxKB = max(r.PSSMaxKB, pss)
	}
	if samples == 0 {
		return r, fmt.Errorf("no samples in %s", window)
	}
	r.Self.RSSMeanKB, r.Children.RSSMeanKB = selfSum/samples, childSum/samples
	r.Total.RSSMeanKB, r.PSSMeanKB = (selfSum+childSum)/samples, pssSum/samples
	for p, c := range cpuLast {
		if p == pid {
			r.Self.CPUSeconds = c - cpuStart[p]
		} else {
			r.Children.CPUSeconds += c - cpuStart[p] // 0 at start for a new one
		}
	}
	r.Total.CPUSeconds = r.Self.CPUSeconds + r.Children.CPUSeconds
	for n := range names {
		r.Names = append(r.Names, n)
	}
	slices.Sort(r.Names)
	for n := range webkit {
		r.WebKitNames = append(r.WebKitNames, n)
	}
	slices.Sort(r.WebKitNames)
	return r, nil
}

// mapsWebKit reports whether a process maps WebKitGTK or its JavaScriptCore
// (libwebkit2gtk-*, libjavascriptcoregtk-* in /proc/<pid>/maps); false
// when it is gone.
func mapsWebKit(pid int) bool {
	f, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.Contains(l, "/libwebkit2gtk") || strings.Contains(l, "/libjavascriptcoregtk") {
			return true
		}
	}
	return false
}

// descendants lists the processes under pid at any depth, from the parent
// pid in every /proc/<pid>/stat.
func descendants(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := statFields(p)
		if err != nil {
			continue // gone meanwhile
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	for queue := []int{pid}; len(queue) > 0; queue = queue[1:] {
		out = append(out, children[queue[0]]...)
		queue = append(queue, children[queue[0]]...)
	}
	return out
}

// procName is the base name of a process's executable as started (argv[0]
// in /proc/<pid>/cmdline: comm is cut at 15 characters).
func procName(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if argv0, _, _ := bytes.Cut(b, []byte{0}); err == nil && len(argv0) > 0 {
		return filepath.Base(string(argv0))
	}
	b, _ = os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// pssKB is a process's proportional set size in KiB (/proc/<pid>/smaps_rollup).
func pssKB(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Pss:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no Pss for pid %d", pid)
}

// runDesktop is measureDesktop with its progress on stderr.
func runDesktop(ctx context.Context, bin, tmp string, window time.Duration, full bool) desktopResult {
	logf("Tether with its window closed: Xvfb, a session bus, `tether --hidden`, a paired browser")
	r := measureDesktop(ctx, bin, tmp, window, full)
	switch {
	case r.Skipped != "":
		logf("Tether's desktop rows: not measured: %s", r.Skipped)
	case r.Err != "":
		logf("Tether's desktop rows: %s", clip(r.Err, 2000))
	}
	return r
}

// runDesktopCmd is `bench desktop`: the desktop rows alone, as Markdown on
// stdout. It fails on an error, not on a missed target.
func runDesktopCmd(args []string) int {
	fs := flag.NewFlagSet("desktop", flag.ExitOnError)
	binFlag := fs.String("bin", "bin/tether", "the lean tether binary (make build; tether-desktop next to it)")
	idle := fs.Duration("idle", 60*time.Second, "how long to watch `tether --hidden` idle")
	smoke := fs.Bool("smoke", false, "as `all -smoke`: a 3 s idle window (unless -idle is given), and the window is not closed")
	_ = fs.Parse(args)
	idleSet := false
	fs.Visit(func(f *flag.Flag) { idleSet = idleSet || f.Name == "idle" })
	if *smoke && !idleSet {
		*idle = smokeIdle
	}
	bin, err := filepath.Abs(*binFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "tether-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := runDesktop(ctx, bin, tmp, *idle, !*smoke)
	writeDesktop(os.Stdout, r)
	if r.Err != "" {
		return 1
	}
	return 0
}
