package uiproc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/dialog"
	"github.com/tether-browser/tether/policy"
)

// The fake dialog is this test binary run as TestFakeDialog: it reads the
// question on stdin, connects to the test's Unix socket, sends the
// question as one line, then does what the test writes back:
//
//	<answer>         print {"answer":"<answer>"} and exit 0
//	print <answer>   print it, say "printed", and wait to be killed
//	crash            write to stderr and exit 3
//	wait             (nothing) wait to be killed; EOF exits 0 silently
const fakeSockEnv = "TETHER_FAKE_DIALOG_SOCK"

func TestFakeDialog(t *testing.T) {
	sock := os.Getenv(fakeSockEnv)
	if sock == "" {
		t.Skip("only run as the fake dialog of the Dialogs tests")
	}
	q, err := bufio.NewReader(os.Stdin).ReadString('\n')
	if err != nil {
		fmt.Fprintln(os.Stderr, "read question:", err)
		os.Exit(4)
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dial:", err)
		os.Exit(4)
	}
	fmt.Fprintf(c, "%d %s", os.Getpid(), q)
	in := bufio.NewScanner(c)
	for in.Scan() {
		switch cmd := in.Text(); {
		case cmd == "crash":
			fmt.Fprintln(os.Stderr, "fake dialog: Gtk-WARNING cannot open display")
			os.Exit(3)
		case strings.HasPrefix(cmd, "print "):
			fmt.Printf("{\"answer\":%q}\n", strings.TrimPrefix(cmd, "print "))
			fmt.Fprintln(c, "printed")
		case cmd == "wait":
		default:
			fmt.Printf("{\"answer\":%q}\n", cmd)
			os.Exit(0)
		}
	}
	os.Exit(0)
}

// shown is one fake dialog on screen, as the test sees it.
type shown struct {
	pid   int
	q     dialog.Question
	conn  net.Conn
	gone  chan struct{} // closed when the fake's connection ends (it exited)
	lines chan string   // what the fake says after its question
}

func (s *shown) send(t *testing.T, line string) {
	t.Helper()
	if _, err := fmt.Fprintln(s.conn, line); err != nil {
		t.Fatalf("tell the fake dialog %q: %v", line, err)
	}
}

type harness struct {
	t       *testing.T
	d       *Dialogs
	shown   chan *shown
	held    chan struct{}
	log     *syncBuffer
	mu      sync.Mutex
	onNow   int // fakes connected and not yet gone
	maxNow  int
	records []apitype.TimelineEntry
}

func newHarness(t *testing.T, path string) *harness {
	t.Helper()
	dir, err := os.MkdirTemp("", "dlg") // short: a Unix socket path is at most ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	h := &harness{t: t, shown: make(chan *shown, 16), held: make(chan struct{}, 16), log: &syncBuffer{}}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(c)
			var s shown
			line, err := r.ReadString('\n')
			pid, q, _ := strings.Cut(line, " ")
			if _, perr := fmt.Sscan(pid, &s.pid); err != nil || perr != nil || json.Unmarshal([]byte(q), &s.q) != nil {
				t.Errorf("fake dialog said %q (%v)", line, err)
				c.Close()
				continue
			}
			s.conn, s.gone, s.lines = c, make(chan struct{}), make(chan string, 4)
			h.mu.Lock()
			h.onNow++
			h.maxNow = max(h.maxNow, h.onNow)
			h.mu.Unlock()
			go func() { // the connection ends when the fake exits
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						break
					}
					s.lines <- line
				}
				h.mu.Lock()
				h.onNow--
				h.mu.Unlock()
				close(s.gone)
			}()
			h.shown <- &s
		}
	}()
	if path == "" {
		path = os.Args[0]
	}
	h.d = NewDialogs(DialogConfig{
		Path:   path,
		Args:   []string{"-test.run=^TestFakeDialog$"},
		Env:    append(os.Environ(), fakeSockEnv+"="+sock),
		OnHeld: func() { h.held <- struct{}{} },
		Record: func(_ context.Context, e apitype.TimelineEntry) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.records = append(h.records, e)
			return nil
		},
		Logger: slog.New(slog.NewTextHandler(h.log, nil)),
		Now:    func() time.Time { return time.UnixMilli(1_700_000_000_000) },
	})
	t.Cleanup(h.d.Close)
	return h
}

// next waits for the next fake dialog to show.
func (h *harness) next() *shown {
	h.t.Helper()
	select {
	case s := <-h.shown:
		return s
	case <-time.After(20 * time.Second):
		h.t.Fatal("no dialog was shown within 20 s")
		return nil
	}
}

type result struct {
	a   policy.Answer
	err error
}

func (h *harness) ask(ctx context.Context, id string) <-chan result {
	out := make(chan result, 1)
	go func() {
		a, err := h.d.Ask(ctx, request(id))
		out <- result{a, err}
	}()
	return out
}

func request(id string) policy.Request {
	now := time.Now()
	return policy.Request{ID: id, Tool: "browser_file_upload", Class: policy.Sensitive, Client: "claude-code",
		Profile: "work", Tab: 3, Sites: []string{"https://mail.example.com"}, Summary: "paths: /home/me/a.pdf",
		Since: now, Deadline: now.Add(2 * time.Minute)}
}

func wait[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: nothing within 20 s", what)
		var zero T
		return zero
	}
}

func TestDialogAnswerIsReturned(t *testing.T) {
	for _, answer := range []string{apitype.AllowOnce, apitype.AlwaysAllowSite, apitype.Deny} {
		t.Run(answer, func(t *testing.T) {
			h := newHarness(t, "")
			res := h.ask(t.Context(), "7")
			s := h.next()
			wait(t, h.held, "OnHeld")
			want := approval(request("7"))
			if s.q.ID != "7" || s.q.Tool != want.Tool || s.q.Client != "claude-code" || s.q.Profile != "work" || s.q.Tab != 3 ||
				len(s.q.Sites) != 1 || s.q.Summary != want.Summary || s.q.DeadlineMs == 0 {
				t.Errorf("the dialog got %+v, want %+v", s.q.Approval, want)
			}
			s.send(t, answer)
			if r := wait(t, res, "Ask"); r.err != nil || string(r.a) != answer {
				t.Errorf("Ask = %q, %v; want %q", r.a, r.err, answer)
			}
		})
	}
}

// One dialog at a time; a call decided while waiting for its turn gets
// none; the next waiting call shows once the first dialog is gone.
func TestOneDialogAtATime(t *testing.T) {
	h := newHarness(t, "")
	resA := h.ask(t.Context(), "A")
	a := h.next()
	ctxB, cancelB := context.WithCancel(t.Context())
	resB := h.ask(ctxB, "B")
	resC := h.ask(t.Context(), "C")
	wait(t, h.held, "OnHeld A")
	wait(t, h.held, "OnHeld B")
	wait(t, h.held, "OnHeld C") // B and C are queued behind A's dialog
	cancelB()
	if r := wait(t, resB, "Ask B"); !errors.Is(r.err, context.Canceled) {
		t.Errorf("Ask B = %q, %v; want context.Canceled", r.a, r.err)
	}
	a.send(t, apitype.Deny)
	if r := wait(t, resA, "Ask A"); r.a != policy.DenyOnce {
		t.Errorf("Ask A = %q, %v", r.a, r.err)
	}
	c := h.next()
	if c.q.ID != "C" {
		t.Fatalf("the second dialog is for %q, want C (B was decided while waiting)", c.q.ID)
	}
	c.send(t, apitype.AllowOnce)
	wait(t, resC, "Ask C")
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.maxNow != 1 {
		t.Errorf("%d dialogs were on screen at once, want 1", h.maxNow)
	}
}

// A call decided elsewhere kills its dialog at once: Ask returns only
// once the process is gone, and the next dialog may show.
func TestDialogKilledWhenDecided(t *testing.T) {
	h := newHarness(t, "")
	ctx, cancel := context.WithCancel(t.Context())
	res := h.ask(ctx, "1")
	s := h.next()
	s.send(t, "wait")
	cancel()
	if r := wait(t, res, "Ask"); !errors.Is(r.err, context.Canceled) {
		t.Errorf("Ask = %q, %v; want context.Canceled", r.a, r.err)
	}
	// Ask returns once the process is reaped: its pid is gone at once. (The
	// fake's socket closing reaches this test's reader a moment later.)
	if alive(s.pid) {
		t.Errorf("Ask returned while its dialog process %d still exists", s.pid)
	}
	wait(t, s.gone, "the fake's socket to close")
	if h.records != nil {
		t.Errorf("recorded %+v for a dialog that never answered", h.records)
	}
}

// An answer printed as the call is decided elsewhere changes nothing and
// is recorded as "ignored"; for a timeout, the row says so.
func TestLateAnswerIsRecorded(t *testing.T) {
	for _, timeout := range []bool{false, true} {
		t.Run(fmt.Sprint("timeout=", timeout), func(t *testing.T) {
			h := newHarness(t, "")
			ctx, cancel := context.WithCancelCause(t.Context())
			res := h.ask(ctx, "9")
			s := h.next()
			s.send(t, "print "+apitype.AllowOnce)
			if line := wait(t, s.lines, "the fake's output"); line != "printed\n" {
				t.Fatalf("fake dialog: %q", line)
			}
			cause := context.Canceled
			if timeout {
				cause = context.DeadlineExceeded
			}
			cancel(cause)
			if r := wait(t, res, "Ask"); r.err == nil || r.a != "" {
				t.Errorf("Ask = %q, %v; want no answer and ctx's error", r.a, r.err)
			}
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.records) != 1 {
				t.Fatalf("recorded %d rows, want 1", len(h.records))
			}
			e := h.records[0]
			if e.Outcome != "ignored" || e.CallID != "9" || e.Tool != "browser_file_upload" || e.Site != "https://mail.example.com" ||
				!strings.Contains(e.Decision, "allow_once") || !strings.Contains(e.Decision, "changed nothing") {
				t.Errorf("recorded %+v", e)
			}
			if got := strings.Contains(e.Decision, "timed out"); got != timeout {
				t.Errorf("decision %q: says timed out = %v, want %v", e.Decision, got, timeout)
			}
		})
	}
}

// A dialog that crashes (or cannot start) is logged and leaves the call
// to the queue: Ask waits for ctx, and the next call's dialog shows.
func TestDialogCrashLeavesCallToQueue(t *testing.T) {
	h := newHarness(t, "")
	ctx, cancel := context.WithCancel(t.Context())
	res := h.ask(ctx, "1")
	h.next().send(t, "crash")
	res2 := h.ask(t.Context(), "2")
	second := h.next() // the crashed dialog gave its turn back
	if second.q.ID != "2" {
		t.Fatalf("next dialog for %q", second.q.ID)
	}
	select {
	case r := <-res:
		t.Fatalf("Ask returned %q, %v after a crash; want it to wait for the queue", r.a, r.err)
	default:
	}
	cancel()
	if r := wait(t, res, "Ask"); !errors.Is(r.err, context.Canceled) {
		t.Errorf("Ask = %q, %v", r.a, r.err)
	}
	if log := h.log.String(); !strings.Contains(log, "approval dialog failed") || !strings.Contains(log, "cannot open display") {
		t.Errorf("log does not report the crash with its stderr:\n%s", log)
	}
	second.send(t, apitype.Deny)
	wait(t, res2, "Ask 2")

	bad := newHarness(t, filepath.Join(t.TempDir(), "no-such-dialog"))
	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if a, err := bad.d.Ask(ctx, request("3")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Ask with a missing dialog = %q, %v; want the timeout", a, err)
	}
	if log := bad.log.String(); !strings.Contains(log, "no-such-dialog") {
		t.Errorf("log does not name the missing dialog:\n%s", log)
	}
}

// Closed without an answer: the call waits for the queue.
func TestDialogClosedWaitsForQueue(t *testing.T) {
	h := newHarness(t, "")
	ctx, cancel := context.WithCancel(t.Context())
	res := h.ask(ctx, "1")
	s := h.next()
	s.send(t, dialog.Closed)
	wait(t, s.gone, "the dialog's exit")
	select {
	case r := <-res:
		t.Fatalf("Ask returned %q, %v after the dialog was closed; want it to wait", r.a, r.err)
	default:
	}
	cancel()
	if r := wait(t, res, "Ask"); !errors.Is(r.err, context.Canceled) {
		t.Errorf("Ask = %q, %v", r.a, r.err)
	}
}

// Close (daemon shutdown) kills the dialog on screen and refuses new ones.
func TestCloseKillsDialog(t *testing.T) {
	h := newHarness(t, "")
	res := h.ask(t.Context(), "1")
	s := h.next()
	s.send(t, "wait")
	h.d.Close()
	if r := wait(t, res, "Ask"); !errors.Is(r.err, ErrClosed) {
		t.Errorf("Ask = %q, %v; want ErrClosed", r.a, r.err)
	}
	if alive(s.pid) {
		t.Errorf("dialog process %d outlived Close", s.pid)
	}
	if _, err := h.d.Ask(t.Context(), request("2")); !errors.Is(err, ErrClosed) {
		t.Errorf("Ask after Close: %v, want ErrClosed", err)
	}
}

// syncBuffer is a log destination safe for the reapers' goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
