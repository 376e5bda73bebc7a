package main

import (
	"bytes"
	"context"
	"errors"
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

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/test/e2e"
)

// desktopWait bounds every wait on the desktop session: the X server, the
// bus, tether's log lines, the window's WebKit processes.
const desktopWait = 30 * time.Second

// desktopTools are what the desktop session needs (`make deps-test`
// installs them). Without one the row is not measured, and that is no error.
var desktopTools = []struct{ cmd, pkg string }{{"Xvfb", "xvfb"}, {"dbus-launch", "dbus-x11"}, {"xdotool", "xdotool"}}

// windowTitle is the window's title; the unmapped GTK leader window is
// "tether", which xdotool's case-insensitive --name also matches.
const windowTitle = "Tether"

// treeIdle is one process and its descendants while idle.
type treeIdle struct {
	Self     procIdle // the process itself
	Children procIdle // its descendants, summed per sample (PID 0)
	Total    procIdle // both, summed per sample (PID 0)
	// PSSMeanKB and PSSMaxKB are the total's proportional set size
	// (/proc/<pid>/smaps_rollup): pages shared between the processes (the
	// WebKitGTK and GTK libraries) split between them, not counted in each.
	PSSMeanKB, PSSMaxKB int
	Names               []string // the descendants' executables, sorted
}

// desktopResult is bare `tether --hidden` (daemon, tray and window, the
// window hidden) idle, on a fresh Xvfb display and a private D-Bus session.
type desktopResult struct {
	Window time.Duration
	treeIdle
	Skipped string // a desktop tool is missing: why (reported, not an error)
	Err     string
}

// measureDesktop starts an X display, a session bus and `tether --hidden`
// on them in a fresh config dir and HOME under tmp, pairs a headless
// Chromium with it and opens an MCP session, as for the `tether serve` idle
// row, then watches it, silent, for window (as long as that row's). It
// stops everything it started.
func measureDesktop(ctx context.Context, bin, tmp string, window time.Duration) desktopResult {
	r := desktopResult{Window: window}
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
	stops = append(stops, func() { stopGroup(app) })
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
	s, err := startSession(ctx, "Tether (window hidden)", d.dir, d.tetherEnv(), bin, "mcp")
	if err != nil {
		return fail(err)
	}
	stops = append(stops, s.Close)
	if _, _, err := s.call(ctx, "browser_tabs", map[string]any{"action": "list"}); err != nil {
		return fail(err)
	}
	if err := waitWebProcess(ctx, app.Process.Pid); err != nil {
		return fail(err)
	}
	if err := checkHidden(ctx, d.env, display); err != nil {
		return fail(err)
	}
	logf("Tether with its window hidden: idle for %s on display %s", window, display)
	if r.treeIdle, err = watchTree(ctx, window, app.Process.Pid); err != nil {
		return fail(err)
	}
	if err := checkHidden(ctx, d.env, display); err != nil {
		return fail(err)
	}
	return r
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

// waitWebProcess waits until the window's page has a WebKit web process
// under pid (looking every 100 ms: /proc has no event for a new process).
func waitWebProcess(ctx context.Context, pid int) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.NewTimer(desktopWait)
	defer deadline.Stop()
	for {
		for _, c := range descendants(pid) {
			if strings.HasPrefix(procName(c), "WebKitWebProcess") {
				return nil
			}
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return fmt.Errorf("no WebKitWebProcess under tether (pid %d) within %s: the window did not load", pid, desktopWait)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// checkHidden reads the display's windows with xdotool: a window titled
// exactly "Tether" must exist (so that "not visible" is not "not there"),
// and no window matching it may be visible (mapped and viewable).
func checkHidden(ctx context.Context, env []string, display string) error {
	ids, err := xdotoolSearch(ctx, env, display, "--name", "^"+windowTitle+"$")
	if err != nil {
		return err
	}
	found := false
	for _, id := range ids {
		name, err := xdotool(ctx, env, display, "getwindowname", id)
		found = found || (err == nil && name == windowTitle)
	}
	if !found {
		return fmt.Errorf("no window titled %q on %s", windowTitle, display)
	}
	ids, err = xdotoolSearch(ctx, env, display, "--onlyvisible", "--name", "^"+windowTitle+"$")
	if err != nil {
		return err
	}
	if len(ids) > 0 {
		return fmt.Errorf("tether --hidden has a visible window on %s (xdotool: %v)", display, ids)
	}
	return nil
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
// /proc/<pid>/smaps_rollup, CPU (user + system) from /proc/<pid>/stat. A
// descendant that goes away between listing and reading is skipped; one
// that appears counts its CPU from its start.
func watchTree(ctx context.Context, window time.Duration, pid int) (treeIdle, error) {
	r := treeIdle{Self: procIdle{PID: pid}}
	cpuStart, cpuLast := map[int]float64{}, map[int]float64{}
	names := map[string]bool{}
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
		children := 0
		for _, c := range descendants(pid) {
			kb, err := rssKB(c)
			if err != nil {
				continue // gone, or a zombie
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
	return r, nil
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
