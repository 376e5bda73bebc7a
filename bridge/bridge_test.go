package bridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// harness runs a Bridge between pipes, against a real mcp-go streamable
// HTTP server.
type harness struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]any
	done  chan error
}

func start(t *testing.T, endpoint func(context.Context) (string, string, error)) *harness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harness{t: t, in: inW, lines: make(chan map[string]any, 64), done: make(chan error, 1)}
	b := New(Config{Endpoint: endpoint})
	go func() { h.done <- b.Run(context.Background(), inR, outW); outW.Close() }()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("bridge wrote a line that is not JSON: %q", sc.Text())
				continue
			}
			h.lines <- m
		}
		close(h.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return h
}

func (h *harness) send(msg string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, msg+"\n"); err != nil {
		h.t.Fatal(err)
	}
}

// next returns the next stdout message satisfying match.
func (h *harness) next(match func(map[string]any) bool) map[string]any {
	h.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case m, ok := <-h.lines:
			if !ok {
				h.t.Fatal("bridge output ended")
			}
			if match(m) {
				return m
			}
		case <-timeout:
			h.t.Fatal("no matching message from the bridge within 10s")
		}
	}
}

func byID(id float64) func(map[string]any) bool {
	return func(m map[string]any) bool { v, ok := m["id"].(float64); return ok && v == id }
}

func byMethod(method string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["method"] == method }
}

const initMsg = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

func newMCPServer(t *testing.T) (*server.MCPServer, string) {
	t.Helper()
	s := server.NewMCPServer("test", "1", server.WithToolCapabilities(true), server.WithLogging())
	s.AddTool(mcp.NewTool("chatty", mcp.WithDescription("sends a log message, then answers")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = s.SendNotificationToClient(ctx, "notifications/message", map[string]any{"level": "info", "data": "working"})
			return mcp.NewToolResultText("done"), nil
		})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return s, srv.URL + "/mcp"
}

func TestRelaysBothWays(t *testing.T) {
	s, url := newMCPServer(t)
	h := start(t, func(context.Context) (string, string, error) { return url, "tok", nil })
	h.send(initMsg)
	init := h.next(byID(1))
	if init["result"] == nil {
		t.Fatalf("initialize: %v", init)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chatty","arguments":{}}}`)
	// The notification sent during the call arrives, then the answer.
	h.next(byMethod("notifications/message"))
	res := h.next(byID(2))
	if !strings.Contains(toJSON(res), `"done"`) {
		t.Fatalf("tools/call: %v", res)
	}
	// A server-initiated notification outside any request arrives over the
	// GET stream. The stream opens asynchronously, so send until one arrives.
	got := make(chan struct{})
	go func() {
		for {
			select {
			case <-got:
				return
			case <-time.After(50 * time.Millisecond):
				s.SendNotificationToAllClients("notifications/tools/list_changed", nil)
			}
		}
	}()
	h.next(byMethod("notifications/tools/list_changed"))
	close(got)
	h.in.Close()
	if err := <-h.done; err != nil {
		t.Fatal(err)
	}
}

func TestMalformedLineGetsParseError(t *testing.T) {
	_, url := newMCPServer(t)
	h := start(t, func(context.Context) (string, string, error) { return url, "tok", nil })
	h.send(`{"jsonrpc":`)
	m := h.next(func(m map[string]any) bool { return m["error"] != nil })
	if e := m["error"].(map[string]any); e["code"].(float64) != -32700 {
		t.Fatalf("got %v, want parse error -32700", m)
	}
	// The bridge goes on working.
	h.send(initMsg)
	h.next(byID(1))
}

func TestUnreachableDaemonAnswersRequestsWithAnError(t *testing.T) {
	h := start(t, func(context.Context) (string, string, error) {
		return "", "", errors.New("the daemon did not answer within 8s")
	})
	h.send(initMsg)
	m := h.next(byID(1))
	e, _ := m["error"].(map[string]any)
	if e == nil || !strings.Contains(e["message"].(string), "did not answer") {
		t.Fatalf("got %v, want a JSON-RPC error naming the cause", m)
	}
}

func TestUnauthorizedIsExplained(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer srv.Close()
	h := start(t, func(context.Context) (string, string, error) { return srv.URL, "wrong", nil })
	h.send(initMsg)
	m := h.next(byID(1))
	if !strings.Contains(toJSON(m), "token") {
		t.Fatalf("got %v, want an error about the token", m)
	}
}

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
