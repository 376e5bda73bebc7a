// Package localapi serves the daemon's local API (package apitype): the
// routes the CLI, the tray and the window use to read and change the
// daemon's state, and the event stream (GET /api/events) that tells them
// what changed. It owns the conversion of the daemon's parts (broker,
// policy guard, timeline, MCP clients, extension) into apitype's bodies.
//
// Every route sits behind one check (check.go): loopback Host, no Origin,
// the control token. Routes are listed once, in Server.Routes.
package localapi

import (
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/mcptoken"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/timeline"
)

// Clients edits MCP clients' config files (clients.Host).
type Clients interface {
	List() []clients.Status
	Connect(id string, o clients.Options) (clients.Outcome, error)
	Disconnect(id string) (clients.Outcome, error)
}

// Window opens the desktop window: starts its process, or tells the running
// one to show itself.
type Window interface {
	Open() error
}

// Config is what a Server serves. Broker, Guard, Timeline and ControlToken
// are required.
type Config struct {
	// Broker is the registry of browser profiles and their shared tabs.
	Broker *broker.Broker
	// Guard is the pause switch, the policy and the approval queue.
	Guard *policy.Guard
	// Timeline is the record of tool calls, its live events and the calls
	// running now.
	Timeline *timeline.Store
	// Clients edits MCP clients' configs (nil: the clients routes answer
	// 409); Connect writes ConnectOptions.
	Clients        Clients
	ConnectOptions clients.Options
	// Extension is the built extension (extension.Dist(); nil in a build
	// without it); ExtensionDir is where POST /api/extension/write puts it,
	// with a tether.json naming Port, the daemon's port on 127.0.0.1.
	// ExtensionID is its id in Chrome.
	Extension    fs.FS
	ExtensionDir string
	// PairingKey is the daemon's pairing key (64 hex digits), written into
	// the folder's tether.json (launcher.ExtensionConfig.PairingKey).
	PairingKey  string
	ExtensionID string
	Port        int
	// Executable starts the test browser as `Executable browser`, with
	// BrowserEnv added to the daemon's environment ("" : POST /api/browser
	// answers 409).
	Executable string
	BrowserEnv []string
	// Window opens the window; nil under `tether serve` (POST
	// /api/window/open answers 409, State.Window is false).
	Window Window
	// NoWindow says why Window is nil, in the 409's message (e.g. "no
	// display ..."); "" means `tether serve`, which has none.
	NoWindow string
	// Tokens are the named MCP tokens (the tokens routes answer 409 when
	// nil).
	Tokens *mcptoken.Store
	// Shutdown stops the daemon (POST /api/shutdown); it must not block.
	Shutdown func()
	// ControlToken is the token every route takes; MCPToken, the MCP
	// endpoint's, is refused with 403.
	ControlToken string
	MCPToken     string
	// Version is the daemon's version (State.Version).
	Version string
	// Logger receives refused requests and the outcome of every action.
	Logger *slog.Logger
	// PingInterval is how often the event stream sends ": ping"
	// (apitype.PingInterval when 0).
	PingInterval time.Duration
	// EventBuffer is how many events wait for one slow subscriber before
	// its events are dropped (256 when 0).
	EventBuffer int
	// Now is the clock (time.Now).
	Now func() time.Time
}

// Route is one route of the local API.
type Route struct {
	// Method is GET or POST; Path is one of apitype's Path constants.
	Method  string
	Path    string
	Handler http.HandlerFunc
}

// Server is the local API: an http.Handler for every apitype route, behind
// the control-token check. Mount it at apitype.PathPrefix.
type Server struct {
	cfg    Config
	log    *slog.Logger
	hub    *hub
	routes []Route
	byPath map[string]map[string]http.HandlerFunc

	stop      context.CancelFunc
	ctx       context.Context
	closeOnce sync.Once
	wg        sync.WaitGroup

	// stopping is set once the daemon stops (State.Stopping).
	stopping atomic.Bool
}

// New returns a Server for cfg and starts forwarding the daemon's changes
// to the event stream; Close stops it.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = apitype.PingInterval
	}
	if cfg.EventBuffer <= 0 {
		cfg.EventBuffer = 256
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, log: cfg.Logger, hub: newHub(ringSize, cfg.EventBuffer, cfg.Now()), ctx: ctx, stop: stop}
	s.routes = []Route{
		{http.MethodGet, apitype.PathState, s.getState},
		{http.MethodGet, apitype.PathEvents, s.getEvents},
		{http.MethodGet, apitype.PathProfiles, s.getProfiles},
		{http.MethodPost, apitype.PathProfileApprove, s.approveProfile},
		{http.MethodPost, apitype.PathProfileDeny, s.denyProfile},
		{http.MethodPost, apitype.PathProfileForget, s.forgetProfile},
		{http.MethodPost, apitype.PathTabOwner, s.setTabOwner},
		{http.MethodGet, apitype.PathTokens, s.getTokens},
		{http.MethodPost, apitype.PathTokenAdd, s.addToken},
		{http.MethodPost, apitype.PathTokenRevoke, s.revokeToken},
		{http.MethodGet, apitype.PathPause, s.getPause},
		{http.MethodPost, apitype.PathPause, s.setPause},
		{http.MethodGet, apitype.PathApprovals, s.getApprovals},
		{http.MethodPost, apitype.PathApprovalAnswer, s.answerApproval},
		{http.MethodGet, apitype.PathTimeline, s.getTimeline},
		{http.MethodGet, apitype.PathTimelineFacets, s.getTimelineFacets},
		{http.MethodGet, apitype.PathTimelineExport, s.exportTimeline},
		{http.MethodGet, apitype.PathClients, s.getClients},
		{http.MethodPost, apitype.PathClientConnect, s.connectClient},
		{http.MethodPost, apitype.PathClientDisconnect, s.disconnectClient},
		{http.MethodGet, apitype.PathExtension, s.getExtension},
		{http.MethodPost, apitype.PathExtensionWrite, s.writeExtension},
		{http.MethodPost, apitype.PathExtensionReveal, s.revealExtension},
		{http.MethodPost, apitype.PathTestBrowser, s.openTestBrowser},
		{http.MethodPost, apitype.PathWindowOpen, s.openWindow},
		{http.MethodPost, apitype.PathWindowPainted, s.windowPainted},
		{http.MethodPost, apitype.PathShutdown, s.shutdown},
	}
	s.byPath = map[string]map[string]http.HandlerFunc{}
	for _, r := range s.routes {
		if s.byPath[r.Path] == nil {
			s.byPath[r.Path] = map[string]http.HandlerFunc{}
		}
		s.byPath[r.Path][r.Method] = r.Handler
	}
	// Subscribed here, not in the goroutines: a change or a call between
	// New and their first run is not missed.
	s.wg.Add(2)
	go s.forwardState(s.cfg.Broker.Changed(), s.cfg.Guard.Changed())
	go s.forwardCalls(s.cfg.Timeline.Subscribe(ringSize))
	return s
}

// Routes lists every route the Server serves.
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

// ServeHTTP checks the request (check.go), then routes it: an unknown path
// gets 404, a known path with another method 405.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.check(w, r) {
		return
	}
	methods, ok := s.byPath[r.URL.Path]
	if !ok {
		writeError(w, http.StatusNotFound, "no such route "+r.URL.Path+" in the local API (see package apitype)")
		return
	}
	h, ok := methods[r.Method]
	if !ok {
		for m := range methods {
			w.Header().Add("Allow", m)
		}
		writeError(w, http.StatusMethodNotAllowed, r.Method+" is not served on "+r.URL.Path)
		return
	}
	h(w, r)
}

// Close ends the event streams and stops forwarding the daemon's changes.
// Call it before shutting the HTTP server down: an event stream never ends
// by itself.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.stop()
		s.wg.Wait()
	})
}

// Stopping marks the daemon as stopping (State.Stopping) and sends the
// new State as a KindState event: the daemon calls it before it finishes
// its in-flight calls, which can take up to daemon.DrainTimeout.
func (s *Server) Stopping() {
	if s.stopping.Swap(true) {
		return
	}
	st := s.State()
	s.hub.publish(apitype.Event{Kind: apitype.KindState, State: &st})
}

// Notify sends a KindNotice event: kind is "info" or "error", text a line
// for the window's status bar.
func (s *Server) Notify(kind, text string) {
	s.hub.publish(apitype.Event{Kind: apitype.KindNotice, Notice: &apitype.Notice{Kind: kind, Text: text}})
}

// ShowWindow sends a KindWindow event asking a running window process to
// show and raise itself.
func (s *Server) ShowWindow() {
	s.hub.publish(apitype.Event{Kind: apitype.KindWindow, Window: &apitype.WindowEvent{Action: apitype.WindowShow}})
}

// EventsDropped is how many events the stream has dropped over all
// subscribers (State.EventsDropped).
func (s *Server) EventsDropped() int64 { return s.hub.droppedTotal() }

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// writeError answers with an apitype.Error.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, apitype.Error{Error: msg})
}
