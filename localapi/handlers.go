package localapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/launcher"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/timeline"
)

// stateCoalesce gathers a burst of changes (a profile's tabs, then its
// pairing) into one KindState event.
const stateCoalesce = 20 * time.Millisecond

// forwardState sends a KindState event after every change of the broker
// or the guard (bc and gc: their Changed channels when New ran), bursts
// coalesced, until Close.
func (s *Server) forwardState(bc, gc <-chan struct{}) {
	defer s.wg.Done()
	for {
		select {
		case <-bc:
		case <-gc:
		case <-s.ctx.Done():
			return
		}
		select {
		case <-time.After(stateCoalesce):
		case <-s.ctx.Done():
			return
		}
		// Re-armed before reading: a change after the read fires again.
		bc, gc = s.cfg.Broker.Changed(), s.cfg.Guard.Changed()
		st := s.State()
		s.hub.publish(apitype.Event{Kind: apitype.KindState, State: &st})
	}
}

// forwardCalls sends every phase of every tool call (the timeline's live
// events, sub: subscribed when New ran) as KindCall events, until Close.
// Should the timeline's bus drop events for it, every subscriber gets a
// KindResync event.
func (s *Server) forwardCalls(sub *timeline.Subscription) {
	defer s.wg.Done()
	defer sub.Unsubscribe()
	for {
		select {
		case ev, ok := <-sub.C:
			if !ok {
				return
			}
			if ev.Dropped > 0 {
				s.log.Warn("event stream missed tool call events", "dropped", ev.Dropped)
				s.hub.dropped.Add(int64(ev.Dropped))
				s.hub.publish(apitype.Event{Kind: apitype.KindResync, Dropped: ev.Dropped})
			}
			if c, ok := callEvent(ev); ok {
				s.hub.publish(apitype.Event{Kind: apitype.KindCall, Call: &c})
			}
		case <-s.ctx.Done():
			return
		}
	}
}

// decode reads a JSON body of at most 64 KiB into v; on failure it answers
// 400 with hint and returns false.
func decode(w http.ResponseWriter, r *http.Request, v any, hint string) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "bad request body ("+err.Error()+"): "+hint)
		return false
	}
	return true
}

func (s *Server) getState(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.State())
}

func (s *Server) getProfiles(w http.ResponseWriter, r *http.Request) {
	out := apitype.ProfileList{Profiles: []apitype.Profile{}, Pending: []apitype.Profile{}, Refused: []apitype.RefusedProfile{}}
	for _, p := range s.cfg.Broker.Profiles() {
		out.Profiles = append(out.Profiles, profileView(p))
	}
	for _, p := range s.cfg.Broker.Pending() {
		out.Pending = append(out.Pending, pendingView(p))
	}
	for _, r := range s.cfg.Broker.Refused() {
		out.Refused = append(out.Refused, apitype.RefusedProfile{ID: r.ID, Label: r.Label, Slug: r.Slug, Refusal: string(r.Code),
			Reason: r.Reason, NextStep: r.NextStep, At: r.At, Count: r.Count})
	}
	writeJSON(w, http.StatusOK, out)
}

// profileName decodes a NameRequest.
func profileName(w http.ResponseWriter, r *http.Request, what string) (string, bool) {
	var req apitype.NameRequest
	hint := `send {"name": "<` + what + `>"}`
	if !decode(w, r, &req, hint) {
		return "", false
	}
	if req.Name == "" {
		writeError(w, http.StatusBadRequest, hint)
		return "", false
	}
	return req.Name, true
}

// profileError answers a broker error: 404 for an unknown profile, 409 for
// an ambiguous name or one already paired, 500 otherwise.
func profileError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, broker.ErrUnknownProfile) {
		code = http.StatusNotFound
	} else if errors.Is(err, broker.ErrAmbiguousProfile) || errors.Is(err, broker.ErrAlreadyPaired) {
		code = http.StatusConflict
	}
	writeError(w, code, err.Error())
}

func (s *Server) approveProfile(w http.ResponseWriter, r *http.Request) {
	name, ok := profileName(w, r, "pairing code or full id")
	if !ok {
		return
	}
	p, err := s.cfg.Broker.Approve(name)
	if err != nil {
		profileError(w, err)
		return
	}
	s.log.Info("profile approved over the local API", "label", p.Label, "slug", p.Slug, "pairs_on_reconnect", p.PairsOnReconnect)
	if p.PairsOnReconnect {
		s.Notify("info", fmt.Sprintf("Approved %q; it pairs when its extension reconnects (within %d seconds).", p.Label, int(broker.ReconnectWithin/time.Second)))
	}
	writeJSON(w, http.StatusOK, profileView(p))
}

func (s *Server) denyProfile(w http.ResponseWriter, r *http.Request) {
	name, ok := profileName(w, r, "pairing code or full id")
	if !ok {
		return
	}
	p, err := s.cfg.Broker.Deny(name)
	if err != nil {
		profileError(w, err)
		return
	}
	s.log.Info("profile denied over the local API", "label", p.Label, "code", p.Code)
	writeJSON(w, http.StatusOK, pendingView(p))
}

func (s *Server) forgetProfile(w http.ResponseWriter, r *http.Request) {
	name, ok := profileName(w, r, "slug, label or id prefix")
	if !ok {
		return
	}
	p, err := s.cfg.Broker.Forget(name)
	if err != nil {
		profileError(w, err)
		return
	}
	s.log.Info("profile forgotten over the local API", "slug", p.Slug)
	writeJSON(w, http.StatusOK, profileView(p))
}

func (s *Server) setTabOwner(w http.ResponseWriter, r *http.Request) {
	var req apitype.TabOwnerRequest
	if !decode(w, r, &req, `send {"profile": "work", "tab": 3, "app": "claude-code"}, or "app": "" to give the tab back to the user`) {
		return
	}
	if req.Profile == "" || req.Tab <= 0 {
		writeError(w, http.StatusBadRequest, `name the profile and the tab: {"profile": "work", "tab": 3, "app": "claude-code"}`)
		return
	}
	info, err := s.cfg.Broker.SetTabOwner(r.Context(), req.Profile, req.Tab, req.App)
	var remote *broker.RemoteError
	switch {
	case errors.As(err, &remote):
		writeError(w, http.StatusConflict, remote.Message)
		return
	case err != nil:
		profileError(w, err)
		return
	}
	to := req.App
	if to == "" {
		to = "the user"
	}
	s.log.Info("tab given over the local API", "profile", req.Profile, "tab", req.Tab, "to", to)
	writeJSON(w, http.StatusOK, tabView(info))
}

func (s *Server) getPause(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, apitype.Pause{Paused: s.cfg.Guard.Paused()})
}

func (s *Server) setPause(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Paused *bool `json:"paused"`
	}
	const hint = `send {"paused": true} or {"paused": false}`
	if !decode(w, r, &req, hint) {
		return
	}
	if req.Paused == nil {
		writeError(w, http.StatusBadRequest, hint)
		return
	}
	if err := s.cfg.Guard.SetPaused(*req.Paused); err != nil {
		writeError(w, http.StatusInternalServerError, "could not save the pause switch: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, apitype.Pause{Paused: s.cfg.Guard.Paused()})
}

func (s *Server) getApprovals(w http.ResponseWriter, r *http.Request) {
	out := []apitype.Approval{}
	for _, req := range s.cfg.Guard.Pending() {
		out = append(out, approvalView(req))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	var req apitype.AnswerRequest
	const hint = `send {"id": "<the approval's id>", "answer": "allow_once", "always_allow_site" or "deny", "by": "window" or "cli"}`
	if !decode(w, r, &req, hint) {
		return
	}
	by := req.By
	switch by {
	case "":
		by = policy.ByCLI
	case policy.ByWindow, policy.ByCLI:
	default:
		writeError(w, http.StatusBadRequest, `"by" must be "window" or "cli"`)
		return
	}
	switch req.Answer {
	case apitype.AllowOnce, apitype.AlwaysAllowSite, apitype.Deny:
	default:
		writeError(w, http.StatusBadRequest, hint)
		return
	}
	err := s.cfg.Guard.AnswerBy(req.ID, policy.Answer(req.Answer), by)
	if errors.Is(err, policy.ErrNotPending) {
		writeError(w, http.StatusConflict, "this call was already answered or timed out; nothing changed")
		return
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.log.Info("held call answered over the local API", "id", req.ID, "answer", req.Answer, "by", by)
	w.WriteHeader(http.StatusNoContent)
}

// timelineFilter reads TimelineFilter's query parameters; export keeps
// limit 0 as "every row".
func timelineFilter(q url.Values, export bool) (timeline.Filter, error) {
	f := timeline.Filter{Client: q.Get("client"), Profile: q.Get("profile"), Outcome: timeline.Outcome(q.Get("outcome"))}
	if f.Outcome != "" && !strings.Contains(" "+strings.Join(outcomes, " ")+" ", " "+string(f.Outcome)+" ") {
		return f, fmt.Errorf("unknown outcome %q (one of %s)", f.Outcome, strings.Join(outcomes, ", "))
	}
	for _, p := range []struct {
		name string
		set  func(int64)
	}{
		{"before", func(n int64) { f.BeforeID = n }},
		{"limit", func(n int64) { f.Limit = int(n) }},
	} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return f, fmt.Errorf("%s must be a number ≥ 0, not %q", p.name, v)
			}
			p.set(n)
		}
	}
	if !export {
		f.Limit = min(f.Limit, 1000)
	}
	return f, nil
}

// timelineProfile is the slug the timeline's rows carry for a profile
// named as a tool call names one (exact id or slug, or a unique prefix of
// either: broker.FindProfile): a slug some row carries is taken as it is
// (its profile may be forgotten since, its slug another's prefix), else
// the known profile's slug, else name as it is.
func (s *Server) timelineProfile(ctx context.Context, name string) string {
	if name == "" {
		return ""
	}
	if f, err := s.cfg.Timeline.Facets(ctx); err == nil && slices.Contains(f.Profiles, name) {
		return name
	}
	if p, ok := broker.FindProfile(s.cfg.Broker.Profiles(), name); ok {
		return p.Slug
	}
	return name
}

func (s *Server) getTimeline(w http.ResponseWriter, r *http.Request) {
	f, err := timelineFilter(r.URL.Query(), false)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	f.Profile = s.timelineProfile(r.Context(), f.Profile)
	rows, err := s.cfg.Timeline.Query(r.Context(), f)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	out := make([]apitype.TimelineEntry, len(rows))
	for i, e := range rows {
		out[i] = TimelineEntry(e)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getTimelineFacets(w http.ResponseWriter, r *http.Request) {
	f, err := s.cfg.Timeline.Facets(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, apitype.TimelineFacets{Clients: f.Clients, Profiles: f.Profiles, Outcomes: outcomes})
}

// exportTimeline streams the matching rows as JSON Lines (timeline.Entry
// per line, oldest first). An error after the first row can only cut the
// stream short.
func (s *Server) exportTimeline(w http.ResponseWriter, r *http.Request) {
	f, err := timelineFilter(r.URL.Query(), true)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	f.Profile = s.timelineProfile(r.Context(), f.Profile)
	w.Header().Set("Content-Type", "application/jsonl")
	n, err := s.cfg.Timeline.Export(r.Context(), w, f)
	if err != nil {
		s.log.Warn("timeline export failed", "rows", n, "err", err)
		return
	}
	s.log.Info("timeline exported over the local API", "rows", n)
}

// clientsHost is the Clients, or a 409 answer when there is none.
func (s *Server) clientsHost(w http.ResponseWriter) (Clients, bool) {
	if s.cfg.Clients == nil {
		writeError(w, http.StatusConflict, "this daemon cannot edit MCP clients' configs; run `tether connect` in a terminal")
		return nil, false
	}
	return s.cfg.Clients, true
}

func (s *Server) getClients(w http.ResponseWriter, r *http.Request) {
	host, ok := s.clientsHost(w)
	if !ok {
		return
	}
	out := []apitype.Client{}
	for _, st := range host.List() {
		out = append(out, clientView(st))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) connectClient(w http.ResponseWriter, r *http.Request) { s.changeClient(w, r, true) }
func (s *Server) disconnectClient(w http.ResponseWriter, r *http.Request) {
	s.changeClient(w, r, false)
}

// changeClient connects or disconnects a client. On failure the body is an
// Error whose message holds the outcome's lines and the reason; a notice
// says the same for the window's status bar.
func (s *Server) changeClient(w http.ResponseWriter, r *http.Request, connect bool) {
	host, ok := s.clientsHost(w)
	if !ok {
		return
	}
	var req apitype.ClientRequest
	if !decode(w, r, &req, `send {"id": "<client id, e.g. claude-code>"}`) {
		return
	}
	var (
		o   clients.Outcome
		err error
	)
	verb := "disconnect"
	if connect {
		verb = "connect"
		o, err = host.Connect(req.ID, s.cfg.ConnectOptions)
	} else {
		o, err = host.Disconnect(req.ID)
	}
	out := apitype.ClientOutcome{Message: strings.Join(o.Lines(connect), "\n"), Changed: o.Changed}
	for _, st := range host.List() {
		if st.Client.ID == req.ID {
			out.Client = clientView(st)
		}
	}
	if err != nil {
		s.log.Warn("client config change failed", "client", req.ID, "action", verb, "err", err)
		msg := err.Error() // a refused file's error says it was left unchanged, and what to do
		if out.Message != "" {
			msg = out.Message + "\n" + msg
		}
		msg = fmt.Sprintf("could not %s %s: %s", verb, req.ID, msg)
		s.Notify("error", msg)
		code := http.StatusConflict
		if errors.Is(err, clients.ErrUnknownClient) {
			code = http.StatusNotFound
		}
		writeError(w, code, msg)
		return
	}
	s.log.Info("client config changed over the local API", "client", req.ID, "action", verb, "changed", o.Changed)
	s.Notify("info", out.Message)
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getExtension(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.extensionState())
}

// writeExtensionDir writes the unpacked extension to ExtensionDir with a
// tether.json naming the daemon's port and holding its pairing key,
// replacing an older copy atomically.
func (s *Server) writeExtensionDir() error {
	if s.cfg.Extension == nil || s.cfg.ExtensionDir == "" {
		return errors.New("this build has no extension to write; build it with `make`")
	}
	if err := launcher.WriteExtension(s.cfg.Extension, s.cfg.ExtensionDir, launcher.ExtensionConfig{Port: s.cfg.Port, PairingKey: s.cfg.PairingKey}); err != nil {
		return fmt.Errorf("%w; check that %s is writable", err, filepath.Dir(s.cfg.ExtensionDir))
	}
	s.log.Info("extension written over the local API", "dir", s.cfg.ExtensionDir)
	return nil
}

func (s *Server) writeExtension(w http.ResponseWriter, r *http.Request) {
	if err := s.writeExtensionDir(); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, s.extensionState())
}

// revealExtension opens the extension's folder in the file manager of the
// daemon's session, writing it first when it is not there.
func (s *Server) revealExtension(w http.ResponseWriter, r *http.Request) {
	if !s.extensionState().Written {
		if err := s.writeExtensionDir(); err != nil {
			writeError(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	if err := revealDir(s.cfg.ExtensionDir); err != nil {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("open %s: %v; open that folder by hand", s.cfg.ExtensionDir, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// openTestBrowser starts `tether browser`; it answers once the process
// started. Should it exit with an error, a KindNotice event says so.
func (s *Server) openTestBrowser(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Executable == "" {
		writeError(w, http.StatusConflict, "the tether binary is unknown; run `tether browser` in a terminal")
		return
	}
	cmd := exec.Command(s.cfg.Executable, "browser")
	cmd.Env = append(os.Environ(), s.cfg.BrowserEnv...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		msg := fmt.Sprintf("start `tether browser`: %v", err)
		s.Notify("error", msg)
		writeError(w, http.StatusInternalServerError, msg)
		return
	}
	s.log.Info("test browser started over the local API", "pid", cmd.Process.Pid)
	go func() {
		if err := cmd.Wait(); err != nil {
			msg := strings.TrimSpace(out.String())
			if i := strings.LastIndex(msg, "\n"); i >= 0 {
				msg = msg[i+1:]
			}
			s.log.Warn("test browser failed", "err", err, "output", msg)
			s.Notify("error", "The test browser did not start: "+msg)
		}
	}()
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) openWindow(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Window == nil {
		if s.cfg.NoWindow != "" {
			writeError(w, http.StatusConflict, "this Tether has no window: "+s.cfg.NoWindow+"; stop it (`tether stop`) and start `tether` where the window can open")
			return
		}
		writeError(w, http.StatusConflict, "this daemon runs without a window (tether serve); stop it (`tether stop`) and start `tether` for the window")
		return
	}
	if err := s.cfg.Window.Open(); err != nil {
		s.log.Warn("open the window failed", "err", err)
		writeError(w, http.StatusInternalServerError, "could not open the window: "+err.Error())
		return
	}
	s.log.Info("window opened over the local API")
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) windowPainted(w http.ResponseWriter, r *http.Request) {
	var req apitype.WindowPainted
	if !decode(w, r, &req, `send {"sinceStartMs": <milliseconds>}`) {
		return
	}
	s.log.Info("window painted its first frame", "since_start_ms", req.SinceStartMs)
	s.hub.publish(apitype.Event{Kind: apitype.KindWindow, Window: &apitype.WindowEvent{Action: apitype.WindowPaintedAction, SinceStartMs: req.SinceStartMs}})
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) shutdown(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Shutdown == nil {
		writeError(w, http.StatusConflict, "this daemon cannot be stopped over the local API")
		return
	}
	s.log.Info("shutdown requested over HTTP")
	w.WriteHeader(http.StatusNoContent)
	s.cfg.Shutdown()
}
