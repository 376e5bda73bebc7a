package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/tether-browser/tether/protocol"
)

// flaky is an MCP server with a tool "act" (it acts: readOnlyHint false)
// and a tool "look" (readOnlyHint true). Each tools/call it receives is
// recorded; fault decides, per call (1-based), whether the connection
// breaks off after the daemon read it (as a killed daemon's does: the
// handler ran, no answer) or is answered 503 before handling (a draining
// daemon), or is handled.
type flaky struct {
	url    string
	mu     sync.Mutex
	bodies []string
	ran    atomic.Int32 // tool handler runs
	fault  func(n int) string
}

func newFlaky(t *testing.T, fault func(n int) string) *flaky {
	t.Helper()
	f := &flaky{fault: fault}
	s := server.NewMCPServer("test", "1", server.WithToolCapabilities(true))
	handler := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f.ran.Add(1)
		return mcp.NewToolResultText("done " + req.Params.Name), nil
	}
	s.AddTool(mcp.NewTool("act", mcp.WithReadOnlyHintAnnotation(false)), handler)
	s.AddTool(mcp.NewTool("look", mcp.WithReadOnlyHintAnnotation(true)), handler)
	h := server.NewStreamableHTTPServer(s)
	srv, _ := newDaemon(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if strings.Contains(string(body), `"tools/call"`) {
			f.mu.Lock()
			f.bodies = append(f.bodies, string(body))
			n := len(f.bodies)
			f.mu.Unlock()
			switch f.fault(n) {
			case "drain":
				http.Error(w, "restarting", http.StatusServiceUnavailable)
				return
			case "404":
				// What the daemon answers a request built while another
				// set up a new session: no session id yet, or a gone one.
				http.Error(w, "Invalid session ID", http.StatusNotFound)
				return
			case "kill":
				f.ran.Add(1) // the daemon acted, then died before answering
				panic(http.ErrAbortHandler)
			}
		}
		h.ServeHTTP(w, r)
	}))
	f.url = srv.URL + "/mcp"
	return f
}

// keys are the idempotency keys of the tools/calls received, in order.
func (f *flaky) keys(t *testing.T) []string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, b := range f.bodies {
		var m struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(b), &m); err != nil {
			t.Fatal(err)
		}
		k, _ := m.Params.Meta[protocol.MetaIdempotencyKey].(string)
		out = append(out, k)
	}
	return out
}

func (f *flaky) session(t *testing.T, listTools bool) *harness {
	t.Helper()
	h := start(t, func(context.Context) (string, string, error) { return f.url, "tok", nil })
	h.send(initMsg)
	h.next(byID(1))
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if listTools {
		h.send(`{"jsonrpc":"2.0","id":100,"method":"tools/list"}`)
		h.next(byID(100))
	}
	return h
}

func toolResult(t *testing.T, m map[string]any) (string, bool) {
	t.Helper()
	r, ok := m["result"].(map[string]any)
	if !ok {
		t.Fatalf("no result: %v", m)
	}
	isErr, _ := r["isError"].(bool)
	var sb strings.Builder
	for _, c := range r["content"].([]any) {
		sb.WriteString(c.(map[string]any)["text"].(string))
	}
	return sb.String(), isErr
}

// A call that acts and was cut off after reaching the daemon is not sent
// again: the client is told the outcome is unknown.
func TestInterruptedActionIsNotResent(t *testing.T) {
	f := newFlaky(t, func(n int) string { return "kill" })
	h := f.session(t, true)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"act","arguments":{}}}`)
	text, isErr := toolResult(t, h.next(byID(2)))
	if !isErr || !strings.Contains(text, OutcomeUnknown) {
		t.Fatalf("got %q (error %v), want a tool error saying %q", text, isErr, OutcomeUnknown)
	}
	if n := f.ran.Load(); n != 1 {
		t.Fatalf("the action ran %d times, want 1", n)
	}
	if k := f.keys(t); len(k) != 1 || !protocol.ValidIdempotencyKey(k[0]) {
		t.Fatalf("idempotency keys sent %q, want one valid key", k)
	}
}

// A tool the daemon did not list is treated as one that acts.
func TestInterruptedUnknownToolIsNotResent(t *testing.T) {
	f := newFlaky(t, func(n int) string { return "kill" })
	h := f.session(t, false)
	<-h.b.toolsLearned
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"unlisted","arguments":{}}}`)
	if text, isErr := toolResult(t, h.next(byID(2))); !isErr || !strings.Contains(text, OutcomeUnknown) {
		t.Fatalf("got %q, want outcome unknown", text)
	}
	if n := f.ran.Load(); n != 1 {
		t.Fatalf("ran %d times, want 1", n)
	}
}

// A client that never lists the tools: the bridge lists them itself after
// the handshake, so a read cut off is still sent again.
func TestReadResentWithoutClientListing(t *testing.T) {
	f := newFlaky(t, func(n int) string {
		if n == 1 {
			return "kill"
		}
		return ""
	})
	h := f.session(t, false)
	<-h.b.toolsLearned
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"look","arguments":{}}}`)
	if text, isErr := toolResult(t, h.next(byID(2))); isErr || text != "done look" {
		t.Fatalf("got %q (error %v), want the read's result", text, isErr)
	}
}

// A read-only tool cut off is sent again once, with a new key, and its
// true result reaches the client.
func TestInterruptedReadIsResent(t *testing.T) {
	f := newFlaky(t, func(n int) string {
		if n == 1 {
			return "kill"
		}
		return ""
	})
	h := f.session(t, true)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"look","arguments":{}}}`)
	if text, isErr := toolResult(t, h.next(byID(2))); isErr || text != "done look" {
		t.Fatalf("got %q (error %v), want the read's result", text, isErr)
	}
	if k := f.keys(t); len(k) != 2 || k[0] == k[1] {
		t.Fatalf("keys %q: want two attempts with different keys", k)
	}
}

// A draining daemon (503) has not handled the call: it is sent again until
// the daemon takes it, and runs once.
func TestDrainingDaemonGetsTheCallLater(t *testing.T) {
	f := newFlaky(t, func(n int) string {
		if n <= 3 {
			return "drain"
		}
		return ""
	})
	h := f.session(t, true)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"act","arguments":{}}}`)
	if text, isErr := toolResult(t, h.next(byID(2))); isErr || text != "done act" {
		t.Fatalf("got %q (error %v), want the action's result", text, isErr)
	}
	if n := f.ran.Load(); n != 1 {
		t.Fatalf("ran %d times, want 1", n)
	}
	k := f.keys(t)
	if len(k) != 4 || k[0] != k[3] {
		t.Fatalf("keys %q: want 4 attempts, all with the same key", k)
	}
}

// The client's own idempotency key is kept.
func TestClientIdempotencyKeyIsKept(t *testing.T) {
	f := newFlaky(t, func(n int) string { return "" })
	h := f.session(t, true)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"act","arguments":{},"_meta":{"tether/idempotencyKey":"mine-1","progressToken":7}}}`)
	h.next(byID(2))
	if k := f.keys(t); len(k) != 1 || k[0] != "mine-1" {
		t.Fatalf("keys %q, want the client's", k)
	}
	if !strings.Contains(f.bodies[0], `"progressToken":7`) {
		t.Fatalf("the rest of _meta was lost: %s", f.bodies[0])
	}
}

func TestNeverSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader("{}"))
	if err == nil || !neverSent(err) {
		t.Fatalf("refused connection: neverSent(%v) false", err)
	}
	for _, e := range []error{io.EOF, io.ErrUnexpectedEOF, errors.New("connection reset by peer")} {
		if neverSent(e) {
			t.Fatalf("neverSent(%v) true", e)
		}
	}
}

// A handshake replay that is cut off says nothing about the call, which was
// not sent again: once the daemon answers, the call goes through, once.
func TestInterruptedHandshakeReplayIsNotTheCall(t *testing.T) {
	var ran atomic.Int32
	var mu sync.Mutex
	var handler http.Handler
	restart := func() {
		s := server.NewMCPServer("test", "1", server.WithToolCapabilities(true))
		s.AddTool(mcp.NewTool("act", mcp.WithReadOnlyHintAnnotation(false)), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ran.Add(1)
			return mcp.NewToolResultText("done act"), nil
		})
		mu.Lock()
		handler = server.NewStreamableHTTPServer(s)
		mu.Unlock()
	}
	restart()
	var inits atomic.Int32
	var forgotten sync.Map // session ids the "restarted daemon" answers 404
	var sessions sync.Map
	srv, _ := newDaemon(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if strings.Contains(string(body), `"initialize"`) && inits.Add(1) == 2 {
			panic(http.ErrAbortHandler) // the first replay is cut off
		}
		if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
			sessions.Store(sid, true)
			if _, ok := forgotten.Load(sid); ok {
				http.Error(w, "unknown session", http.StatusNotFound)
				return
			}
		}
		mu.Lock()
		h := handler
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	h := start(t, func(context.Context) (string, string, error) { return srv.URL + "/mcp", "tok", nil })
	h.send(initMsg)
	h.next(byID(1))
	// No notifications/initialized: no notification stream, whose own
	// reconnect could take the cut-off replay instead of the call's.
	h.send(`{"jsonrpc":"2.0","id":100,"method":"tools/list"}`)
	h.next(byID(100))
	restart()
	sessions.Range(func(k, _ any) bool { forgotten.Store(k, true); return true }) // the call gets 404: not handled
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"act","arguments":{}}}`)
	if text, isErr := toolResult(t, h.next(byID(2))); isErr || text != "done act" {
		t.Fatalf("got %q (error %v), want the action's result", text, isErr)
	}
	if n := ran.Load(); n != 1 {
		t.Fatalf("ran %d times, want 1", n)
	}
}

// A 404 means the daemon did not handle the call (it did not know the
// session the request named): it is sent again on a new session, even an
// action, and runs once. (post treats a 404 the same when the request named
// no session, as one built while a reconnect had cleared it does:
// TestTwoProfiles once got "daemon answered 404" there.)
func TestSessionNotFoundIsSentAgain(t *testing.T) {
	f := newFlaky(t, func(n int) string {
		if n == 1 {
			return "404"
		}
		return ""
	})
	h := f.session(t, true)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"act","arguments":{}}}`)
	if text, isErr := toolResult(t, h.next(byID(2))); isErr || text != "done act" {
		t.Fatalf("got %q (error %v), want the action's result", text, isErr)
	}
	if n := f.ran.Load(); n != 1 {
		t.Fatalf("the action ran %d times, want 1", n)
	}
}
