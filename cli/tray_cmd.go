package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/tray"
	"github.com/tether-browser/tether/tray/native"
)

// actingLinger keeps the tray's "AI acting now" icon up a moment after a
// call ends, so that a 20 ms call shows at all.
const actingLinger = 1500 * time.Millisecond

// trayMain is bare `tether` (and `tether --hidden`, what the login item
// runs): the daemon of `tether serve`, same lock and port, with the tray.
// It exits the process. It runs on the main goroutine, which the tray
// needs on macOS.
//
// The window is not part of this process: it is its own (`tether-desktop
// window`, package app), which the daemon starts through uiproc.Window
// once the local API (package localapi) serves it. Until that is wired
// here, bare tether runs the daemon and the tray only: the tray has no
// "Open Tether", and calls that need the user's approval are denied as
// under `tether serve`.
func trayMain(args []string) {
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
	opts := clients.Options{Executable: exe}
	var loginEnv []string // what the login item must set to start this same daemon
	if !paths.IsDefault() {
		opts.ConfigDir = paths.Dir
		loginEnv = append(loginEnv, config.EnvConfigDir+"="+paths.Dir)
	}
	if os.Getenv(config.EnvPort) != "" {
		loginEnv = append(loginEnv, config.EnvPort+"="+strconv.Itoa(port))
	}
	_ = host

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ready := make(chan struct{})
	daemonDone := make(chan error, 1)
	go func() {
		err := daemon.Run(ctx, daemon.Config{
			Paths:      paths,
			Locked:     startLog,
			Port:       port,
			Version:    versionString(),
			UI:         true,
			Unattended: policy.Deny,
			Logger:     log,
			Ready:      func(string) { close(ready) },
		})
		daemonDone <- err
		cancel() // the tray goes when the daemon does (/api/shutdown, errors)
	}()
	select {
	case err := <-daemonDone:
		return err // it never started: another daemon runs, the port is taken…
	case <-ready:
	}
	trayCfg := tray.Config{
		Client:    localclient.New(paths),
		LoginItem: native.LoginItem(exe, loginEnv),
		Linger:    actingLinger,
		Logger:    log,
		// Quit means quit: AI apps' bridges must not start Tether again.
		OnQuit: func() {
			if err := paths.MarkQuit(); err != nil {
				log.Warn("could not record the quit; AI apps may start Tether again", "err", err)
			}
		},
	}
	trayErr := native.Run(ctx, trayCfg)
	cancel()
	return errors.Join(trayErr, <-daemonDone)
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
	if err := daemon.Control(ctx, paths, "POST", daemon.PathWindow, nil, nil); err != nil {
		// A bare tether without a window yet (see trayMain): it runs, in the tray.
		fmt.Fprintf(os.Stderr, "tether: already running (pid %d) in the tray; its window could not be shown: %v\n", rec.PID, err)
		return true, nil
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
