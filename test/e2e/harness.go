//go:build !windows

// Package e2e is the end-to-end test harness: it runs the real tether binary,
// real Chromium with the real extension (through `tether browser`), real
// WebSockets and a real MCP client. Later suites reuse its helpers.
package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/launcher"
)

// HostResolverRules keeps saved real pages from stalling on DNS for their
// external hosts (DEVELOPERS.md); localhost stays reachable, as another
// site than 127.0.0.1 (an out-of-process frame in tests).
const HostResolverRules = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost"

// Binary returns the tether binary under test: $TETHER_BIN (the Makefile sets
// it; its tether-desktop lies next to it), else one built into a temporary
// folder with tether-desktop, the build with the window, beside it.
func Binary(t testing.TB) string {
	t.Helper()
	if b := os.Getenv("TETHER_BIN"); b != "" {
		return b
	}
	out := BuildBinary(t, "")
	build(t, filepath.Join(filepath.Dir(out), "tether-desktop"), "-tags", "desktop,production,webkit2_41")
	return out
}

// BuildBinary builds the tether binary (without the window) with optional
// -ldflags.
func BuildBinary(t testing.TB, ldflags string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "tether")
	var args []string
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	build(t, out, args...)
	return out
}

func build(t testing.TB, out string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", append(append([]string{"build", "-o", out}, args...), ".")...)
	cmd.Dir = moduleRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
}

func moduleRoot(t testing.TB) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := wd; d != filepath.Dir(d); d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
	}
	t.Fatal("go.mod not found above " + wd)
	return ""
}

// RequireChromium returns the Chromium path. It fails the test in CI (CI is
// set) and skips it elsewhere when Chromium is missing.
func RequireChromium(t testing.TB) string {
	t.Helper()
	for _, c := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed; .ci/run installs it (apt-get install chromium)")
	}
	t.Skip("chromium is not installed (apt-get install chromium); skipping the real-browser test")
	return ""
}

// LogWatcher collects a process's output lines and lets tests wait for one.
type LogWatcher struct {
	mu    sync.Mutex
	lines []string
	ch    chan struct{} // closed and replaced on every new line
	done  bool
}

// NewLogWatcher reads r until EOF.
func NewLogWatcher(r io.Reader) *LogWatcher {
	w := &LogWatcher{ch: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			close(w.ch)
			w.ch = make(chan struct{})
			w.mu.Unlock()
		}
		w.mu.Lock()
		w.done = true
		close(w.ch)
		w.mu.Unlock()
	}()
	return w
}

// WaitFor waits for a line, after line index from, containing every one of
// parts; it returns the line and its index. It fails after timeout.
func (w *LogWatcher) WaitFor(from int, timeout time.Duration, parts ...string) (string, int, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		for i := from; i < len(w.lines); i++ {
			ok := true
			for _, p := range parts {
				if !strings.Contains(w.lines[i], p) {
					ok = false
					break
				}
			}
			if ok {
				l := w.lines[i]
				w.mu.Unlock()
				return l, i, nil
			}
		}
		ch, done := w.ch, w.done
		w.mu.Unlock()
		if done {
			return "", 0, fmt.Errorf("output ended without a line containing %q", parts)
		}
		select {
		case <-ch:
		case <-deadline.C:
			return "", 0, fmt.Errorf("no line containing %q within %s", parts, timeout)
		}
	}
}

// Len is the number of lines so far.
func (w *LogWatcher) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.lines)
}

// String is every line so far.
func (w *LogWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// Daemon is a running `tether serve`.
type Daemon struct {
	Bin    string
	Paths  config.Paths
	Record config.DaemonRecord
	Token  string
	Log    *LogWatcher
	cmd    *exec.Cmd
	args   []string
	env    []string // nil: this process's environment plus the config dir

	stopOnce sync.Once
	stopErr  error
}

// Env is the environment for tether commands that share this daemon.
func (d *Daemon) Env() []string {
	if d.env != nil {
		return d.env
	}
	return append(os.Environ(), config.EnvConfigDir+"="+d.Paths.Dir)
}

// PID is the daemon's process id.
func (d *Daemon) PID() int { return d.cmd.Process.Pid }

// UserEnv is this process's environment for another user: its own home,
// config dir, session bus and display ("" for none), and a free port.
func UserEnv(home, configDir, bus, display string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "CODEX_HOME", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", config.EnvConfigDir, config.EnvPort:
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, config.EnvConfigDir+"="+configDir, config.EnvPort+"=0", "DBUS_SESSION_BUS_ADDRESS="+bus)
	if display != "" {
		env = append(env, "DISPLAY="+display)
	}
	return env
}

// StartTether runs bare `tether` (the daemon with its tray, and its window
// when env names a display) with args, in env (see UserEnv) for configDir,
// and waits until it listens and its tray is up.
func StartTether(t testing.TB, bin, configDir string, env []string, args ...string) *Daemon {
	t.Helper()
	d := &Daemon{Bin: bin, Paths: config.Paths{Dir: configDir}, env: env}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	d.start(t, cmd)
	// "tray ready", or "no tray host" where no panel runs (a private
	// session bus): both name the item once it is on the bus.
	if _, _, err := d.Log.WaitFor(0, 30*time.Second, "tray_item="); err != nil {
		t.Fatalf("the tray did not start: %v", err)
	}
	return d
}

// StartDaemon runs `tether serve --port 0` in a fresh config dir and waits
// until it listens.
func StartDaemon(t testing.TB, bin string, args ...string) *Daemon {
	t.Helper()
	return StartDaemonAt(t, bin, filepath.Join(t.TempDir(), "config"), 0, args...)
}

// Restart stops d and starts a new daemon on the same config dir and port
// (the extension keeps dialling that port), with the same arguments.
func (d *Daemon) Restart(t testing.TB) *Daemon {
	t.Helper()
	if err := d.Stop(); err != nil {
		t.Logf("daemon exit: %v", err)
	}
	return StartDaemonAt(t, d.Bin, d.Paths.Dir, d.Record.Port, d.args...)
}

// StartDaemonAt runs `tether serve` with config dir dir on port (0: a free
// one) and waits until it listens.
func StartDaemonAt(t testing.TB, bin, dir string, port int, args ...string) *Daemon {
	t.Helper()
	d := &Daemon{Bin: bin, Paths: config.Paths{Dir: dir}, args: args}
	cmd := exec.Command(bin, append([]string{"serve", "--port", strconv.Itoa(port)}, args...)...)
	cmd.Env = d.Env()
	d.start(t, cmd)
	return d
}

// start runs cmd, a tether daemon (serve or bare tether) for d's config
// dir, stops it at cleanup (printing its log if the test failed), and
// waits until it listens.
func (d *Daemon) start(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.cmd = cmd
	d.Log = NewLogWatcher(stderr)
	t.Cleanup(func() {
		_ = d.Stop()
		if t.Failed() {
			t.Logf("daemon log:\n%s", d.Log.String())
		}
	})
	if _, _, err := d.Log.WaitFor(0, 30*time.Second, "tether daemon listening"); err != nil {
		t.Fatalf("daemon did not start: %v\n%s", err, d.Log.String())
	}
	if d.Record, err = d.Paths.ReadDaemonRecord(); err != nil {
		t.Fatal(err)
	}
	if d.Token, err = d.Paths.ReadToken(); err != nil {
		t.Fatal(err)
	}
}

// WaitExit waits up to timeout for the daemon to exit by itself (after a
// Quit, say), without signalling it.
func (d *Daemon) WaitExit(timeout time.Duration) error {
	done := make(chan struct{})
	go func() {
		d.stopOnce.Do(func() { d.stopErr = d.cmd.Wait() })
		close(done)
	}()
	select {
	case <-done:
		return d.stopErr
	case <-time.After(timeout):
		return fmt.Errorf("the daemon did not exit within %s", timeout)
	}
}

// Stop stops the daemon and waits for it to exit (idempotent).
func (d *Daemon) Stop() error {
	d.stopOnce.Do(func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		d.stopErr = d.cmd.Wait()
	})
	return d.stopErr
}

// Browser is a Chromium started by `tether browser --headless`.
type Browser struct {
	Log *LogWatcher
	// UserDataDir is the browser's profile folder.
	UserDataDir string
	cmd         *exec.Cmd
}

// BrowserOptions configures StartBrowser.
type BrowserOptions struct {
	// Label is the profile label (`tether browser --label`).
	Label string
	// WaitFor is the daemon log text that means the browser is ready
	// (default "extension connected"); "-" waits for nothing.
	WaitFor string
	// UserDataDir reuses a profile folder (default: a new temporary one).
	UserDataDir string
	// ExtraArgs go to Chromium.
	ExtraArgs []string
	// Display runs the browser with a window on this X display (see
	// desktop.Xvfb) instead of headless.
	Display string
	// Env is added to the browser's environment (HOME=… for an NSS
	// database with a test CA, say).
	Env []string
	// HostResolverRules replaces HostResolverRules (RemoteHostResolverRules, say).
	HostResolverRules string
}

// StartBrowser launches headless Chromium with the extension through
// `tether browser`, with a DevTools port for the harness (the product never
// uses it), and waits for the extension's hello to reach the daemon.
func StartBrowser(t testing.TB, d *Daemon, opts ...BrowserOptions) *Browser {
	t.Helper()
	RequireChromium(t)
	var o BrowserOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.UserDataDir == "" {
		o.UserDataDir = filepath.Join(t.TempDir(), "chrome-profile")
	}
	from := d.Log.Len()
	args := []string{"browser", "--user-data-dir", o.UserDataDir}
	if o.Display == "" {
		args = append(args, "--headless")
	}
	if o.Label != "" {
		args = append(args, "--label", o.Label)
	}
	rules := HostResolverRules
	if o.HostResolverRules != "" {
		rules = o.HostResolverRules
	}
	args = append(args, "--", rules, "--remote-debugging-port=0")
	cmd := exec.Command(d.Bin, append(args, o.ExtraArgs...)...)
	cmd.Env = append(append([]string(nil), d.Env()...), o.Env...)
	b := startBrowserProcess(t, cmd, o.UserDataDir, o.Display)
	wait := o.WaitFor
	if wait == "" {
		wait = "extension connected"
	}
	if wait != "-" {
		if _, _, err := d.Log.WaitFor(from, 60*time.Second, wait); err != nil {
			t.Fatalf("the extension did not connect: %v\nbrowser output:\n%s", err, b.Log.String())
		}
	}
	return b
}

// StartPlainChromium launches Chromium without any extension (headless, or
// with a window on display), as a browser without Tether is, with a DevTools
// port for the harness and the same quiet flags.
func StartPlainChromium(t testing.TB, display string) *Browser {
	t.Helper()
	bin := RequireChromium(t)
	dir := filepath.Join(t.TempDir(), "plain-profile")
	args := append([]string{"--user-data-dir=" + dir, "--remote-debugging-port=0", HostResolverRules}, launcher.QuietFlags...)
	if display == "" {
		args = append(args, "--headless=new", "--disable-gpu")
	}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox")
	}
	cmd := exec.Command(bin, append(args, "about:blank")...)
	cmd.Env = os.Environ()
	b := startBrowserProcess(t, cmd, dir, display)
	if _, err := DevToolsURL(dir, 30*time.Second); err != nil {
		t.Fatalf("%v; browser output:\n%s", err, b.Log.String())
	}
	return b
}

// StartChromiumWithExtension launches headless Chromium with the unpacked
// extension in extDir loaded the way `tether browser` loads its copy
// (launcher.Args: --load-extension and --disable-extensions-except), in a
// new profile, with a DevTools port for the harness. Unlike StartBrowser it
// writes nothing into extDir and waits for nothing: the caller waits on the
// daemon's log.
func StartChromiumWithExtension(t testing.TB, extDir string) *Browser {
	t.Helper()
	bin := RequireChromium(t)
	dir := filepath.Join(t.TempDir(), "chrome-profile")
	args := launcher.Args(launcher.Options{
		ExtensionDir: extDir, UserDataDir: dir, Headless: true,
		ExtraArgs: []string{HostResolverRules, "--remote-debugging-port=0"},
	})
	cmd := exec.Command(bin, args...)
	cmd.Env = os.Environ()
	return startBrowserProcess(t, cmd, dir, "")
}

// startBrowserProcess starts a browser command (on display when set) in its
// own process group, collecting its output, and stops it at cleanup.
func startBrowserProcess(t testing.TB, cmd *exec.Cmd, userDataDir, display string) *Browser {
	t.Helper()
	if display != "" {
		cmd.Env = append(cmd.Env, "DISPLAY="+display)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &Browser{Log: NewLogWatcher(out), UserDataDir: userDataDir, cmd: cmd}
	t.Cleanup(func() { b.Stop(t) })
	return b
}

// Stop ends the browser (idempotent).
func (b *Browser) Stop(t testing.TB) {
	if b.cmd.ProcessState != nil {
		return
	}
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGTERM)
	waited := make(chan struct{})
	go func() { _ = b.cmd.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-waited
	}
	if t.Failed() {
		t.Logf("browser output:\n%s", b.Log.String())
	}
}

// Context returns a context bounded by the test's deadline, minus a margin.
func Context(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// ShutdownDaemon stops a daemon the test did not start itself (one that
// `tether mcp` started, say) and waits until it has released its lock.
func ShutdownDaemon(t testing.TB, p config.Paths) {
	t.Helper()
	rec, err := p.ReadDaemonRecord()
	if err != nil {
		return // none running
	}
	token, err := p.ReadControlToken()
	if err != nil {
		t.Errorf("read control token: %v", err)
		return
	}
	if err := daemon.Stop(context.Background(), p, rec, token); err != nil {
		t.Errorf("stop daemon pid %d: %v", rec.PID, err)
	}
}
