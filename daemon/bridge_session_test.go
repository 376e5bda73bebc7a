package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tether-browser/tether/bridge"
)

// bridgeRig runs `tether mcp`'s bridge against a daemon over pipes.
type bridgeRig struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]any
	done  chan error
	log   *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	sb strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sb.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sb.String()
}

func runBridge(t *testing.T, addr, tok string) *bridgeRig {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &bridgeRig{t: t, in: inW, lines: make(chan map[string]any, 16), done: make(chan error, 1), log: &lockedBuffer{}}
	b := bridge.New(bridge.Config{
		Logger: slog.New(slog.NewTextHandler(r.log, nil)),
		Endpoint: func(context.Context) (string, string, error) {
			return "http://" + addr + PathMCP, tok, nil
		}})
	go func() { r.done <- b.Run(context.Background(), inR, outW); outW.Close() }()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			_ = json.Unmarshal(sc.Bytes(), &m)
			r.lines <- m
		}
		close(r.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return r
}

func (r *bridgeRig) send(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, s+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

func (r *bridgeRig) answer(id float64) map[string]any {
	r.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-r.lines:
			if !ok {
				r.t.Fatal("bridge output ended")
			}
			if v, _ := m["id"].(float64); v == id {
				return m
			}
		case <-timeout:
			r.t.Fatalf("no answer to %v", id)
		}
	}
}

// When the bridge's session ends (here: evicted past the cap) its next call
// gets 404, and the bridge initializes again and answers.
func TestBridgeInitializesAgainWhenItsSessionEnds(t *testing.T) {
	p, addr := startDaemonWith(t, func(c *Config) { c.MaxMCPSessions = 1 })
	tok, err := p.ReadToken()
	if err != nil {
		t.Fatal(err)
	}
	b := runBridge(t, addr, tok)
	b.send(initBody)
	b.answer(1)
	b.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code, _, _ := rawMCP(t, addr, tok, "POST", "", initBody); code != http.StatusOK { // ends the bridge's session
		t.Fatalf("initialize: %d", code)
	}
	b.send(listBody)
	if m := b.answer(2); m["result"] == nil {
		t.Fatalf("tools/list after the session ended: %v", m)
	}
	if !strings.Contains(b.log.String(), "reconnected to the daemon with a new session") {
		t.Fatalf("the bridge did not initialize again:\n%s", b.log.String())
	}
}

// When the bridge exits it sends DELETE, which ends its session.
func TestBridgeEndsItsSessionOnExit(t *testing.T) {
	p, addr := startDaemonWith(t, func(c *Config) { c.MaxMCPSessions = 2 })
	tok, err := p.ReadToken()
	if err != nil {
		t.Fatal(err)
	}
	_, older, _ := rawMCP(t, addr, tok, "POST", "", initBody)
	b := runBridge(t, addr, tok)
	b.send(initBody)
	b.answer(1)
	b.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b.send(listBody)
	b.answer(2)
	b.in.Close()
	if err := <-b.done; err != nil {
		t.Fatal(err)
	}
	// Had the bridge's session stayed, one more would end `older`, idle
	// longest; with it ended there is room.
	rawMCP(t, addr, tok, "POST", "", initBody)
	if code, _, body := rawMCP(t, addr, tok, "POST", older, listBody); code != http.StatusOK {
		t.Fatalf("the older session after the bridge exited: %d %q; the bridge's DELETE did not end its session", code, strings.TrimSpace(body))
	}
}
