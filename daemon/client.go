package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"time"

	"github.com/gofrs/flock"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
)

// StartWait is how long Ensure polls /health for a daemon it started.
const StartWait = 8 * time.Second

// Probe asks the daemon recorded in the config dir for its health and
// checks that it proves it is this config dir's daemon (localclient.Probe):
// callers send it tokens next. It fails when no record exists, nothing
// answers, or the program on the port does not prove it
// (localclient.ErrNotThisTether).
func Probe(ctx context.Context, p config.Paths) (config.DaemonRecord, Health, error) {
	return localclient.Probe(ctx, p)
}

// EnsureConfig configures Ensure.
type EnsureConfig struct {
	Paths config.Paths
	// Version is the caller's build version; a daemon with another version is
	// stopped and replaced, so a stale build never keeps serving.
	Version string
	// Command is the daemon command line to start detached, e.g.
	// [/path/to/tether serve].
	Command []string
	Logger  *slog.Logger
}

// Ensure returns the record of a running daemon of cfg.Version, starting one
// detached when none answers (or replacing one of another version) and
// polling /health for up to StartWait. When the daemon it started exits
// at once while another program holds the port it takes, the error wraps
// that program's *localclient.OtherProgramError (localclient.CheckPort).
func Ensure(ctx context.Context, cfg EnsureConfig) (config.DaemonRecord, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rec, h, err := Probe(ctx, cfg.Paths)
	if err == nil {
		if h.Version == cfg.Version {
			return rec, nil
		}
		log.Warn("running daemon has another version; restarting it", "daemon_version", h.Version, "version", cfg.Version, "pid", rec.PID)
		if err := stop(ctx, cfg.Paths, rec); err != nil {
			return rec, fmt.Errorf("stop the daemon of version %s: %w", h.Version, err)
		}
	}
	log.Info("starting daemon", "command", cfg.Command)
	cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
	cmd.Env = os.Environ()
	cmd.SysProcAttr = detachAttr()
	if err := cmd.Start(); err != nil {
		return rec, fmt.Errorf("start daemon %v: %w", cfg.Command, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.Now().Add(StartWait)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		rec, h, err := Probe(ctx, cfg.Paths)
		if err == nil && h.Version == cfg.Version {
			return rec, nil
		}
		if time.Now().After(deadline) {
			return rec, fmt.Errorf("the daemon did not answer within %s; see %s", StartWait, cfg.Paths.LogFile())
		}
		select {
		case err := <-exited:
			// It may have lost a race with another daemon that started at
			// the same moment: use that one if it answers.
			if rec, h, perr := Probe(ctx, cfg.Paths); perr == nil && h.Version == cfg.Version {
				return rec, nil
			}
			// Most often another program holds the port it takes
			// ($TETHER_PORT or the default): say which, and what to do.
			if port, perr := config.PortFromEnv(); perr == nil {
				if op := localclient.CheckPort(ctx, cfg.Paths, port); op != nil {
					return rec, fmt.Errorf("the daemon could not start: %w", op)
				}
			}
			return rec, fmt.Errorf("the daemon exited at start (%v); see %s", err, cfg.Paths.LogFile())
		case <-tick.C:
		case <-ctx.Done():
			return rec, ctx.Err()
		}
	}
}

// stop asks the daemon to shut down with the control token from the config
// dir. A daemon of an older version, from before the control token, takes
// only the MCP token on /shutdown: on 401 stop asks again with that one
// (today's daemon refuses it there).
func stop(ctx context.Context, p config.Paths, rec config.DaemonRecord) error {
	ctl, err := p.ReadControlToken()
	if err == nil {
		err = Stop(ctx, p, rec, ctl)
	}
	if err == nil || !errors.Is(err, errUnauthorized) && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	token, terr := p.ReadToken()
	if terr != nil {
		return errors.Join(err, terr)
	}
	return Stop(ctx, p, rec, token)
}

// errUnauthorized: the daemon refused the token (401).
var errUnauthorized = errors.New("the daemon refused the token")

// legacyShutdown is where daemons from before the local API took a
// shutdown; Stop asks there when /api/shutdown is not found, so that Ensure
// can replace such a daemon.
const legacyShutdown = "/shutdown"

// stopClient proves each new connection before a token goes on it
// (localclient.ProvenDialer): Probe proved the daemon, but the port may
// have changed hands since.
func stopClient(p config.Paths) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: localclient.ProvenDialer(p), DisableKeepAlives: true}}
}

// Stop asks the daemon rec describes to shut down (POST /api/shutdown with
// token, the control token; the MCP token is refused with 403) and waits
// until it has released the config dir's lock: up to DrainTimeout for its
// in-flight calls to finish, plus 10 s. A 401 answer wraps errUnauthorized.
func Stop(ctx context.Context, p config.Paths, rec config.DaemonRecord, token string) error {
	post := func(path string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, rec.URL()+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := stopClient(p).Do(req)
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		return resp, nil
	}
	resp, err := post(apitype.PathShutdown)
	if err == nil && resp.StatusCode == http.StatusNotFound {
		resp, err = post(legacyShutdown)
	}
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("shutdown answered %s: %w", resp.Status, errUnauthorized)
	}
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("shutdown answered %s", resp.Status)
	}
	wait := DrainTimeout + 10*time.Second
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	lock := flock.New(p.Lock())
	if ok, err := lock.TryLockContext(ctx, 50*time.Millisecond); err != nil || !ok {
		return fmt.Errorf("the daemon (pid %d) did not stop within %s", rec.PID, wait)
	}
	return lock.Unlock()
}
