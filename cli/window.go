//go:build desktop

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"

	"github.com/tether-browser/tether/app"
	"github.com/tether-browser/tether/frontend"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/tray"
)

// This is the build with the window (-tags desktop,production, and
// webkit2_41 on Linux): it has the hidden `window` command.
func init() { windowMain = runWindow }

// processStart approximates when this process started (package variables
// are set before main runs): the window reports its first frame relative
// to it.
var processStart = time.Now()

// runWindow is `tether-desktop window` (`tether.exe window` on Windows):
// the window, in its own process, a client of the daemon's local API. The
// daemon starts it on demand (uiproc.Window). One runs per config dir: a
// second one asks the daemon to show the first and exits 0. It returns
// when the window was closed and not reopened for --linger, or the daemon
// stayed unreachable (app.DefaultGoneAfter), or ctx ends (the daemon ends
// it with SIGTERM). It runs on the main goroutine, which Wails needs.
func runWindow(ctx context.Context, args []string) error {
	fs := newFlagSet("window", args)
	defaultLinger, err := lingerFromEnv(os.Getenv, app.DefaultLinger)
	if err != nil {
		return err
	}
	linger := fs.Duration("linger", defaultLinger, "how long to stay, hidden, after the window was closed (default from $"+EnvWindowLinger+" when set)")
	goneAfter := fs.Duration("gone-after", app.DefaultGoneAfter, "exit when the daemon stays unreachable this long")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s window [flags]\n\nThe Tether window, in its own process; the daemon starts it when the window is opened.\n\nEnvironment:\n  %s  the default of --linger (a Go duration, e.g. 2s); the daemon's window process inherits it\n\nFlags:\n", desktopName, EnvWindowLinger)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	paths, log, _, closeLog, err := openConfig(logStderrOnly)
	if err != nil {
		return err
	}
	defer closeLog()
	client := localclient.New(paths)
	lock := flock.New(paths.WindowLock())
	locked, err := lock.TryLock()
	if err != nil {
		return fmt.Errorf("lock %s: %w", paths.WindowLock(), err)
	}
	if !locked {
		// Another window process runs: the daemon tells it to show itself.
		if err := client.OpenWindow(ctx); err != nil {
			return fmt.Errorf("a Tether window is already open, and asking Tether to show it failed: %w", err)
		}
		log.Info("a Tether window is already open; asked the daemon to show it")
		return nil
	}
	defer lock.Unlock()
	w := app.NewWindow(app.Config{Client: client, Started: processStart, Linger: *linger, GoneAfter: *goneAfter, Logger: log})
	log.Info("window process started", "pid", os.Getpid(), "linger", *linger)
	err = w.Run(ctx, app.WindowOptions{Assets: frontend.Dist(), Icon: tray.Icon(tray.Connected, "linux")})
	if errors.Is(err, app.ErrDaemonGone) {
		return nil // the daemon quit: so does its window (logged by the app)
	}
	return err
}
