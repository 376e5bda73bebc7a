package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/localapi"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/tray"
	"github.com/tether-browser/tether/tray/native"
)

// actingLinger keeps the tray's "AI acting now" icon up a moment after a
// call ends, so that a 20 ms call shows at all.
const actingLinger = 1500 * time.Millisecond

// trayMain is bare `tether` (and `tether --hidden`, what the login item
// runs): the daemon of `tether serve`, same lock and port, with the tray
// and the window. It exits the process. It runs on the main goroutine,
// which the window (and, on macOS, the tray) needs.
func trayMain(args []string) {
	execDesktop(args) // the build with the window, when this one lacks it
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runTray(ctx, args)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0) // the usage asked for is printed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tether:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runTray(ctx context.Context, args []string) error {
	fs := newFlagSet("", args)
	hidden := fs.Bool("hidden", false, "start in the tray without showing the window (what the login item runs)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q\n\n%s", fs.Arg(0), usage)
	}
	port, err := defaultPort()
	if err != nil {
		return err
	}
	paths, log, startLog, closeLog, err := openConfig(logDaemon)
	if err != nil {
		return err
	}
	defer closeLog()
	// One instance: a second launch shows the first one's window and exits
	// (a second `tether --hidden`, from the login item, shows nothing).
	if running, err := showRunning(ctx, paths, !*hidden); running || err != nil {
		return err
	}
	exe, err := commandExecutable()
	if err != nil {
		return fmt.Errorf("find the tether binary: %w", err)
	}
	host, err := clients.CurrentHost()
	if err != nil {
		return err
	}
	windowed := hasDisplay(runtime.GOOS, os.Getenv)
	if windowed && newWindow == nil {
		windowed = false
		log.Warn("this tether is built without the window: running with the tray only", "window_build", desktopName)
	}
	var window appWindow // set before the daemon listens; read by the opener
	var opener localapi.Window
	if windowed {
		opener = windowOpener{func() { window.Show() }}
	}
	opts := clients.Options{Executable: exe}
	var loginEnv []string // what the login item must set to start this same daemon
	var browserEnv []string
	if !paths.IsDefault() {
		opts.ConfigDir = paths.Dir
		loginEnv = append(loginEnv, config.EnvConfigDir+"="+paths.Dir)
		browserEnv = []string{config.EnvConfigDir + "=" + paths.Dir}
	}
	if os.Getenv(config.EnvPort) != "" {
		loginEnv = append(loginEnv, config.EnvPort+"="+strconv.Itoa(port))
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	services := make(chan daemon.Services, 1)
	listen := make(chan struct{}) // closed once the window is wired
	daemonDone := make(chan error, 1)
	go func() {
		err := daemon.Run(ctx, daemon.Config{
			Paths:          paths,
			Locked:         startLog,
			Port:           port,
			Version:        versionString(),
			UI:             true,
			Unattended:     policy.Deny,
			Logger:         log,
			Services:       func(s daemon.Services) { services <- s; <-listen },
			Window:         opener,
			Clients:        host,
			ConnectOptions: opts,
			Executable:     exe,
			BrowserEnv:     browserEnv,
		})
		daemonDone <- err
		cancel() // the tray and window go when the daemon does (/shutdown, errors)
	}()
	var s daemon.Services
	select {
	case err := <-daemonDone:
		return err // it never started: another daemon runs, the port is taken…
	case s = <-services:
	}
	trayCfg := tray.Config{
		Profiles:       s.Broker,
		Guard:          s.Guard,
		Activity:       s.Timeline,
		Clients:        host,
		ConnectOptions: opts,
		LoginItem:      native.LoginItem(exe, loginEnv),
		Linger:         actingLinger,
		Logger:         log,
		// Quit means quit: AI apps' bridges must not start Tether again.
		OnQuit: func() {
			if err := paths.MarkQuit(); err != nil {
				log.Warn("could not record the quit; AI apps may start Tether again", "err", err)
			}
		},
	}
	if !windowed {
		close(listen)
		if newWindow != nil {
			log.Warn("no display: running with the tray only (the window needs X11, Wayland, macOS or Windows)")
		}
		trayErr := native.Run(ctx, trayCfg)
		cancel()
		return errors.Join(trayErr, <-daemonDone)
	}
	window = newWindow(s, windowConfig{
		Paths: paths, Port: port, Clients: host, ConnectOptions: opts,
		Executable: exe, BrowserEnv: browserEnv, Logger: log,
	})
	s.Guard.SetApprover(window)
	close(listen) // the daemon listens now, with the window as its approver
	trayCfg.Window = window
	// The tray first (systray's start must precede the window's loop on
	// macOS), then the window owns the main thread until ctx ends.
	trayLoop := native.Start(trayCfg)
	trayDone := make(chan error, 1)
	go func() {
		trayDone <- trayLoop(ctx)
		cancel() // Quit in the tray stops everything
	}()
	if err := window.Run(ctx, *hidden); err != nil && ctx.Err() == nil {
		// The daemon and tray still serve; held calls wait in the queue
		// for the timeout, then are denied.
		log.Error("no window: Tether keeps running in the tray", "err", err)
		<-ctx.Done()
	}
	cancel()
	return errors.Join(<-trayDone, <-daemonDone)
}

// appWindow is the window of bare tether (app.Window in a build with the
// window): the tray's "Open Tether", the daemon's approver, and the main
// thread's event loop.
type appWindow interface {
	tray.Window
	policy.Approver
	// Run shows the window (unless hidden) and runs its event loop on the
	// main goroutine until ctx ends.
	Run(ctx context.Context, hidden bool) error
}

// windowOpener opens the in-process window for the local API (POST
// /api/window/open).
type windowOpener struct{ show func() }

// Open shows and raises the window.
func (o windowOpener) Open() error {
	o.show()
	return nil
}

// windowConfig is what the window needs besides the daemon's services.
type windowConfig struct {
	Paths          config.Paths
	Port           int
	Clients        clients.Host
	ConnectOptions clients.Options
	Executable     string
	BrowserEnv     []string
	Logger         *slog.Logger
}

// showRunning finds a `tether` already running for this config dir and,
// when show is set, asks it to show its window. It reports whether one
// runs; an error when a daemon without a window (`tether serve`) runs
// instead.
func showRunning(ctx context.Context, paths config.Paths, show bool) (bool, error) {
	rec, _, err := daemon.Probe(ctx, paths)
	if err != nil {
		return false, nil // none answers: this one starts
	}
	if !rec.UI {
		return false, fmt.Errorf("%w (pid %d, port %d) without a window (tether serve); stop it first, then start tether", daemon.ErrAlreadyRunning, rec.PID, rec.Port)
	}
	if !show {
		fmt.Fprintf(os.Stderr, "tether: already running (pid %d)\n", rec.PID)
		return true, nil
	}
	if err := daemon.Control(ctx, paths, "POST", apitype.PathWindowOpen, nil, nil); err != nil {
		return false, fmt.Errorf("%w (pid %d, port %d): %v; stop it first, then start tether", daemon.ErrAlreadyRunning, rec.PID, rec.Port, err)
	}
	fmt.Fprintf(os.Stderr, "tether: already running (pid %d); its window is shown\n", rec.PID)
	return true, nil
}

// daemonCommand is what `tether mcp` starts when no daemon answers: the
// daemon with the tray in a desktop session, its window hidden (an AI app
// starting should not open a window; a call that needs the user's approval
// shows it), the headless one otherwise.
func daemonCommand(exe string) []string {
	if hasDesktop(runtime.GOOS, os.Getenv) {
		return []string{exe, "--hidden"}
	}
	return []string{exe, "serve"}
}

// hasDesktop reports whether a tray can be shown: always on macOS and
// Windows; on Linux and other Unix systems, when an X11 or Wayland display
// or a D-Bus session bus is named in the environment.
func hasDesktop(goos string, getenv func(string) string) bool {
	switch goos {
	case "darwin", "windows":
		return true
	}
	return getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != "" || getenv("DBUS_SESSION_BUS_ADDRESS") != ""
}

// hasDisplay reports whether a window can be shown: always on macOS and
// Windows; elsewhere when an X11 or Wayland display is named.
func hasDisplay(goos string, getenv func(string) string) bool {
	switch goos {
	case "darwin", "windows":
		return true
	}
	return getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != ""
}
