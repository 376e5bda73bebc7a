package uiproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/dialog"
	"github.com/tether-browser/tether/policy"
)

// DialogMode is the argument that makes the desktop executable an
// approval dialog (cli: `tether-desktop approval-dialog`).
const DialogMode = "approval-dialog"

// outcomeIgnored is the timeline outcome of a dialog answered after its
// call was decided (apitype.TimelineEntry.Outcome; timeline.Ignored).
const outcomeIgnored = "ignored"

// waitDelay bounds how long Ask waits for a dialog's output once its
// process has exited or been killed (a child that kept the pipes open).
const waitDelay = 2 * time.Second

// DialogConfig configures Dialogs.
type DialogConfig struct {
	// Path is the dialog executable and Args its arguments; see
	// DialogCommand for the usual ones. Required.
	Path string
	Args []string
	// Env is the dialog's environment; nil means the daemon's own (the
	// dialog needs its DISPLAY or WAYLAND_DISPLAY).
	Env []string
	// OnHeld, when set, is called at the start of every Ask, before the
	// call waits for its turn: bare tether starts the window process there,
	// so a newly held call also shows in the window's queue.
	OnHeld func()
	// Record, when set, stores a timeline row. Dialogs records one of
	// outcome "ignored" for a dialog answered after its call was decided,
	// so the user can see that the click changed nothing.
	Record func(ctx context.Context, e apitype.TimelineEntry) error
	// Logger receives dialog failures and late answers (discarded if nil).
	Logger *slog.Logger
	// Now is the clock of the recorded rows (time.Now if nil).
	Now func() time.Time
}

// Dialogs is the daemon's policy.Approver when it runs with a desktop: for
// each held call it starts one approval dialog process (package dialog,
// `tether-desktop approval-dialog`), writes the question on its stdin and
// reads the answer from its stdout.
//
// At most one dialog is on screen at a time; the other held calls wait
// for their turn (in arrival order, as Go queues a channel's blocked
// senders), and a call decided while it waits gets no dialog. When a call is decided elsewhere (the window's queue, the CLI,
// its timeout, the pause switch) while its dialog is up, the process is
// killed, so the dialog disappears at once; an answer it printed in that
// instant changes nothing and is recorded as "ignored". A dialog closed
// without an answer, or one that fails to start or crashes (logged),
// leaves the call to the queue or the timeout. Close kills the dialog on
// screen; no dialog process outlives the Dialogs.
type Dialogs struct {
	cfg DialogConfig
	log *slog.Logger

	turn chan struct{} // holds a token while a dialog is on screen

	mu      sync.Mutex
	closed  chan struct{} // closed by Close
	running map[*exec.Cmd]context.CancelFunc
}

// NewDialogs returns an Approver that asks through dialog processes.
func NewDialogs(cfg DialogConfig) *Dialogs {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Dialogs{cfg: cfg, log: log, turn: make(chan struct{}, 1),
		closed: make(chan struct{}), running: map[*exec.Cmd]context.CancelFunc{}}
}

// DialogCommand is the usual dialog command for the running executable
// exe: on Linux and macOS tether-desktop next to it (the lean tether has
// no dialog; exe may be tether-desktop itself), on Windows exe itself;
// with the argument DialogMode. It fails when that file does not exist:
// held calls are then asked in the window only.
func DialogCommand(exe string) (path string, args []string, err error) {
	path = exe
	if runtime.GOOS != "windows" {
		path = filepath.Join(filepath.Dir(exe), "tether-desktop")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", nil, fmt.Errorf("approval dialog: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", nil, fmt.Errorf("approval dialog: %s is not a file", path)
	}
	return path, []string{DialogMode}, nil
}

// Close kills the dialog on screen and makes every Ask, waiting or later,
// return ErrClosed. It returns once the killed process has been reaped.
func (d *Dialogs) Close() {
	d.mu.Lock()
	select {
	case <-d.closed:
	default:
		close(d.closed)
	}
	for _, kill := range d.running {
		kill()
	}
	d.mu.Unlock()
	// Wait for the dialog to hand its turn back: the process is gone then.
	d.turn <- struct{}{}
	<-d.turn
}

// Ask implements policy.Approver; see Dialogs. It returns the user's
// answer, or an error (ctx's when the call was decided elsewhere; ErrClosed
// after Close) and the call is left to the queue.
func (d *Dialogs) Ask(ctx context.Context, r policy.Request) (policy.Answer, error) {
	if d.cfg.OnHeld != nil {
		d.cfg.OnHeld()
	}
	select {
	case d.turn <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err() // decided while waiting: no dialog
	case <-d.closed:
		return "", ErrClosed
	}
	if err := ctx.Err(); err != nil { // both were ready and the turn was picked
		<-d.turn
		return "", err
	}
	answer, late, err := d.run(ctx, r)
	<-d.turn // the process is gone: the next dialog may show
	if late != "" {
		d.lateAnswer(r, late, context.Cause(ctx))
	}
	switch {
	case errors.Is(err, ErrClosed):
		return "", err
	case err != nil:
		d.log.Warn("approval dialog failed; the window and the CLI can still answer", "tool", r.Tool, "call", r.ID, "err", err)
	case answer == dialog.Closed:
		d.log.Info("approval dialog closed without an answer", "tool", r.Tool, "call", r.ID)
	case answer != "":
		return policy.Answer(answer), nil
	}
	select { // the queue, the CLI or the timeout decides
	case <-ctx.Done():
		return "", ctx.Err()
	case <-d.closed:
		return "", ErrClosed
	}
}

// run shows one dialog and waits for its process to exit. It returns the
// answer (one of the three, or dialog.Closed), or late: an answer read
// after ctx ended, which must change nothing. err is a dialog that could
// not start or ended without a valid answer (a crash), and nil when it
// was killed because ctx ended.
func (d *Dialogs) run(ctx context.Context, r policy.Request) (answer, late string, err error) {
	q, err := json.Marshal(dialog.Question{Approval: approval(r)})
	if err != nil {
		return "", "", err
	}
	procCtx, kill := context.WithCancel(context.Background())
	defer kill()
	cmd := exec.CommandContext(procCtx, d.cfg.Path, d.cfg.Args...)
	cmd.Env = d.cfg.Env
	cmd.Stdin = bytes.NewReader(append(q, '\n'))
	var stdout bytes.Buffer
	stderr := &tail{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	cmd.WaitDelay = waitDelay
	setProcessGroup(cmd)
	cmd.Cancel = func() error { return killProcessGroup(cmd) }

	d.mu.Lock()
	select {
	case <-d.closed:
		d.mu.Unlock()
		return "", "", ErrClosed
	default:
	}
	if err := cmd.Start(); err != nil {
		d.mu.Unlock()
		return "", "", fmt.Errorf("start %s: %w", d.cfg.Path, err)
	}
	d.running[cmd] = kill
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.running, cmd)
		d.mu.Unlock()
	}()
	d.log.Debug("approval dialog shown", "tool", r.Tool, "call", r.ID, "pid", cmd.Process.Pid)

	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var waitErr error
	decided := false
	select {
	case waitErr = <-exited:
		decided = ctx.Err() != nil // answered in the same instant as elsewhere
	case <-ctx.Done():
		kill()
		waitErr = <-exited
		decided = true
	}
	a, perr := parseReply(stdout.Bytes())
	if decided {
		if perr == nil && a != dialog.Closed {
			return "", a, nil
		}
		return "", "", nil
	}
	if perr != nil {
		if waitErr != nil {
			perr = fmt.Errorf("%w (%v; stderr: %q)", perr, waitErr, stderr.String())
		}
		return "", "", perr
	}
	return a, "", nil
}

// parseReply reads the dialog's last non-empty output line as a
// dialog.Reply and checks its answer.
func parseReply(out []byte) (string, error) {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return "", errors.New("the dialog printed no answer")
	}
	var rep dialog.Reply
	if err := json.Unmarshal([]byte(last), &rep); err != nil {
		return "", fmt.Errorf("the dialog's answer %q: %w", last, err)
	}
	switch rep.Answer {
	case apitype.AllowOnce, apitype.AlwaysAllowSite, apitype.Deny, dialog.Closed:
		return rep.Answer, nil
	}
	return "", fmt.Errorf("the dialog answered %q, not one of allow_once, always_allow_site, deny, closed", rep.Answer)
}

// lateAnswer records a dialog answered after its call was decided; cause
// is context.Cause of the call's ctx (DeadlineExceeded: the timeout).
func (d *Dialogs) lateAnswer(r policy.Request, answer string, cause error) {
	why := "after the call had been answered elsewhere (window or CLI) or cancelled"
	if errors.Is(cause, context.DeadlineExceeded) {
		why = "after the call had timed out and was denied"
	}
	d.log.Info("late answer to an approval dialog ignored", "tool", r.Tool, "call", r.ID, "answer", answer, "why", why)
	if d.cfg.Record == nil {
		return
	}
	e := apitype.TimelineEntry{CallID: r.ID, TimeMs: d.cfg.Now().UnixMilli(), Client: r.Client, Profile: r.Profile,
		Tab: r.Tab, Tool: r.Tool, Args: r.Summary, Class: string(r.Class), Site: strings.Join(r.Sites, " "),
		Decision: fmt.Sprintf("approval dialog answered %s %s; it changed nothing", answer, why),
		Outcome:  outcomeIgnored}
	if err := d.cfg.Record(context.Background(), e); err != nil {
		d.log.Error("timeline record failed", "err", err)
	}
}

// approval is the question as the local API lists a held call.
func approval(r policy.Request) apitype.Approval {
	return apitype.Approval{ID: r.ID, Tool: r.Tool, Class: string(r.Class), Client: r.Client,
		Profile: r.Profile, Tab: r.Tab, Sites: r.Sites, Summary: r.Summary,
		SinceMs: r.Since.UnixMilli(), DeadlineMs: r.Deadline.UnixMilli()}
}
