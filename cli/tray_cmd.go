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

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/localapi"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/tray"
	"github.com/tether-browser/tether/tray/native"
	"github.com/tether-browser/tether/uiproc"
)

// actingLinger keeps the tray's "AI acting now" icon up a moment after a
// call ends, so that a 20 ms call shows at all.
const actingLinger = 1500 * time.Millisecond

// trayMain is bare `tether` (and `tether --hidden`, what the login item
// runs): the daemon of `tether serve`, same lock and port, with the tray.
// It exits the process. It runs on the main goroutine, which the tray
// needs on macOS.
//
// The window and the approval dialogs are not part of this process, which
// never loads GTK or WebKit: the daemon starts them on demand
// (uiproc.Window: `tether-desktop window`, a client of the local API;
// uiproc.Dialogs: `tether-desktop approval-dialog`, one per held call).
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
	hidden := fs.Bool("hidden", false, "start in the tray without opening the window (what the login item runs)")
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
	// One instance: a second launch opens the first one's window and
	// exits (a second `tether --hidden`, from the login item, opens
	// nothing).
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

	// The window and the approval dialogs are processes of their own
	// (tether-desktop), started on demand: this process never loads GTK or
	// WebKit. Without a display, or without tether-desktop, there are
	// neither: held calls are denied as under `tether serve`, and the tray
	// and AI apps work as usual.
	var (
		api     *localapi.Server // set once the daemon's parts are open
		window  *uiproc.Window
		dialogs *uiproc.Dialogs
		opener  localapi.Window
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ui, noWindow := desktopUI(exe)
	if ui {
		window = uiproc.NewWindow(uiproc.WindowConfig{
			Path: uiproc.WindowExecutable(exe), Env: uiproc.ConfigEnv(paths), Logger: log,
			Show: func() { api.ShowWindow() },
		})
		path, dargs, _ := uiproc.DialogCommand(exe)
		dialogs = uiproc.NewDialogs(uiproc.DialogConfig{
			Path: path, Args: dargs, Logger: log,
			OnHeld: func() {
				if err := window.Open(); err != nil && !errors.Is(err, uiproc.ErrClosed) {
					log.Warn("a held call could not open the window; the approval dialog still asks", "err", err)
				}
			},
			Record: func(ctx context.Context, e apitype.TimelineEntry) error { return api.RecordLate(ctx, e) },
		})
		opener = window
		defer window.Close()
		defer dialogs.Close()
	} else {
		log.Warn("running without the window and approval dialogs: "+noWindow, "window_build", desktopName)
	}
	dc := daemon.Config{
		Paths:          paths,
		Locked:         startLog,
		Port:           port,
		Version:        versionString(),
		UI:             true,
		Unattended:     policy.Deny,
		Logger:         log,
		Window:         opener,
		NoWindow:       noWindow,
		Clients:        host,
		ConnectOptions: opts,
		Executable:     exe,
		Services:       func(s daemon.Services) { api = s.API },
	}
	if dialogs != nil {
		dc.Approver = dialogs
	}
	ready := make(chan struct{})
	dc.Ready = func(string) { close(ready) }
	daemonDone := make(chan error, 1)
	go func() {
		err := daemon.Run(ctx, dc)
		daemonDone <- err
		cancel() // the tray goes when the daemon does (/api/shutdown, errors)
	}()
	select {
	case err := <-daemonDone:
		return err // it never started: another daemon runs, the port is taken…
	case <-ready:
	}
	if window != nil && !*hidden {
		if err := window.Open(); err != nil {
			log.Warn("could not open the window; Tether runs in the tray", "err", err)
		}
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

// desktopUI reports whether bare tether can show its window and approval
// dialogs, and if not, why: they need a display and tether-desktop next to
// exe (on Windows, tether.exe is both).
func desktopUI(exe string) (bool, string) {
	if !hasDisplay(runtime.GOOS, os.Getenv) {
		return false, "no display (the window and approval dialogs need X11, Wayland, macOS or Windows)"
	}
	if _, _, err := uiproc.DialogCommand(exe); err != nil {
		return false, fmt.Sprintf("%s is missing next to %s (%v); reinstall Tether", desktopName, exe, err)
	}
	return true, ""
}

// showRunning finds a `tether` already running for this config dir and,
// when show is set, asks it to open its window (POST /api/window/open). It
// reports whether one runs; an error when a daemon without a window
// (`tether serve`) runs instead, or when the running one cannot open its
// window (started without a display), with the reason.
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
	if err := localclient.New(paths).OpenWindow(ctx); err != nil {
		// A bare tether without a display or tether-desktop: it runs, and
		// AI apps reach it, but what was asked for (the window) failed.
		return true, fmt.Errorf("already running (pid %d), but its window could not be opened: %w", rec.PID, err)
	}
	fmt.Fprintf(os.Stderr, "tether: already running (pid %d); its window is opened\n", rec.PID)
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
