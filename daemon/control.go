package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/tether-browser/tether/broker"
	tmcp "github.com/tether-browser/tether/mcp"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
)

// browserAdapter lets the MCP tools reach the broker through their own
// Browser interface.
type browserAdapter struct{ b *broker.Broker }

func (a browserAdapter) Call(ctx context.Context, profile string, method protocol.Method, params, result any, timeout time.Duration) error {
	// The timeline records what the call really addressed: the broker's
	// choice when the call named no profile (or several were candidates).
	if v, ok := tmcp.VerdictFrom(ctx); ok {
		if n, ok := v.Note.(*note); ok {
			ctx = broker.WithResolved(ctx, n.resolved)
		}
	}
	return a.b.Call(ctx, profile, method, params, result, timeout)
}

func (a browserAdapter) Profiles() []tmcp.Profile {
	ps := a.b.Profiles()
	out := make([]tmcp.Profile, len(ps))
	for i, p := range ps {
		out[i] = tmcp.Profile{ID: p.ID, Label: p.Label, Slug: p.Slug, Connected: p.Connected, Tabs: p.Tabs}
	}
	return out
}

// ProfileJSON is one profile in the control API. Secrets never appear.
type ProfileJSON struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Slug  string `json:"slug,omitempty"`
	// Status is connected, disconnected or pending; or approved, in what
	// approve returns for a profile that pairs when its extension
	// reconnects (it had been pushed out of the waiting list).
	Status     string    `json:"status"`
	ExtVersion string    `json:"extVersion,omitempty"`
	LastSeen   time.Time `json:"lastSeen,omitzero"`
	Since      time.Time `json:"since,omitzero"`
	// Code is a pending profile's pairing code, the one its extension's
	// popup shows (6 characters of broker.CodeAlphabet); approve and deny
	// take it, or the full id.
	Code string `json:"code,omitempty"`
	// Expires is when a pending profile is let go unless approved.
	Expires time.Time          `json:"expires,omitzero"`
	Tabs    []protocol.TabInfo `json:"tabs,omitempty"`
}

// ProfilesJSON is GET /control/profiles's body.
type ProfilesJSON struct {
	Profiles []ProfileJSON `json:"profiles"`
	Pending  []ProfileJSON `json:"pending"`
}

// ControlError is the body of a failed control request.
type ControlError struct {
	Error string `json:"error"`
}

func profileJSON(p broker.Profile) ProfileJSON {
	status := "disconnected"
	if p.Connected {
		status = "connected"
	} else if p.PairsOnReconnect {
		status = "approved"
	}
	return ProfileJSON{ID: p.ID, Label: p.Label, Slug: p.Slug, Status: status,
		ExtVersion: p.ExtVersion, LastSeen: p.LastSeen, Tabs: p.Tabs}
}

// writeJSON answers a control request with v as JSON.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// profilesHandler serves the control API behind `tether profiles`:
//
//	GET  /control/profiles                 → ProfilesJSON
//	POST /control/profiles/approve {name}  → ProfileJSON  (name: pairing code or full id)
//	POST /control/profiles/deny    {name}  → 204          (name: pairing code or full id)
//	POST /control/profiles/forget  {name}  → ProfileJSON  (name: slug, label or id prefix)
func profilesHandler(b *broker.Broker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		action := strings.TrimPrefix(strings.TrimPrefix(r.URL.Path, PathProfiles), "/")
		if action == "" {
			if r.Method != http.MethodGet {
				writeJSON(w, http.StatusMethodNotAllowed, ControlError{"use GET"})
				return
			}
			out := ProfilesJSON{Profiles: []ProfileJSON{}, Pending: []ProfileJSON{}}
			for _, p := range b.Profiles() {
				out.Profiles = append(out.Profiles, profileJSON(p))
			}
			for _, p := range b.Pending() {
				out.Pending = append(out.Pending, ProfileJSON{ID: p.ID, Label: p.Label, Status: "pending", Since: p.Since,
					Code: p.Code, Expires: p.Expires})
			}
			writeJSON(w, http.StatusOK, out)
			return
		}
		if r.Method != http.MethodPost {
			writeJSON(w, http.StatusMethodNotAllowed, ControlError{"use POST"})
			return
		}
		var req struct {
			Name string `json:"name"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil || req.Name == "" {
			writeJSON(w, http.StatusBadRequest, ControlError{`send {"name": "<pairing code or full id to approve or deny; slug, label or id prefix to forget>"}`})
			return
		}
		fail := func(err error) {
			code := http.StatusInternalServerError
			if errors.Is(err, broker.ErrUnknownProfile) {
				code = http.StatusNotFound
			} else if errors.Is(err, broker.ErrAmbiguousProfile) {
				code = http.StatusConflict
			}
			writeJSON(w, code, ControlError{err.Error()})
		}
		switch action {
		case "approve":
			p, err := b.Approve(req.Name)
			if err != nil {
				fail(err)
				return
			}
			writeJSON(w, http.StatusOK, profileJSON(p))
		case "deny":
			if err := b.Deny(req.Name); err != nil {
				fail(err)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		case "forget":
			p, err := b.Forget(req.Name)
			if err != nil {
				fail(err)
				return
			}
			writeJSON(w, http.StatusOK, profileJSON(p))
		default:
			writeJSON(w, http.StatusNotFound, ControlError{"unknown action " + action + "; use approve, deny or forget"})
		}
	})
}

// PauseJSON is the body of /control/pause, both ways.
type PauseJSON struct {
	Paused bool `json:"paused"`
}

// pauseHandler serves the control API behind `tether pause` / `resume`:
//
//	GET  /control/pause                    → PauseJSON
//	POST /control/pause {"paused": bool}   → PauseJSON
func pauseHandler(g *policy.Guard) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
		case http.MethodPost:
			var req struct {
				Paused *bool `json:"paused"`
			}
			if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096)).Decode(&req); err != nil || req.Paused == nil {
				writeJSON(w, http.StatusBadRequest, ControlError{`send {"paused": true} or {"paused": false}`})
				return
			}
			if err := g.SetPaused(*req.Paused); err != nil {
				writeJSON(w, http.StatusInternalServerError, ControlError{err.Error()})
				return
			}
		default:
			writeJSON(w, http.StatusMethodNotAllowed, ControlError{"use GET or POST"})
			return
		}
		writeJSON(w, http.StatusOK, PauseJSON{Paused: g.Paused()})
	})
}
