// Package daemon runs the Tether daemon: one HTTP server on 127.0.0.1 that
// serves the extension WebSocket (/extension), MCP over streamable HTTP
// (/mcp), /health and the local API (/api/, package localapi), guarded by
// the config dir's lock so that one daemon runs per user.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/mark3labs/mcp-go/server"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/extension"
	"github.com/tether-browser/tether/extupdate"
	"github.com/tether-browser/tether/localapi"
	"github.com/tether-browser/tether/localclient"
	tmcp "github.com/tether-browser/tether/mcp"
	"github.com/tether-browser/tether/mcptoken"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/timeline"
)

// Routes besides the local API's (apitype.PathPrefix).
const (
	PathExtension = "/extension"
	PathMCP       = "/mcp"
	PathHealth    = apitype.PathHealth
	// HealthNonce is /health's query parameter for a proof (Health.Proof).
	HealthNonce = apitype.HealthNonce
)

// IdleTimeout closes a kept-alive HTTP connection that has sent no new
// request for this long (net/http.Server.IdleTimeout).
const IdleTimeout = 2 * time.Minute

// MaxHeaderBytes bounds one HTTP request's header block, 64 KiB
// (net/http.Server.MaxHeaderBytes; past it the daemon answers 431).
const MaxHeaderBytes = 64 << 10

// ErrAlreadyRunning is returned when another daemon holds the lock.
var ErrAlreadyRunning = errors.New("a Tether daemon is already running")

// Config configures Run.
type Config struct {
	// Paths is the config dir.
	Paths config.Paths
	// Port to bind on 127.0.0.1; 0 picks a free port.
	Port int
	// Version is the build version, reported by /health.
	Version string
	// ExtensionIDs are extra allowed extension ids besides the built-in one
	// and settings.json's extensionIds (--allow-extension).
	ExtensionIDs []string
	// UI is recorded in the daemon record: true when the tray runs too.
	UI bool
	// Flags are recorded in the daemon record: the flags `tether serve` ran
	// with, --port excepted, for `tether token rotate` to start it again
	// the same way.
	Flags []string
	// Window opens the window (POST /api/window/open: a second `tether`
	// asks the first this way, then exits); nil under `tether serve`,
	// which has none.
	Window localapi.Window
	// NoWindow says why Window is nil, for the answer to a request to open
	// it ("": `tether serve`).
	NoWindow string
	// Clients edits MCP clients' configs for the local API's clients
	// routes (nil: clients.CurrentHost()); Connect writes ConnectOptions
	// (zero: a stdio entry running Executable with "mcp", naming the
	// config dir when it is not the default).
	Clients        localapi.Clients
	ConnectOptions clients.Options
	// Executable is the tether binary that client configs and the test
	// browser run ("": clients.Executable(), this process's). BrowserEnv is
	// added to the test browser's environment (nil: TETHER_CONFIG_DIR when
	// the config dir is not the default).
	Executable string
	BrowserEnv []string
	// Extension is the built extension the local API writes for the user's
	// Chrome (nil: extension.Dist()).
	Extension fs.FS
	// PingInterval is the event stream's (apitype.PingInterval when 0);
	// EventBuffer is how many events wait for one slow subscriber (256
	// when 0). Tests shorten them.
	PingInterval time.Duration
	EventBuffer  int
	// AutoApproveProfiles pairs new browser profiles without asking.
	AutoApproveProfiles bool
	// EnableTools turns on off-by-default tools for this run, in addition to
	// settings.json's enabledTools.
	EnableTools []string
	// Unattended is what a confirm rule becomes when no Approver is set:
	// policy.Deny (the default) or policy.Allow (--unattended=allow).
	Unattended policy.Action
	// Approver asks the user about held calls (the tray's window); nil under
	// `tether serve`.
	Approver policy.Approver
	// ApprovalTimeout is how long a held call waits for an answer; 0 means
	// settings.json's approvalTimeoutSeconds (120 s by default).
	ApprovalTimeout time.Duration
	// Services, if set, is called once the daemon's parts are open, before
	// it listens: bare tether takes the local API's server from it (its
	// approval dialogs record late answers there), tests the rest.
	Services func(Services)
	// Logger receives every log line.
	Logger *slog.Logger
	// Locked, if set, is called once the daemon holds the config dir's
	// lock, before it logs anything: the daemon's log file, which allows a
	// single writer, is opened then.
	Locked func()
	// MCPSessionIdle ends MCP sessions idle this long (0: an hour), and
	// the sessions of clients that open none (broker.EndIdleSessions);
	// MaxMCPSessions caps MCP sessions (0: 1 000). See mcpSessions.
	MCPSessionIdle time.Duration
	MaxMCPSessions int
	// SessionSweep is how often idle sessions are looked for (0: a minute).
	SessionSweep time.Duration
	// Ready, if set, is called once the daemon is listening.
	Ready func(addr string)
}

// Services are the daemon's parts, once open. The tray and the window
// never use them: they are clients of the local API.
type Services struct {
	// Guard holds the pause switch, the policy rules and the approval queue.
	Guard *policy.Guard
	// Timeline is the record of every tool call, with its live event stream.
	Timeline *timeline.Store
	// API is the local API, for its Notify and ShowWindow.
	API *localapi.Server
}

// Health is GET /health's answer (apitype.Health).
type Health = apitype.Health

// Run starts the daemon and blocks until ctx ends or /shutdown is called.
// It returns ErrAlreadyRunning (wrapped, naming the pid and port) when another
// daemon holds the lock.
//
// An error after the lock is taken (the port in use, a settings.json or
// policy.json that does not parse) is also logged: the log file is where
// `tether mcp` sends the user when a daemon it started exits at start, and
// such a daemon's stderr goes nowhere.
func Run(ctx context.Context, cfg Config) error {
	locked, onLocked := false, cfg.Locked
	cfg.Locked = func() {
		locked = true
		if onLocked != nil {
			onLocked()
		}
	}
	err := run(ctx, cfg)
	if err != nil && locked && cfg.Logger != nil {
		cfg.Logger.Error("tether daemon stopped on an error", "err", err)
	}
	return err
}

func run(ctx context.Context, cfg Config) error {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := cfg.Paths
	if err := p.Ensure(); err != nil {
		return err
	}
	lock := flock.New(p.Lock())
	ok, err := lock.TryLock()
	if err != nil {
		return fmt.Errorf("take lock %s: %w%s", p.Lock(), err, config.PermissionHint(err))
	}
	if !ok {
		if rec, rerr := p.ReadDaemonRecord(); rerr == nil {
			return fmt.Errorf("%w (pid %d, port %d, version %s); stop it first (`tether stop`) or use it", ErrAlreadyRunning, rec.PID, rec.Port, rec.Version)
		}
		return fmt.Errorf("%w (lock %s is held)", ErrAlreadyRunning, p.Lock())
	}
	defer lock.Unlock()
	// A record here is a crashed daemon's: its port may be anyone's now,
	// and clients must not take this daemon's lock as that port's
	// (localclient.Probe).
	_ = os.Remove(p.Daemon())
	cfg.Locked()

	token, err := p.LoadOrCreateToken()
	if err != nil {
		return err
	}
	controlToken, err := p.LoadOrCreateControlToken()
	if err != nil {
		return err
	}
	pairingKeyHex, err := p.LoadOrCreatePairingKey()
	if err != nil {
		return err
	}
	pairingKey, _ := protocol.ParseKey(pairingKeyHex)
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			// Another program holds the port (the config dir's lock is ours,
			// so not this config dir's Tether): name it where the OS says.
			who := "another program"
			if holder := localclient.PortHolder(cfg.Port); holder != "" {
				who += " (" + holder + ")"
			}
			return fmt.Errorf("listen on 127.0.0.1:%d: %s holds the port (%w). Quit it, or run Tether on another port (--port N, or %s=N), "+
				"then write the extension from Tether's window (Extension → Write the extension) so the browser dials that port", cfg.Port, who, err, config.EnvPort)
		}
		return fmt.Errorf("listen on 127.0.0.1:%d (another program uses it? pass --port or set %s): %w", cfg.Port, config.EnvPort, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port

	settings, err := p.LoadSettings()
	if err != nil {
		ln.Close()
		return err
	}
	ext := cfg.Extension
	if ext == nil {
		ext = extension.Dist()
	}
	// The extension updates itself from folders Tether wrote (extupdate).
	updater, err := extupdate.New(extupdate.Config{Ext: ext, Allowed: p.IsExtensionFolder, PairingKey: pairingKeyHex, Logger: log})
	if err != nil {
		ln.Close()
		return err
	}
	b, err := broker.New(broker.Config{
		CheckExtension:      updater.Check,
		ExtensionIDs:        append(append([]string{broker.DefaultExtensionID}, settings.ExtensionIDs...), cfg.ExtensionIDs...),
		DaemonVersion:       cfg.Version,
		Logger:              log,
		StorePath:           p.Profiles(),
		PairingKey:          pairingKey,
		AutoApprove:         cfg.AutoApproveProfiles,
		CloseAgentTabsAfter: settings.CloseAgentTabsAfter(),
	})
	if err != nil {
		ln.Close()
		return err
	}
	defer b.Close()
	if cfg.Unattended == policy.Allow && cfg.Approver == nil {
		log.Warn("UNATTENDED MODE: actions that need the user's confirmation (file upload, evaluate) are ALLOWED without asking; use only for tests and trusted servers",
			"unattended", "allow")
	}
	approvalTimeout := cfg.ApprovalTimeout
	if approvalTimeout <= 0 {
		approvalTimeout = settings.ApprovalTimeout()
	}
	guard, err := policy.Open(policy.Config{
		Path: p.Policy(), Approver: cfg.Approver, Unattended: cfg.Unattended,
		Timeout: approvalTimeout, Logger: log, Classify: tmcp.Classify,
	})
	if err != nil {
		ln.Close()
		return err
	}
	if guard.Paused() {
		log.Warn("AI access is paused (tether resume to resume it)")
	}
	tl, err := timeline.Open(p.Timeline(), timeline.Options{Logger: log.With("component", "timeline")})
	if err != nil {
		ln.Close()
		return err
	}
	defer tl.Close()
	adapter := browserAdapter{b}
	tg := newToolGuard(guard, tl, b.Resolve, log)
	tg.heldFor = b.SessionOpened
	tg.checkRef = func(ctx context.Context, c broker.Caller, profile string, tab int, ref string) error {
		// c may read that tab (not another app's); the read is Tether's
		// own: not a step of the agent's call (no key), and nothing of c's
		// session changes (its current tab stays, should the user refuse).
		if _, err := b.Resolve(c, profile, tab, false, false); err != nil {
			return err
		}
		ctx = protocol.WithIdempotentCall(ctx, protocol.IdempotentCall{})
		return b.Call(ctx, profile, protocol.MethodSnapshot, &protocol.SnapshotParams{TabParams: protocol.TabParams{Tab: tab}, Ref: ref, Depth: 1}, nil, 10*time.Second)
	}
	tokens, err := mcptoken.Open(p)
	if err != nil {
		ln.Close()
		return err
	}
	defer func() {
		if err := tokens.Flush(); err != nil {
			log.Warn("named tokens' last use not stored", "err", err)
		}
	}()
	tg.limits = mcptoken.NewLimiter(settings.CallsPerMinute())
	tg.rtt = b.RTT
	if hosts := settings.RemoteHosts(); len(hosts) > 0 {
		log.Info("remote mode: serving /extension, /mcp and /health to a TLS reverse proxy on this machine",
			"hosts", strings.Join(hosts, ","), "calls_per_minute", settings.CallsPerMinute(), "named_tokens", len(tokens.List()))
	}
	tg.downloads = newDownloads(guard, tl, b.Call, log.With("component", "downloads"))
	b.OnDownload(tg.downloads.handle)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	apiCfg, err := localAPIConfig(cfg, port)
	if err != nil {
		ln.Close()
		return err
	}
	apiCfg.Broker, apiCfg.Guard, apiCfg.Timeline = b, guard, tl
	apiCfg.ControlToken, apiCfg.MCPToken, apiCfg.Logger = controlToken, token, log
	apiCfg.PairingKey = pairingKeyHex
	apiCfg.Shutdown = cancel
	apiCfg.Tokens = tokens
	api := localapi.New(apiCfg)
	defer api.Close()
	if cfg.Services != nil {
		cfg.Services(Services{Guard: guard, Timeline: tl, API: api})
	}
	// Screenshots left from earlier runs age out even if none is taken now.
	tmcp.PruneScreenshots(p.Screenshots(), time.Now(), tmcp.ScreenshotMaxAge, tmcp.ScreenshotMaxFiles)
	mcpServer := tmcp.NewServer(adapter, tmcp.Config{
		Version:          cfg.Version,
		EnabledTools:     append(settings.EnabledTools, cfg.EnableTools...),
		SettingsFile:     p.SettingsFile(),
		TrustedInput:     settings.TrustedInput,
		NoImages:         !settings.ImagesEnabled(),
		SnapshotMaxChars: settings.SnapshotMaxChars,
		ScreenshotDir:    p.Screenshots(),
		ConfigDir:        p.Dir,
		Guard:            tg,
		Recorder:         tg,
		AllowFileURLs:    settings.AllowFileURLs,
		SessionOpened:    func(c tmcp.Caller) { b.SessionOpened(brokerCaller(c)) },
	})
	sessions := newMCPSessions(cfg.MCPSessionIdle, cfg.MaxMCPSessions, log)
	streamable := server.NewStreamableHTTPServer(mcpServer,
		server.WithEndpointPath(PathMCP),
		server.WithStreamableHTTPLogger(log.With("component", "mcp-http")),
		server.WithSessionIdManager(sessions),
		// The SDK refuses a loopback peer with a non-loopback Host (DNS
		// rebinding), which is what the reverse proxy of remote mode sends.
		// hostGate checks every request before it, more strictly (listed
		// hosts only, from a loopback peer, over HTTPS): the SDK's own
		// check stays on unless remote mode is.
		server.WithDisableLocalhostProtection(len(settings.RemoteHosts()) > 0),
		// `tether mcp` names its session for good (its tabs stay its own
		// when it initializes again after a daemon restart).
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			ctx = tmcp.WithToken(ctx, TokenName(r.Context()))
			return tmcp.WithSessionKey(ctx, r.Header.Get(protocol.HeaderSession))
		}),
	)
	sessions.end = endVia(streamable)
	sessions.ended = b.SessionEnded

	started := time.Now()
	mux := http.NewServeMux()
	mux.Handle(PathExtension, remoteExtension(b))
	sweepEvery := cfg.SessionSweep
	if sweepEvery <= 0 {
		sweepEvery = time.Minute
	}
	go sessions.sweep(ctx, sweepEvery, func(idle time.Duration) {
		if n := b.EndIdleSessions(idle, sessions.isLive); n > 0 {
			log.Info("AI app sessions ended: idle without an MCP session, or theirs had ended", "sessions", n, "idle", idle)
		}
	})
	go flushTokens(ctx, tokens, log)
	// The drainer stands before the token check so that a bridge which has
	// already read a rotated token is told "restarting" (503), not 401.
	drain := &drainer{trimmer: newIdleTrimmer(IdleTrimDelay)}
	mux.Handle(PathMCP, drain.wrap(apiGuard(log, token, tokens, mcpLimits(sessions, namedTokenMessages(log, tg.limits, tokens, streamable)))))
	mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// Through the proxy /health needs no token, so it tells the
		// internet only that Tether answers: not its version (which names
		// the fixes it lacks), uptime or how many browsers are connected.
		if remoteHost(r.Context()) != "" {
			_ = json.NewEncoder(w).Encode(map[string]string{"name": "tether"})
			return
		}
		h := Health{
			Name: "tether", Version: cfg.Version,
			UptimeSeconds: time.Since(started).Seconds(),
			Profiles:      len(b.Profiles()),
		}
		if nonce := r.URL.Query().Get(HealthNonce); protocol.ValidNonce(nonce) {
			h.Proof = protocol.HealthProof(pairingKey, protocol.LocalEndpoint(port), nonce)
		}
		_ = json.NewEncoder(w).Encode(h)
	})
	srv := &http.Server{
		Handler:           apiOrLoopbackOnly(api, hostGate(log, settings.RemoteHosts(), mux)),
		ReadHeaderTimeout: 10 * time.Second,
		// Request headers are small here (a token, MCP's headers, a
		// browser's cookies for 127.0.0.1 on the extension's upgrade);
		// net/http's default of 1 MB let a local process hold about 1 MB
		// of memory per connection it opened, without a token.
		MaxHeaderBytes: MaxHeaderBytes,
		// A kept-alive connection waiting for its next request is closed
		// after this long, so idle sockets (a local process opening many)
		// do not pile up; streams in progress (SSE, MCP) are not idle.
		IdleTimeout: IdleTimeout,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	rec := config.DaemonRecord{PID: os.Getpid(), Port: port, Version: cfg.Version, UI: cfg.UI, Flags: cfg.Flags, Proves: true}
	_ = os.Remove(p.QuitMarker()) // running again: bridges may restart it again
	if err := p.WriteDaemonRecord(rec); err != nil {
		ln.Close()
		return err
	}
	defer p.RemoveDaemonRecord(rec.PID)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("tether daemon listening", "addr", ln.Addr().String(), "version", cfg.Version,
		"config_dir", p.Dir, "pid", rec.PID)
	if cfg.Ready != nil {
		cfg.Ready(ln.Addr().String())
	}

	select {
	case <-ctx.Done():
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	}
	log.Info("tether daemon stopping")
	api.Stopping()
	// A held call has not run: it is denied now, with that outcome, rather
	// than holding the stop up to its timeout and reaching the agent as
	// "outcome unknown".
	if n := guard.DenyPending(); n > 0 {
		log.Info("held calls denied: Tether is stopping", "calls", n)
	}
	// In-flight calls finish first, so their true results reach the agent
	// (a click that ran must not be reported as failed); new ones get 503.
	drain.drain(log, DrainTimeout)
	api.Close() // ends the event streams, which never end by themselves
	b.Close()
	shutdownCtx, stop := context.WithTimeout(context.Background(), 3*time.Second)
	defer stop()
	_ = streamable.Shutdown(shutdownCtx)
	_ = srv.Shutdown(shutdownCtx)
	// Every call's row is stored before the daemon record goes, so that a
	// daemon started next never shares the file with this one's writer.
	if err := tl.Close(); err != nil {
		log.Warn("timeline close failed", "err", err)
	}
	st := tl.Stats()
	log.Info("timeline stored", "rows", st.Written, "batches", st.Batches, "not_recorded", st.Dropped)
	return nil
}

// localAPIConfig is the local API's configuration from cfg, with the
// defaults `tether serve` relies on; Run adds the daemon's parts.
func localAPIConfig(cfg Config, port int) (localapi.Config, error) {
	p := cfg.Paths
	c := localapi.Config{
		Clients: cfg.Clients, ConnectOptions: cfg.ConnectOptions,
		Extension: cfg.Extension, ExtensionDir: p.UnpackedExtension(), ExtensionID: broker.DefaultExtensionID,
		Port: port, Executable: cfg.Executable, BrowserEnv: cfg.BrowserEnv, Window: cfg.Window, NoWindow: cfg.NoWindow,
		Version: cfg.Version, PingInterval: cfg.PingInterval, EventBuffer: cfg.EventBuffer,
	}
	if c.Extension == nil {
		c.Extension = extension.Dist()
	}
	if c.Executable == "" {
		exe, err := clients.Executable()
		if err != nil {
			return c, fmt.Errorf("find the tether binary: %w", err)
		}
		c.Executable = exe
	}
	if c.Clients == nil {
		host, err := clients.CurrentHost()
		if err != nil {
			return c, err
		}
		c.Clients = host
	}
	if c.ConnectOptions.Executable == "" {
		c.ConnectOptions.Executable = c.Executable
		if !p.IsDefault() {
			c.ConnectOptions.ConfigDir = p.Dir
		}
		if cfg.Port != 0 && cfg.Port != config.DefaultPort {
			c.ConnectOptions.Port = cfg.Port
		}
	}
	if c.BrowserEnv == nil && !p.IsDefault() {
		c.BrowserEnv = []string{config.EnvConfigDir + "=" + p.Dir}
	}
	return c, nil
}

// apiOrLoopbackOnly sends the local API's requests to api, which checks
// them itself (its wrong Host is 421), and the rest to rest.
func apiOrLoopbackOnly(api http.Handler, rest http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, apitype.PathPrefix) {
			api.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
}

// flushTokens writes the named tokens' last use every
// mcptoken.FlushInterval until ctx ends (Run flushes once more as it stops):
// never a write per call.
func flushTokens(ctx context.Context, tokens *mcptoken.Store, log *slog.Logger) {
	t := time.NewTicker(mcptoken.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := tokens.Flush(); err != nil {
				log.Warn("named tokens' last use not stored", "err", err)
			}
		}
	}
}
