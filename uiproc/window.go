package uiproc

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/tether-browser/tether/config"
)

// WindowConfig configures a Window.
type WindowConfig struct {
	// Path is the window's executable (WindowExecutable of the lean
	// tether's path).
	Path string
	// Args are its arguments; nil means ["window"].
	Args []string
	// Env is added to the environment it inherits (DISPLAY and the like):
	// ConfigEnv, so that it reaches this daemon.
	Env []string
	// Show asks the running window process to show and raise itself: the
	// local API server sends it a WindowShow event. Nil: Open of a running
	// window does nothing.
	Show func()
	// StopWait is how long Close waits for the process to end after asking
	// it to (SIGTERM) before killing it; 0 means 5 s.
	StopWait time.Duration
	// Logger receives the process's start, exit and crash.
	Logger *slog.Logger
}

// WindowExecutable is the window's executable for the lean tether at exe:
// tether-desktop next to it on Linux and macOS (the build with the window;
// the lean one never loads GTK or WebKit), exe itself on Windows, where
// tether.exe has the window.
func WindowExecutable(exe string) string {
	if runtime.GOOS == "windows" {
		return exe
	}
	return filepath.Join(filepath.Dir(exe), "tether-desktop")
}

// ConfigEnv is what the window process's environment must add to reach
// the daemon of p: TETHER_CONFIG_DIR when p is not the default config dir.
func ConfigEnv(p config.Paths) []string {
	if p.IsDefault() {
		return nil
	}
	return []string{config.EnvConfigDir + "=" + p.Dir}
}

// Window starts and stops the window process (`tether-desktop window`) for
// the daemon: at most one runs at a time. Its methods are safe for
// concurrent use.
type Window struct {
	cfg WindowConfig
	log *slog.Logger

	mu     sync.Mutex
	proc   *process // the running window process; nil when none
	closed bool
}

// process is one started window process.
type process struct {
	cmd *exec.Cmd
	// done is closed once it was reaped.
	done   chan struct{}
	stderr *tail
	// stopping is set when Close asked it to end: its exit is no crash.
	stopping bool
}

// NewWindow returns a Window; nothing starts before Open.
func NewWindow(cfg WindowConfig) *Window {
	if cfg.Args == nil {
		cfg.Args = []string{"window"}
	}
	if cfg.StopWait <= 0 {
		cfg.StopWait = 5 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Window{cfg: cfg, log: log}
}

// Open opens the window: when its process runs, it asks it to show itself
// (WindowConfig.Show); else it starts one, which opens shown. It returns
// once the process started, not once it painted. Calls at the same time
// start one process. Errors: the executable is missing or cannot start
// (the error says to reinstall), or ErrClosed after Close.
func (w *Window) Open() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrClosed
	}
	if w.proc != nil {
		w.mu.Unlock()
		if w.cfg.Show != nil {
			w.cfg.Show()
		}
		return nil
	}
	defer w.mu.Unlock()
	if fi, err := os.Stat(w.cfg.Path); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("the Tether window is not installed (%s is missing); reinstall Tether", w.cfg.Path)
	}
	cmd := exec.Command(w.cfg.Path, w.cfg.Args...)
	cmd.Env = append(os.Environ(), w.cfg.Env...)
	p := &process{cmd: cmd, done: make(chan struct{}), stderr: &tail{max: 8 << 10}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the Tether window (%s): %w; reinstall Tether if it persists", w.cfg.Path, err)
	}
	w.proc = p
	w.log.Info("window process started", "pid", cmd.Process.Pid, "path", w.cfg.Path)
	go w.reap(p)
	return nil
}

// reap waits for p to end, forgets it so that the next Open starts a new
// one, and logs how it ended.
func (w *Window) reap(p *process) {
	err := p.cmd.Wait()
	// Logged and forgotten under one lock: whoever sees it gone (the next
	// Open, a test) finds the reason already in the log, and an Open that
	// follows the log line (the tray's Open Tether as the linger ends)
	// starts a new process instead of asking the dead one to show itself.
	w.mu.Lock()
	stopping := p.stopping
	pid := p.cmd.Process.Pid
	switch {
	case err == nil:
		w.log.Info("window process exited", "pid", pid)
	case stopping:
		w.log.Info("window process stopped", "pid", pid, "status", err.Error())
	default:
		w.log.Warn("window process crashed; the next Open starts a new one", "pid", pid,
			"status", err.Error(), "stderr", p.stderr.lastLines(10))
	}
	if w.proc == p {
		w.proc = nil
	}
	w.mu.Unlock()
	close(p.done)
}

// Running reports whether a window process runs now.
func (w *Window) Running() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.proc != nil
}

// Close ends the window process, if one runs (the daemon is stopping):
// SIGTERM, then a kill after WindowConfig.StopWait (at once on Windows,
// which has no SIGTERM). It returns once the process was reaped; later
// Opens return ErrClosed.
func (w *Window) Close() error {
	w.mu.Lock()
	w.closed = true
	p := w.proc
	if p != nil {
		p.stopping = true
	}
	w.mu.Unlock()
	if p == nil {
		return nil
	}
	if runtime.GOOS == "windows" || p.cmd.Process.Signal(syscall.SIGTERM) != nil {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(w.cfg.StopWait):
	}
	w.log.Warn("window process did not stop; killing it", "pid", p.cmd.Process.Pid, "waited", w.cfg.StopWait)
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill the window process %d: %w", p.cmd.Process.Pid, err)
	}
	<-p.done
	return nil
}
