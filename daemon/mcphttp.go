package daemon

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Limits of the streamable HTTP MCP endpoint (issue 12, "Limits"): a hostile
// or broken client holding the MCP token must not grow the daemon without
// bound.
const (
	// MaxMCPBody is the largest /mcp request body, in bytes (4 MiB): tool
	// arguments are small (browser_file_upload takes paths, not contents).
	MaxMCPBody = 4 << 20
	// DefaultSessionIdle is how long an MCP session may go without a
	// request before it ends (1 hour). A session with a request or a
	// notification stream open is not idle.
	DefaultSessionIdle = time.Hour
	// DefaultMaxSessions is the most MCP sessions kept at once (1 000);
	// initializing one more ends the one idle longest (if none is idle,
	// the least recently active one).
	DefaultMaxSessions = 1000
)

// mcpSessions is the session id manager of the streamable HTTP server: it
// tracks every session from initialize to its end, which is DELETE, an idle
// time over idle, or eviction past max. An ended session's id is unknown:
// its requests get 404, on which clients initialize again (`tether mcp`
// does). This is what "a session ended" means for the rest of Tether.
type mcpSessions struct {
	mu   sync.Mutex
	idle time.Duration
	max  int
	now  func() time.Time
	live map[string]*mcpSession
	// end drops the MCP server's state of a session this manager ended
	// (set once the streamable server exists).
	end func(id string)
	// ended is told of every session that ended, whichever way (set
	// before the server serves; nil: nobody).
	ended func(id string)
	log   *slog.Logger
}

type mcpSession struct {
	last time.Time // last request start or end
	busy int       // requests and streams open
}

var _ server.SessionIdManager = (*mcpSessions)(nil)

func newMCPSessions(idle time.Duration, max int, log *slog.Logger) *mcpSessions {
	if idle <= 0 {
		idle = DefaultSessionIdle
	}
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &mcpSessions{idle: idle, max: max, now: time.Now, live: map[string]*mcpSession{}, end: func(string) {}, log: log}
}

// errUnknownSession: the id names no live session.
var errUnknownSession = errors.New("unknown or expired MCP session")

// Generate starts a session (initialize), ending the expired ones and, at
// max, the one idle longest.
func (m *mcpSessions) Generate() string {
	raw := make([]byte, 16)
	_, _ = rand.Read(raw)
	id := "mcp-session-" + hex.EncodeToString(raw)
	m.mu.Lock()
	now := m.now()
	ended := m.expireLocked(now)
	for len(m.live) >= m.max {
		victim := m.oldestLocked()
		delete(m.live, victim)
		ended = append(ended, victim)
		m.log.Warn("MCP session ended: too many sessions; the one idle longest goes", "max", m.max)
	}
	m.live[id] = &mcpSession{last: now}
	end := m.end
	m.mu.Unlock()
	for _, e := range ended {
		end(e)
	}
	return id
}

// Validate reports errUnknownSession for an id that names no live session
// (never issued, ended, or idle too long), and marks the session active.
func (m *mcpSessions) Validate(id string) (bool, error) {
	m.mu.Lock()
	s, ok := m.live[id]
	now := m.now()
	expired := ok && s.busy == 0 && now.Sub(s.last) > m.idle
	if expired {
		delete(m.live, id)
	}
	if ok && !expired {
		s.last = now
	}
	end := m.end
	m.mu.Unlock()
	if expired {
		end(id)
	}
	if !ok || expired {
		return false, errUnknownSession
	}
	return false, nil
}

// Terminate ends a session (DELETE). The other ways a session ends (idle
// expiry, eviction) come here too, through end's DELETE.
func (m *mcpSessions) Terminate(id string) (bool, error) {
	m.mu.Lock()
	delete(m.live, id)
	m.mu.Unlock()
	if m.ended != nil {
		m.ended(id)
	}
	return false, nil
}

// begin marks a request or stream of session id open; it reports false
// when id names no live session. finish must follow a true begin.
func (m *mcpSessions) begin(id string) bool {
	if _, err := m.Validate(id); err != nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.live[id]; ok {
		s.busy++
		return true
	}
	return false
}

func (m *mcpSessions) finish(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s, ok := m.live[id]; ok {
		s.busy--
		s.last = m.now()
	}
}

// isLive reports whether id names a session not yet ended.
func (m *mcpSessions) isLive(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.live[id]
	return ok
}

// count is the number of live sessions.
func (m *mcpSessions) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.live)
}

// expireLocked removes the sessions idle longer than idle and returns them.
func (m *mcpSessions) expireLocked(now time.Time) []string {
	var out []string
	for id, s := range m.live {
		if s.busy == 0 && now.Sub(s.last) > m.idle {
			delete(m.live, id)
			out = append(out, id)
		}
	}
	return out
}

// oldestLocked is the session idle longest, else (all busy) the least
// recently active.
func (m *mcpSessions) oldestLocked() string {
	best, bestBusy := "", false
	var bestLast time.Time
	for id, s := range m.live {
		busy := s.busy > 0
		if best == "" || bestBusy && !busy || busy == bestBusy && s.last.Before(bestLast) {
			best, bestBusy, bestLast = id, busy, s.last
		}
	}
	return best
}

// sweep ends idle sessions every interval until ctx ends, and calls
// also (when not nil) each time: the broker's sessions that no MCP
// session's end ends expire on the same beat (broker.EndIdleSessions).
func (m *mcpSessions) sweep(ctx context.Context, interval time.Duration, also func(idle time.Duration)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.mu.Lock()
			ended := m.expireLocked(m.now())
			end := m.end
			m.mu.Unlock()
			for _, id := range ended {
				end(id)
			}
			if len(ended) > 0 {
				m.log.Info("MCP sessions ended after an hour idle", "sessions", len(ended))
			}
			if also != nil {
				also(m.idle)
			}
		}
	}
}

// endVia returns the end function for m: a DELETE of the session sent to
// the streamable server itself, which drops its per-session state the way
// a client's DELETE does (mcp-go has no other public way).
func endVia(h http.Handler) func(id string) {
	return func(id string) {
		r, err := http.NewRequest(http.MethodDelete, PathMCP, nil)
		if err != nil {
			return
		}
		r.Header.Set(server.HeaderKeySessionID, id)
		h.ServeHTTP(&discardResponse{h: http.Header{}}, r)
	}
}

// discardResponse is a ResponseWriter that keeps nothing.
type discardResponse struct{ h http.Header }

func (d *discardResponse) Header() http.Header         { return d.h }
func (d *discardResponse) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardResponse) WriteHeader(int)             {}

// mcpLimits wraps the streamable HTTP server (behind apiGuard): bodies over
// MaxMCPBody get 413 with a JSON-RPC error; GET without a session id gets
// 400 and with an unknown one 404, at once (mcp-go would open an event
// stream that never carries anything); requests of a live session mark it
// busy while they run.
func mcpLimits(sessions *mcpSessions, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		modern := mcpgo.IsModernProtocol(r.Header.Get(mcpgo.HeaderProtocolVersion))
		id := r.Header.Get(server.HeaderKeySessionID)
		switch r.Method {
		case http.MethodPost:
			if r.ContentLength > MaxMCPBody {
				head, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
				tooLarge(w, head)
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, MaxMCPBody+1))
			if err != nil {
				writeRPCError(w, http.StatusBadRequest, nil, mcpgo.PARSE_ERROR, "could not read the request body: "+err.Error())
				return
			}
			if len(body) > MaxMCPBody {
				tooLarge(w, body)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		case http.MethodGet:
			if modern {
				break // mcp-go refuses it: no GET stream since 2026-07-28
			}
			if id == "" {
				http.Error(w, "bad request: GET /mcp opens a session's notification stream; send the "+server.HeaderKeySessionID+" header that initialize returned", http.StatusBadRequest)
				return
			}
			if !sessions.begin(id) {
				http.Error(w, "not found: unknown or expired MCP session; send initialize again", http.StatusNotFound)
				return
			}
			defer sessions.finish(id)
			next.ServeHTTP(w, r)
			return
		}
		if id != "" && !modern && r.Method == http.MethodPost && sessions.begin(id) {
			defer sessions.finish(id)
		}
		next.ServeHTTP(w, r)
	})
}

// tooLarge answers a body over MaxMCPBody with 413 and a JSON-RPC error
// carrying the request's id when head (the body's start) shows it, so that
// the client matches the error to its call.
func tooLarge(w http.ResponseWriter, head []byte) {
	writeRPCError(w, http.StatusRequestEntityTooLarge, requestID(head), mcpgo.INVALID_REQUEST,
		fmt.Sprintf("request body over %d MiB, the limit of Tether's /mcp endpoint: send smaller arguments (browser_file_upload takes file paths, not contents)", MaxMCPBody>>20))
}

// requestID finds the top-level "id" of a JSON-RPC message from the start
// of its body; nil when it is not there (or comes after a value cut off).
func requestID(head []byte) any {
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		if key == "id" {
			switch v.(type) {
			case string, json.Number:
				return v
			}
			return nil
		}
	}
	return nil
}

// writeRPCError answers with a JSON-RPC error for the request id (nil:
// unknown).
func writeRPCError(w http.ResponseWriter, status int, id any, code int, msg string) {
	writeJSON(w, status, mcpgo.NewJSONRPCError(mcpgo.NewRequestId(id), code, msg, nil))
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
