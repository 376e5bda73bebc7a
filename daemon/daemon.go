// Package daemon runs the Tether daemon: one HTTP server on 127.0.0.1 that
// serves the extension WebSocket (/extension), MCP over streamable HTTP
// (/mcp), /health and /shutdown, guarded by the config dir's lock so that one
// daemon runs per user.
package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/gofrs/flock"
	"github.com/mark3labs/mcp-go/server"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/config"
	tmcp "github.com/tether-browser/tether/mcp"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/timeline"
)

// Routes.
const (
	PathExtension = "/extension"
	PathMCP       = "/mcp"
	PathHealth    = "/health"
	PathShutdown  = "/shutdown"
	// PathProfiles is the control API behind `tether profiles`.
	PathProfiles = "/control/profiles"
	// PathPause is the control API behind `tether pause` and `tether resume`.
	PathPause = "/control/pause"
	// PathWindow (POST) shows the daemon's window: a second `tether` asks
	// the first this way, then exits.
	PathWindow = "/control/window"
)

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
	// ExtensionIDs are extra allowed extension ids besides the built-in one.
	ExtensionIDs []string
	// UI is recorded in the daemon record: true when the tray runs too.
	UI bool
	// Flags are recorded in the daemon record: the flags `tether serve` ran
	// with, --port excepted, for `tether token rotate` to start it again
	// the same way.
	Flags []string
	// ShowWindow, if set, shows the window (POST /control/window); nil
	// under `tether serve`, which has none.
	ShowWindow func()
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
	// ApprovalTimeout is how long a held call waits for an answer (120 s).
	ApprovalTimeout time.Duration
	// Services, if set, is called once the daemon's parts are open, before
	// it listens: the in-process API of the tray and window.
	Services func(Services)
	// Logger receives every log line.
	Logger *slog.Logger
	// Locked, if set, is called once the daemon holds the config dir's
	// lock, before it logs anything: the daemon's log file, which allows a
	// single writer, is opened then.
	Locked func()
	// MCPSessionIdle ends MCP sessions idle this long (0: an hour);
	// MaxMCPSessions caps them (0: 1 000). See mcpSessions.
	MCPSessionIdle time.Duration
	MaxMCPSessions int
	// Ready, if set, is called once the daemon is listening.
	Ready func(addr string)
}

// Services are the daemon's parts a tray or window uses in-process.
type Services struct {
	// Broker is the registry of browser profiles and their shared tabs.
	Broker *broker.Broker
	// Guard holds the pause switch, the policy rules and the approval queue.
	Guard *policy.Guard
	// Timeline is the record of every tool call, with its live event stream.
	Timeline *timeline.Store
}

// Health is /health's JSON body. It holds no secrets.
type Health struct {
	// Name is always "tether".
	Name string `json:"name"`
	// Version is the daemon's build version.
	Version string `json:"version"`
	// UptimeSeconds since start.
	UptimeSeconds float64 `json:"uptimeSeconds"`
	// Profiles is the number of connected browser profiles.
	Profiles int `json:"profiles"`
}

// Run starts the daemon and blocks until ctx ends or /shutdown is called.
// It returns ErrAlreadyRunning (wrapped, naming the pid and port) when another
// daemon holds the lock.
func Run(ctx context.Context, cfg Config) error {
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
		return fmt.Errorf("take lock %s: %w", p.Lock(), err)
	}
	if !ok {
		if rec, rerr := p.ReadDaemonRecord(); rerr == nil {
			return fmt.Errorf("%w (pid %d, port %d, version %s); stop it first or use it", ErrAlreadyRunning, rec.PID, rec.Port, rec.Version)
		}
		return fmt.Errorf("%w (lock %s is held)", ErrAlreadyRunning, p.Lock())
	}
	defer lock.Unlock()
	if cfg.Locked != nil {
		cfg.Locked()
	}

	token, err := p.LoadOrCreateToken()
	if err != nil {
		return err
	}
	controlToken, err := p.LoadOrCreateControlToken()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.Port)))
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%d (another program uses it? pass --port or set %s): %w", cfg.Port, config.EnvPort, err)
	}
	port := ln.Addr().(*net.TCPAddr).Port

	b, err := broker.New(broker.Config{
		ExtensionIDs:  append([]string{broker.DefaultExtensionID}, cfg.ExtensionIDs...),
		DaemonVersion: cfg.Version,
		Logger:        log,
		StorePath:     p.Profiles(),
		AutoApprove:   cfg.AutoApproveProfiles,
	})
	if err != nil {
		ln.Close()
		return err
	}
	defer b.Close()
	settings, err := p.LoadSettings()
	if err != nil {
		ln.Close()
		return err
	}
	if cfg.Unattended == policy.Allow && cfg.Approver == nil {
		log.Warn("UNATTENDED MODE: actions that need the user's confirmation (file upload, evaluate) are ALLOWED without asking; use only for tests and trusted servers",
			"unattended", "allow")
	}
	guard, err := policy.Open(policy.Config{
		Path: p.Policy(), Approver: cfg.Approver, Unattended: cfg.Unattended,
		Timeout: cfg.ApprovalTimeout, Logger: log,
	})
	if err != nil {
		ln.Close()
		return err
	}
	if guard.Paused() {
		log.Warn("AI access is paused (tether resume to resume it)")
	}
	tl, err := timeline.Open(p.Timeline(), timeline.Options{})
	if err != nil {
		ln.Close()
		return err
	}
	defer tl.Close()
	adapter := browserAdapter{b}
	tg := &toolGuard{guard: guard, timeline: tl, profiles: adapter.Profiles, log: log}
	if cfg.Services != nil {
		cfg.Services(Services{Broker: b, Guard: guard, Timeline: tl})
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
	})
	sessions := newMCPSessions(cfg.MCPSessionIdle, cfg.MaxMCPSessions, log)
	streamable := server.NewStreamableHTTPServer(mcpServer,
		server.WithEndpointPath(PathMCP),
		server.WithStreamableHTTPLogger(log.With("component", "mcp-http")),
		server.WithSessionIdManager(sessions),
	)
	sessions.end = endVia(streamable)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	started := time.Now()
	mux := http.NewServeMux()
	// Control routes take the control token, never the MCP token.
	ctl := func(h http.Handler) http.Handler { return controlGuard(log, controlToken, token, h) }
	mux.Handle(PathExtension, b)
	go sessions.sweep(ctx, time.Minute)
	// The drainer stands before the token check so that a bridge which has
	// already read a rotated token is told "restarting" (503), not 401.
	drain := &drainer{}
	mux.Handle(PathMCP, drain.wrap(apiGuard(log, token, mcpLimits(sessions, streamable))))
	mux.HandleFunc("GET "+PathHealth, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(Health{
			Name: "tether", Version: cfg.Version,
			UptimeSeconds: time.Since(started).Seconds(),
			Profiles:      len(b.Profiles()),
		})
	})
	mux.Handle("POST "+PathShutdown, ctl(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Info("shutdown requested over HTTP")
		w.WriteHeader(http.StatusNoContent)
		cancel()
	})))
	mux.Handle(PathProfiles, ctl(profilesHandler(b)))
	mux.Handle(PathProfiles+"/", ctl(profilesHandler(b)))
	mux.Handle(PathPause, ctl(pauseHandler(guard)))
	mux.Handle("POST "+PathWindow, ctl(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cfg.ShowWindow == nil {
			writeJSON(w, http.StatusConflict, ControlError{"this daemon runs without a window (tether serve)"})
			return
		}
		log.Info("window shown on request (a second tether was started)")
		cfg.ShowWindow()
		w.WriteHeader(http.StatusNoContent)
	})))
	srv := &http.Server{
		Handler:           loopbackOnly(log, mux),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}

	rec := config.DaemonRecord{PID: os.Getpid(), Port: port, Version: cfg.Version, UI: cfg.UI, Flags: cfg.Flags}
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
	// In-flight calls finish first, so their true results reach the agent
	// (a click that ran must not be reported as failed); new ones get 503.
	drain.drain(log, DrainTimeout)
	b.Close()
	shutdownCtx, stop := context.WithTimeout(context.Background(), 3*time.Second)
	defer stop()
	_ = streamable.Shutdown(shutdownCtx)
	_ = srv.Shutdown(shutdownCtx)
	return nil
}
