package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
)

const connectUsage = `Usage:
  tether connect CLIENT...          add Tether to an MCP client's config (stdio: runs this binary with "mcp")
  tether connect --http CLIENT...   add it as a streamable HTTP server (URL and token), where the client supports it
  tether connect --port N CLIENT... the daemon's port: in the HTTP URL, or TETHER_PORT in a stdio entry
                                    (default: the running daemon's, else $TETHER_PORT or 47615; a stdio
                                    entry names it only when it is not 47615)
  tether connect --list             every client: installed, connected, config file
  tether disconnect CLIENT...       remove Tether's entry, and only it

Clients: ` + "claude-desktop, claude-code, cursor, vscode, windsurf, zed, codex, gemini, cline, lmstudio" + `
`

func runConnect(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("connect", flag.ContinueOnError)
	fs.SetOutput(helpOutput(args))
	fs.Usage = func() { fmt.Fprint(fs.Output(), connectUsage) }
	list := fs.Bool("list", false, "list every client")
	useHTTP := fs.Bool("http", false, "write a streamable HTTP entry instead of stdio")
	port := fs.Int("port", -1, "daemon port: in the HTTP URL, or TETHER_PORT in a stdio entry (default: the running daemon's, else $TETHER_PORT or 47615)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	host, err := clients.CurrentHost()
	if err != nil {
		return err
	}
	if *list {
		return printList(host.List())
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("name a client to connect\n\n%s", connectUsage)
	}
	// Go's flags end at the first client name: a flag after one would be
	// taken for a client, after the clients before it were written without it.
	for _, a := range fs.Args() {
		if strings.HasPrefix(a, "-") {
			return fmt.Errorf("%s comes after a client name: put options before the client names (tether connect --http CLIENT...); nothing was changed", a)
		}
	}
	paths, err := config.Resolve()
	if err != nil {
		return err
	}
	var opts clients.Options
	if *useHTTP {
		if opts.URL, err = mcpURL(ctx, paths, *port); err != nil {
			return err
		}
		if opts.Token, err = paths.LoadOrCreateToken(); err != nil {
			return err
		}
		opts.HTTP = true
	} else {
		if opts.Executable, err = clients.Executable(); err != nil {
			return fmt.Errorf("find the tether binary: %w", err)
		}
		if !paths.IsDefault() {
			opts.ConfigDir = paths.Dir
		}
		if opts.Port, err = stdioPort(ctx, paths, *port); err != nil {
			return err
		}
	}
	var errs []error
	for _, id := range fs.Args() {
		o, err := host.Connect(id, opts)
		printOutcome(o, "connected")
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// stdioPort is the TETHER_PORT of a stdio entry: --port, else the running
// daemon's port (unless it picked a free one: $TETHER_PORT=0), else
// $TETHER_PORT; 0 (none) for the default port, so the entry stays portable.
func stdioPort(ctx context.Context, paths config.Paths, port int) (int, error) {
	if port < 0 {
		env, err := defaultPort()
		if err != nil {
			return 0, err
		}
		port = env
		if rec, _, err := daemon.Probe(ctx, paths); err == nil && env != 0 {
			port = rec.Port
		}
	}
	if port == config.DefaultPort {
		return 0, nil
	}
	return port, nil
}

// mcpURL is the daemon's MCP endpoint for an HTTP entry: --port, else the
// running daemon's port, else $TETHER_PORT or the default port.
func mcpURL(ctx context.Context, paths config.Paths, port int) (string, error) {
	if port < 0 {
		if rec, _, err := daemon.Probe(ctx, paths); err == nil {
			port = rec.Port
		} else if port, err = defaultPort(); err != nil {
			return "", err
		}
	}
	if port == 0 {
		return "", fmt.Errorf("%s=0 picks a free port at each start, so an HTTP entry can't name it: start the daemon first (`tether serve`), or pass --port", config.EnvPort)
	}
	return "http://127.0.0.1:" + strconv.Itoa(port) + daemon.PathMCP, nil
}

func runDisconnect(args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return fmt.Errorf("name a client to disconnect\n\n%s", connectUsage)
	}
	host, err := clients.CurrentHost()
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range args {
		o, err := host.Disconnect(id)
		printOutcome(o, "disconnected")
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func printOutcome(o clients.Outcome, verb string) {
	for _, l := range o.Lines(verb == "connected") {
		fmt.Println(l)
	}
}

func printList(list []clients.Status) error {
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "CLIENT\tNAME\tINSTALLED\tCONNECTED\tCONFIG")
	for _, s := range list {
		inst := "no"
		if s.Installed {
			inst = "yes"
		}
		for _, f := range s.Files {
			conn := "no"
			switch {
			case f.Err != nil:
				conn = "unreadable"
			case f.Connected:
				conn = "yes (" + string(f.Mode) + ")"
			}
			path := f.Path
			if !f.Exists {
				path += " (not created yet)"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.Client.ID, s.Client.Name, inst, conn, path)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	for _, s := range list {
		for _, f := range s.Files {
			if f.Err != nil {
				fmt.Fprintf(os.Stderr, "tether: %v\n", f.Err)
			}
		}
	}
	return nil
}

const tokenUsage = `Usage:
  tether token rotate        issue a new MCP bearer token and a new control token, update the
                             HTTP entries Tether wrote, restart the daemon
  tether token add NAME      issue a named token for an MCP client on another machine (remote
                             mode, docs/remote.md); it is printed once, only its hash is kept
  tether token list          list the named tokens: name, created, last used
  tether token revoke NAME   remove a named token; its next call is refused (401)
`

// runToken implements `tether token rotate`: both tokens, the MCP token
// (written into HTTP client entries) and the control token of the local
// API. The daemon reads them at start, so a running daemon is stopped
// (POST /api/shutdown with the old control token)
// and started again, detached, on the same port; stdio clients reconnect
// through `tether mcp` by themselves. The stopping daemon first lets its
// in-flight calls finish (up to daemon.DrainTimeout) so their true results
// reach the agents, and answers new calls 503 (`tether mcp` sends those
// again to the new daemon).
func runToken(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] != "rotate" {
		return runNamedToken(ctx, args)
	}
	if len(args) != 1 {
		return fmt.Errorf("unknown token command\n\n%s", tokenUsage)
	}
	paths, err := config.Resolve()
	if err != nil {
		return err
	}
	host, err := clients.CurrentHost()
	if err != nil {
		return err
	}
	controlToken, _ := paths.ReadControlToken()
	rec, _, probeErr := daemon.Probe(ctx, paths)
	running := probeErr == nil

	token, err := paths.RotateToken()
	if err != nil {
		return err
	}
	fmt.Printf("new token written to %s\n", paths.Token())
	if _, err := paths.RotateControlToken(); err != nil {
		return err
	}
	fmt.Printf("new control token written to %s\n", paths.ControlToken())
	outs, err := host.RotateToken(token)
	for _, o := range outs {
		printOutcome(o, "connected")
	}
	if len(outs) == 0 && err == nil {
		fmt.Println("no HTTP entry written by Tether to update")
	}
	if err != nil {
		return fmt.Errorf("update client configs: %w", err)
	}
	if !running {
		return nil
	}
	fmt.Printf("stopping the daemon: calls in flight finish first (up to %s)\n", daemon.DrainTimeout)
	if err := daemon.Stop(ctx, paths, rec, controlToken); err != nil {
		return fmt.Errorf("the running daemon still accepts the old token and could not be stopped (%v): restart it yourself", err)
	}
	exe, err := clients.Executable()
	if err != nil {
		return err
	}
	// Start the same kind of daemon again, on the same port: the app (tray
	// and window, hidden) or `tether serve`.
	cmd, again := append([]string{exe, "serve", "--port", strconv.Itoa(rec.Port)}, rec.Flags...), "tether serve"
	if rec.UI {
		cmd, again = []string{exe, "--hidden"}, "tether"
		os.Setenv(config.EnvPort, strconv.Itoa(rec.Port))
	}
	newRec, err := daemon.Ensure(ctx, daemon.EnsureConfig{Paths: paths, Version: versionString(), Command: cmd})
	if err != nil {
		return fmt.Errorf("the daemon was stopped but did not start again: %w; start it with `%s`", err, again)
	}
	fmt.Printf("restarted the daemon (pid %d, port %d) so it uses the new token; browsers reconnect by themselves\n", newRec.PID, newRec.Port)
	if rec.UI {
		fmt.Println("it runs as `tether --hidden`, in the tray where there is one, detached from this terminal; if its window was open, it closed: open it again from the tray, or run `tether`")
	}
	if len(rec.Flags) > 0 {
		fmt.Printf("(with the flags it ran with: %s)\n", strings.Join(rec.Flags, " "))
	}
	return nil
}
