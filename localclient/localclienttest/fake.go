// Package localclienttest is the one fake of the daemon's local API, for
// the tests of the tray, the window and the CLI: an HTTP server on
// 127.0.0.1 that serves apitype's routes from an in-memory State, records
// every request that changes something, and sends the events a test emits
// on a real SSE stream. The real localclient.Client and Model talk to it
// through a temporary config dir (daemon record and control token).
package localclienttest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/protocol"
)

// Token is the fake's control token.
const Token = "fake-control-token"

// Request is one request the fake received that was not a read.
type Request struct {
	Method, Path string
	// Body is the request's JSON body ("" when none).
	Body string
}

// Fake is a fake daemon. Its methods are safe for concurrent use.
type Fake struct {
	// Paths is a config dir naming the fake as the running daemon.
	Paths config.Paths
	srv   *httptest.Server

	mu       sync.Mutex
	state    apitype.State
	seq      uint64
	subs     map[chan apitype.Event]struct{}
	requests []Request
	// answers are the JSON bodies of routes other than state and events,
	// by "METHOD path" (SetAnswer); missing ones answer 204.
	answers map[string]answer
	changed chan struct{}
	// key is the config dir's pairing key; port the fake's.
	key  []byte
	port int
}

type answer struct {
	status int
	body   any
}

// New starts a fake daemon with an empty connected state, stopped at the
// end of the test.
func New(t testing.TB) *Fake {
	t.Helper()
	f := &Fake{
		Paths:   config.Paths{Dir: t.TempDir()},
		state:   apitype.State{Version: "fake", Profiles: []apitype.ProfileView{}, Pairing: []apitype.PairingView{}, Approvals: []apitype.Approval{}, Running: []apitype.RunningCall{}, Window: true},
		subs:    map[chan apitype.Event]struct{}{},
		answers: map[string]answer{},
		changed: make(chan struct{}),
	}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	_, port, _ := net.SplitHostPort(f.srv.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	if err := f.Paths.WriteDaemonRecord(config.DaemonRecord{PID: os.Getpid(), Port: p, Version: "fake", UI: true}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.Paths.ControlToken(), []byte(Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hexKey, err := f.Paths.LoadOrCreatePairingKey()
	if err != nil {
		t.Fatal(err)
	}
	f.key, _ = protocol.ParseKey(hexKey)
	f.port = p
	return f
}

// Close stops the server and ends every event stream.
func (f *Fake) Close() {
	f.mu.Lock()
	for c := range f.subs {
		close(c)
		delete(f.subs, c)
	}
	f.mu.Unlock()
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// Client returns a real client of the fake.
func (f *Fake) Client() *localclient.Client { return localclient.New(f.Paths) }

// State returns the fake's state.
func (f *Fake) State() apitype.State {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}

// SetState changes the state with edit and sends it as a KindState event.
func (f *Fake) SetState(edit func(*apitype.State)) {
	f.mu.Lock()
	edit(&f.state)
	s := f.state
	f.mu.Unlock()
	f.Emit(apitype.Event{Kind: apitype.KindState, State: &s})
}

// Emit sends ev (with the next Seq) to every open event stream.
func (f *Fake) Emit(ev apitype.Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	ev.Seq = f.seq
	for c := range f.subs {
		c <- ev // the buffer is large; a test that fills it has a bug
	}
}

// Call emits one call's phase.
func (f *Fake) Call(id, phase string, e apitype.TimelineEntry) {
	e.CallID = id
	f.Emit(apitype.Event{Kind: apitype.KindCall, Call: &apitype.CallEvent{ID: id, Phase: phase, Entry: e}})
}

// SetAnswer makes "METHOD path" answer status with body as JSON.
func (f *Fake) SetAnswer(method, path string, status int, body any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[method+" "+path] = answer{status, body}
}

// Requests returns the requests received so far that were not reads.
func (f *Fake) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.requests...)
}

// Changed is closed at the next request recorded.
func (f *Fake) Changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changed
}

func (f *Fake) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.URL.Path == apitype.PathHealth {
		// As the daemon: the proof that it is the config dir's (localclient.Probe).
		h := apitype.Health{Name: "tether", Version: "fake"}
		if nonce := r.URL.Query().Get(apitype.HealthNonce); protocol.ValidNonce(nonce) {
			h.Proof = protocol.HealthProof(f.key, protocol.LocalEndpoint(f.port), nonce)
		}
		writeJSON(w, http.StatusOK, h)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+Token {
		writeJSON(w, http.StatusUnauthorized, apitype.Error{Error: "wrong control token"})
		return
	}
	switch r.Method + " " + r.URL.Path {
	case "GET " + apitype.PathState:
		writeJSON(w, http.StatusOK, f.State())
		return
	case "GET " + apitype.PathEvents:
		f.events(w, r)
		return
	case "GET " + apitype.PathPause:
		writeJSON(w, http.StatusOK, apitype.Pause{Paused: f.State().Paused})
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	f.mu.Lock()
	a, ok := f.answers[r.Method+" "+r.URL.Path]
	if r.Method != http.MethodGet {
		f.requests = append(f.requests, Request{r.Method, r.URL.Path, string(body)})
		close(f.changed)
		f.changed = make(chan struct{})
	}
	f.mu.Unlock()
	if r.Method+" "+r.URL.Path == "POST "+apitype.PathPause && !ok {
		var p apitype.Pause
		_ = json.Unmarshal(body, &p)
		f.SetState(func(s *apitype.State) { s.Paused = p.Paused })
		writeJSON(w, http.StatusOK, p)
		return
	}
	if !ok {
		if r.Method == http.MethodGet {
			writeJSON(w, http.StatusNotFound, apitype.Error{Error: "the fake has no answer for GET " + r.URL.Path})
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, a.status, a.body)
}

func (f *Fake) events(w http.ResponseWriter, r *http.Request) {
	c := make(chan apitype.Event, 4096)
	f.mu.Lock()
	f.subs[c] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		if _, ok := f.subs[c]; ok {
			delete(f.subs, c)
		}
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fmt.Fprint(w, ": ok\n\n")
	fl.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case ev, ok := <-c:
			if !ok {
				return
			}
			b, _ := json.Marshal(ev)
			fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Kind, b)
			fl.Flush()
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
