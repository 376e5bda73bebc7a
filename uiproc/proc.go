package uiproc

import (
	"bytes"
	"errors"
	"strings"
	"sync"
)

// ErrClosed is returned by Window.Open and Dialogs.Ask once Close was
// called: the daemon is stopping and starts no window or dialog now (a
// held call is left to its timeout).
var ErrClosed = errors.New("Tether is stopping; it opens no window or dialog now")

// tail keeps the last max bytes written to it: a UI process's stderr, for
// the log when it crashes.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

// String returns what is kept, trimmed.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// lastLines returns up to n last lines, joined by " | " (one log value).
func (t *tail) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(string(bytes.TrimSpace(t.buf)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
