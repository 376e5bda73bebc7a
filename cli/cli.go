// Package cli is the tether command: every subcommand (serve, mcp,
// browser, profiles, connect, timeline, pause, token, version) and bare
// `tether`, the daemon with the tray. The root package's main only calls
// Main. Commands that talk to a running daemon do so through its local API
// (package localclient); commands that need none go through the same
// library code the daemon uses.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tether-browser/tether/bridge"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/extension"
	"github.com/tether-browser/tether/launcher"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/logs"
	"github.com/tether-browser/tether/policy"
)

const usage = `Tether lets AI apps drive your own Chrome through an extension.

Usage:
  tether [--hidden]                                   run the daemon with the tray icon (--hidden: as at login)
  tether serve [--port N | --listen 127.0.0.1:N] [--allow-extension ID]... [--auto-approve-profiles] [--unattended=deny|allow] [--enable-tools=LIST]
                                                      run the daemon (no tray)
  tether mcp                                          MCP over stdio, for AI apps
  tether browser [--headless] [--label NAME] [--url URL] [--browser PATH] [--user-data-dir DIR] [--port N] [-- CHROME_ARGS...]
                                                      launch Chromium with the extension
  tether profiles [approve|deny CODE | forget NAME]   list, pair (by pairing code) and forget browser profiles
  tether connect [--http] CLIENT... | --list          add Tether to an MCP client's config; list clients
  tether disconnect CLIENT...                         remove Tether's entry from a client's config
  tether token rotate                                 issue new MCP and control tokens; update HTTP entries
  tether token add|list|revoke NAME                   named tokens for remote MCP clients (docs/remote.md)
  tether timeline [export [--out FILE]] [--client C] [--profile P] [--outcome O] [--limit N]
                                                      list the AI's tool calls, newest first; export as JSON Lines
  tether approvals [allow|always|deny ID]             list the tool calls waiting for your answer; answer one
  tether pause | resume                               refuse every tool call until resumed (kill switch)
  tether status                                       whether Tether runs, how, and what waits for you (exit 3: not running)
  tether stop                                         stop the running Tether, as the tray's Quit does
  tether version                                      print the version

Environment:
  TETHER_CONFIG_DIR   config dir (default: <user config dir>/tether)
  TETHER_PORT         daemon port (default 47615)
`

// Main runs the command line args (os.Args: the program name first) and
// exits the process with its status: 0, 1 on error, 2 on an unknown
// command.
func Main(argv []string) {
	if len(argv) < 2 || argv[1] == "--hidden" {
		trayMain(argv[1:]) // bare `tether`: the daemon with the tray (tray_cmd.go)
	}
	cmd, args := argv[1], argv[2:]
	if cmd == "approval-dialog" {
		// The daemon's dialog process (package uiproc), hidden from the
		// usage; before the signal handling below, so that SIGTERM ends it.
		if err := runApprovalDialog(args); err != nil {
			fmt.Fprintln(os.Stderr, "tether:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// -h/--help on a command without flags of its own: its usage, exit 0.
	// Commands with flags print their usage from their flag set and return
	// flag.ErrHelp, also exit 0 below.
	switch cmd {
	case "profiles", "approvals", "disconnect", "token", "pause", "resume", "status", "stop", "version":
		if wantsHelp(args) {
			fmt.Print(plainUsage(cmd))
			return
		}
	}
	var err error
	switch cmd {
	case "serve":
		err = runServe(ctx, args)
	case "mcp":
		err = runMCP(ctx, args)
	case "browser":
		err = runBrowser(ctx, args)
	case "profiles":
		err = runProfiles(ctx, args)
	case "connect":
		err = runConnect(ctx, args)
	case "disconnect":
		err = runDisconnect(args)
	case "token":
		err = runToken(ctx, args)
	case "timeline":
		err = runTimeline(ctx, args)
	case "approvals":
		err = runApprovals(ctx, args)
	case "status":
		var down bool
		if down, err = runStatus(ctx, args); down {
			os.Exit(exitNotRunning)
		}
	case "stop":
		err = runStop(ctx, args)
	case "pause":
		err = runPause(ctx, args, true)
	case "resume":
		err = runPause(ctx, args, false)
	case "window": // hidden: the window process, started by the daemon
		if windowMain == nil {
			err = fmt.Errorf("this tether is built without the window; run %s window", desktopName)
			break
		}
		err = windowMain(ctx, args)
	case "version", "--version":
		fmt.Println(versionString())
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "tether: unknown command %q\n\n%s", cmd, usage)
		os.Exit(2)
	}
	if errors.Is(err, flag.ErrHelp) {
		return // the usage asked for is printed
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "tether:", err)
		os.Exit(1)
	}
}

// plainUsage is the usage of a command without flags: its own usage text,
// else its lines of the top-level usage.
func plainUsage(cmd string) string {
	switch cmd {
	case "profiles":
		return profilesUsage
	case "approvals":
		return approvalsUsage
	case "disconnect":
		return connectUsage
	case "token":
		return tokenUsage
	}
	return commandUsage(cmd)
}

// logKind says where a command's log lines go besides stderr.
type logKind int

const (
	logStderrOnly logKind = iota
	// logDaemon: tether.log, rotated (logs.DaemonFile), opened only once
	// this process holds the daemon lock (the start function): lumberjack
	// assumes a single writer.
	logDaemon
	// logBridge: this bridge's own mcp-bridge-<pid>.log (logs.OpenBridge).
	logBridge
)

// openConfig resolves and creates the config dir and opens the logger: text
// to stderr and, per kind, to a log file in the config dir. stdout is never
// used: it is the MCP transport in `tether mcp`. In the file, repeated
// messages are rate-limited (logs.RateLimit), so a flood of refused requests
// adds one line a minute; both cut long values (logs.MaxValueBytes). For
// logDaemon, start opens tether.log (lines logged before go there too, up
// to 64 KiB); call it once the daemon lock is held (daemon.Config.Locked).
// close writes the held-back counts and closes the log file.
func openConfig(kind logKind) (paths config.Paths, log *slog.Logger, start func(), close func(), err error) {
	start, close = func() {}, func() {}
	if paths, err = config.Resolve(); err != nil {
		return paths, nil, start, close, err
	}
	if err = paths.Ensure(); err != nil {
		return paths, nil, start, close, err
	}
	opts := &slog.HandlerOptions{Level: logLevel()}
	stderr := logs.CutValues(slog.NewTextHandler(os.Stderr, opts))
	var file slog.Handler
	switch kind {
	case logDaemon:
		deferred := &logs.Deferred{}
		file = slog.NewTextHandler(deferred, opts)
		var once sync.Once
		var w io.WriteCloser
		start = func() {
			once.Do(func() {
				var err error
				if w, err = logs.DaemonFile(paths.LogFile()); err != nil {
					fmt.Fprintln(os.Stderr, "tether: log file:", err)
					_ = deferred.Start(io.Discard) // stderr has every line
					return
				}
				if err := deferred.Start(w); err != nil {
					fmt.Fprintf(os.Stderr, "tether: write log file: %v%s\n", err, config.PermissionHint(err))
				}
			})
		}
		close = func() {
			once.Do(func() {}) // not started: nothing to close
			if w != nil {
				w.Close()
			}
		}
	case logBridge:
		w, ferr := logs.OpenBridge(paths.Dir, os.Getpid(), time.Now())
		if ferr != nil {
			return paths, nil, start, close, ferr
		}
		file = slog.NewTextHandler(w, opts)
		close = func() { w.Close() }
	}
	if file == nil {
		return paths, slog.New(stderr), start, close, nil
	}
	// Only the file's lines are rate-limited: it is what fills the config
	// dir; stderr keeps every line (tests and terminals read it).
	limited := logs.RateLimit(file, logs.DefaultBurst, logs.DefaultWindow)
	closeFile := close
	close = func() {
		logs.Flush(limited) // the counts of the last minute's repeats
		closeFile()
	}
	return paths, slog.New(slog.NewMultiHandler(stderr, limited)), start, close, nil
}

func logLevel() slog.Level {
	if os.Getenv("TETHER_DEBUG") != "" {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// defaultPort is $TETHER_PORT, else config.DefaultPort.
func defaultPort() (int, error) { return config.PortFromEnv() }

func runServe(ctx context.Context, args []string) error {
	fs := newFlagSet("serve", args)
	port, err := defaultPort()
	if err != nil {
		return err
	}
	fs.IntVar(&port, "port", port, "TCP port on 127.0.0.1 (0 picks a free one)")
	listen := fs.String("listen", "", "127.0.0.1:PORT, the same as --port; any other interface is refused (use a TLS reverse proxy: docs/remote.md)")
	var allow stringList
	fs.Var(&allow, "allow-extension", "also accept the extension with this id (repeatable)")
	autoApprove := fs.Bool("auto-approve-profiles", false, "pair new browser profiles without asking (tests and servers); never one connecting through remote mode's proxy")
	unattended := fs.String("unattended", "deny", "what actions needing confirmation do without a UI to ask: deny, or allow (tests and trusted servers only)")
	enableTools := fs.String("enable-tools", "", "comma-separated off-by-default tools to offer this run (browser_evaluate)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *unattended != string(policy.Deny) && *unattended != string(policy.Allow) {
		return fmt.Errorf("--unattended must be deny or allow, not %q", *unattended)
	}
	if *listen != "" {
		if port, err = listenPort(*listen); err != nil {
			return err
		}
	}
	paths, log, startLog, closeLog, err := openConfig(logDaemon)
	if err != nil {
		return err
	}
	defer closeLog()
	exe, err := commandExecutable()
	if err != nil {
		return fmt.Errorf("find the tether binary: %w", err)
	}
	return daemon.Run(ctx, daemon.Config{
		Executable:          exe,
		Locked:              startLog,
		Unattended:          policy.Action(*unattended),
		Paths:               paths,
		Port:                port,
		Version:             versionString(),
		ExtensionIDs:        allow,
		Logger:              log,
		AutoApproveProfiles: *autoApprove,
		EnableTools:         splitList(*enableTools),
		Flags:               serveFlags(fs),
	})
}

// listenPort is the port of `tether serve --listen ADDR`. ADDR must be
// 127.0.0.1:PORT or localhost:PORT: Tether never serves plain HTTP on
// another interface; remote access goes through a TLS reverse proxy on
// this machine (docs/remote.md).
func listenPort(addr string) (int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("--listen %q: give 127.0.0.1:PORT (%v)", addr, err)
	}
	if host != "127.0.0.1" && !strings.EqualFold(host, "localhost") {
		return 0, fmt.Errorf("--listen %q refused: Tether listens on 127.0.0.1 only and never serves plain HTTP on another interface. "+
			"To reach it from other machines, put a TLS reverse proxy (Caddy) in front of it and list its public host name in settings.json's remote.hosts: see docs/remote.md", addr)
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("--listen %q: the port must be a number from 0 to 65535", addr)
	}
	return n, nil
}

// serveFlags lists the flags set on fs, --port and --listen excepted, as --name=value
// (a repeatable flag once per value): how to run `tether serve` the same
// way again on another or the same port.
func serveFlags(fs *flag.FlagSet) []string {
	var out []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "port" || f.Name == "listen" {
			return
		}
		if l, ok := f.Value.(*stringList); ok {
			for _, v := range *l {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return out
}

func runMCP(ctx context.Context, args []string) error {
	fs := newFlagSet("mcp", args)
	if err := fs.Parse(args); err != nil {
		return err
	}
	paths, log, _, closeLog, err := openConfig(logBridge)
	if err != nil {
		return err
	}
	defer closeLog()
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	var reached atomic.Bool
	b := bridge.New(bridge.Config{
		Logger: log,
		// Each new connection to the daemon first checks its proof, so the
		// MCP token never goes to a program that took the port meanwhile.
		Client: &http.Client{Transport: &http.Transport{DialContext: localclient.ProvenDialer(paths), MaxIdleConnsPerHost: 64, IdleConnTimeout: 90 * time.Second}},
		Endpoint: func(ctx context.Context) (string, string, error) {
			// This AI app's session started Tether (or found it) once; if the
			// user has quit it since, do not start it behind their back.
			if reached.Load() && paths.QuitByUser() {
				return "", "", errors.New("the user stopped Tether (Quit in its tray, or `tether stop`), so this app does not start it again; ask them to start Tether again")
			}
			rec, err := daemon.Ensure(ctx, daemon.EnsureConfig{
				Paths: paths, Version: versionString(), Logger: log,
				Command: daemonCommand(exe),
			})
			if err != nil {
				return "", "", err
			}
			token, err := paths.ReadToken()
			if err != nil {
				return "", "", err
			}
			reached.Store(true)
			return rec.URL() + daemon.PathMCP, token, nil
		},
	})
	return b.Run(ctx, os.Stdin, os.Stdout)
}

func runBrowser(ctx context.Context, args []string) error {
	fs := newFlagSet("browser", args)
	var opts launcher.Options
	fs.StringVar(&opts.Browser, "browser", "", "browser executable (default: the first Chromium-family browser found)")
	fs.StringVar(&opts.UserDataDir, "user-data-dir", "", "browser profile dir (default: <config dir>/browser-profiles/default)")
	fs.BoolVar(&opts.Headless, "headless", false, "run without a window")
	fs.StringVar(&opts.URL, "url", "", "page to open at start (default about:blank)")
	label := fs.String("label", "Tether browser", "profile label shown to the AI")
	port := fs.Int("port", 0, "daemon port the extension dials (default: the running daemon's, else $TETHER_PORT or 47615)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	opts.ExtraArgs = fs.Args()
	// Before anything is written: a browser with a window needs a display.
	if err := launcher.NeedsDisplay(runtime.GOOS, opts.Headless, os.Getenv); err != nil {
		return err
	}
	paths, log, _, closeLog, err := openConfig(logStderrOnly)
	if err != nil {
		return err
	}
	defer closeLog()
	opts.Logger = log
	if *port == 0 {
		if rec, err := paths.ReadDaemonRecord(); err == nil {
			*port = rec.Port
		} else if *port, err = defaultPort(); err != nil {
			return err
		}
	}
	if opts.UserDataDir == "" {
		opts.UserDataDir = paths.BrowserProfile()
	}
	opts.ExtensionDir = paths.Extension(opts.UserDataDir)
	// Chromium's own messages (some twenty D-Bus and zygote errors at a
	// headless start) go to this file; those that may matter show too.
	opts.LogFile = filepath.Join(opts.UserDataDir, launcher.BrowserLogName)
	pairingKey, err := paths.LoadOrCreatePairingKey()
	if err != nil {
		return err
	}
	if err := launcher.WriteExtension(extension.Dist(), opts.ExtensionDir, launcher.ExtensionConfig{Port: *port, Label: *label, PairingKey: pairingKey}); err != nil {
		return err
	}
	log.Info("extension written", "dir", opts.ExtensionDir, "port", *port)
	err = launcher.Launch(ctx, opts)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
