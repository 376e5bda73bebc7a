package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
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
// needs on macOS and Windows.
func trayMain(args []string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runTray(ctx, args)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "tether:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func runTray(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("tether", flag.ContinueOnError)
	// The window is not there yet: the tray is all there is to show, so
	// --hidden changes nothing today; the login item passes it so that a
	// login will not open the window once there is one.
	_ = fs.Bool("hidden", false, "start in the tray without opening a window (what the login item runs)")
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
	paths, log, closeLog, err := openConfig(config.Paths.LogFile)
	if err != nil {
		return err
	}
	defer closeLog()
	exe, err := clients.Executable()
	if err != nil {
		return fmt.Errorf("find the tether binary: %w", err)
	}
	host, err := clients.CurrentHost()
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	services := make(chan daemon.Services, 1)
	daemonDone := make(chan error, 1)
	go func() {
		err := daemon.Run(ctx, daemon.Config{
			Paths:      paths,
			Port:       port,
			Version:    versionString(),
			UI:         true,
			Unattended: policy.Deny,
			Logger:     log,
			Services:   func(s daemon.Services) { services <- s },
		})
		daemonDone <- err
		cancel() // the tray goes when the daemon does (/shutdown, errors)
	}()
	var s daemon.Services
	select {
	case err := <-daemonDone:
		return err // it never started: another daemon runs, the port is taken…
	case s = <-services:
	}
	opts := clients.Options{Executable: exe}
	configDir := ""
	if !paths.IsDefault() {
		opts.ConfigDir, configDir = paths.Dir, paths.Dir
	}
	trayErr := native.Run(ctx, tray.Config{
		Profiles:       s.Broker,
		Guard:          s.Guard,
		Activity:       s.Timeline,
		Clients:        host,
		ConnectOptions: opts,
		LoginItem:      native.LoginItem(exe, configDir),
		Linger:         actingLinger,
		Logger:         log,
	})
	cancel()
	return errors.Join(trayErr, <-daemonDone)
}

// daemonCommand is what `tether mcp` starts when no daemon answers: the
// daemon with the tray in a desktop session, the headless one otherwise.
func daemonCommand(exe string) []string {
	if hasDesktop(runtime.GOOS, os.Getenv) {
		return []string{exe}
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
