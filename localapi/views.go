package localapi

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/clients"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/timeline"
)

// ms is t in Unix milliseconds, 0 for the zero time.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// State returns the current State (also sent as KindState on change).
func (s *Server) State() apitype.State {
	st := apitype.State{Version: s.cfg.Version, Paused: s.cfg.Guard.Paused(),
		Profiles: []apitype.ProfileView{}, Pairing: []apitype.PairingView{}, Refused: []apitype.RefusedView{},
		Approvals: []apitype.Approval{}, Running: []apitype.RunningCall{},
		Window: s.cfg.Window != nil, NoWindow: s.cfg.NoWindow, EventsDropped: s.hub.droppedTotal(), Apps: s.cfg.Broker.Apps(), Stopping: s.stopping.Load()}
	if st.Apps == nil {
		st.Apps = []string{}
	}
	now := s.cfg.Now()
	for _, p := range s.cfg.Broker.Profiles() {
		v := apitype.ProfileView{ID: p.ID, Label: p.Label, Slug: p.Slug, Status: "disconnected",
			ExtVersion: p.ExtVersion, ExtOutdated: p.ExtOutdated, LastSeenMs: ms(p.LastSeen), Tabs: []apitype.TabView{}}
		if p.Connected {
			v.Status = "connected"
			v.LastSeenMs = ms(now)
		}
		for _, t := range p.Tabs {
			v.Tabs = append(v.Tabs, apitype.TabView{Number: t.Tab, Title: t.Title, URL: t.URL, Current: t.Current, Owner: ownerApp(t.Owner)})
		}
		st.Profiles = append(st.Profiles, v)
	}
	slices.SortStableFunc(st.Profiles, func(x, y apitype.ProfileView) int {
		if (x.Status == "connected") != (y.Status == "connected") {
			if x.Status == "connected" {
				return -1
			}
			return 1
		}
		return strings.Compare(x.Slug, y.Slug)
	})
	for _, p := range s.cfg.Broker.Pending() {
		st.Pairing = append(st.Pairing, apitype.PairingView{ID: p.ID, Label: p.Label, Code: p.Code, SinceMs: ms(p.Since), ExpiresMs: ms(p.Expires)})
	}
	for _, r := range s.cfg.Broker.Refused() {
		st.Refused = append(st.Refused, apitype.RefusedView{ID: r.ID, Label: r.Label, Refusal: string(r.Code), Reason: r.Reason, NextStep: r.NextStep, AtMs: ms(r.At)})
	}
	for _, r := range s.cfg.Guard.Pending() {
		st.Approvals = append(st.Approvals, approvalView(r))
	}
	for _, e := range s.cfg.Timeline.Running() {
		st.Running = append(st.Running, apitype.RunningCall{ID: e.CallID, Tool: e.Tool, Client: e.Client,
			Profile: e.Profile, Tab: e.Tab, SinceMs: ms(e.Time)})
	}
	return st
}

func approvalView(r policy.Request) apitype.Approval {
	return apitype.Approval{ID: r.ID, Tool: r.Tool, Class: string(r.Class), Client: r.Client,
		Profile: r.Profile, Tab: r.Tab, Sites: append([]string{}, r.Sites...), Summary: r.Summary,
		SinceMs: ms(r.Since), DeadlineMs: ms(r.Deadline)}
}

// heldApproval is the Approval of a CallHeld event.
func heldApproval(e timeline.Entry, h timeline.Hold) apitype.Approval {
	return apitype.Approval{ID: e.CallID, Tool: e.Tool, Class: e.Class, Client: e.Client,
		Profile: e.Profile, Tab: e.Tab, Sites: append([]string{}, h.Sites...), Summary: e.Args,
		SinceMs: ms(h.Since), DeadlineMs: ms(h.Deadline)}
}

// profileView is a registered profile in ProfileList and in what approve
// and forget return.
func profileView(p broker.Profile) apitype.Profile {
	status := "disconnected"
	if p.Connected {
		status = "connected"
	} else if p.PairsOnReconnect {
		status = "approved"
	}
	v := apitype.Profile{ID: p.ID, Label: p.Label, Slug: p.Slug, Status: status,
		ExtVersion: p.ExtVersion, ExtOutdated: p.ExtOutdated, LastSeen: p.LastSeen, RTTMs: float64(p.RTT) / float64(time.Millisecond)}
	for _, t := range p.Tabs {
		v.Tabs = append(v.Tabs, tabView(t))
	}
	return v
}

// tabView is a shared tab in Profile.
func tabView(t protocol.TabInfo) apitype.Tab {
	return apitype.Tab{Tab: t.Tab, Title: t.Title, URL: t.URL, Current: t.Current, Owner: ownerApp(t.Owner)}
}

// ownerApp is the app a tab belongs to ("" : the user's; a client without
// a name is "unnamed app").
func ownerApp(o *protocol.TabOwner) string {
	switch {
	case o == nil:
		return ""
	case o.App == "":
		return "unnamed app"
	}
	return o.App
}

func pendingView(p broker.PendingProfile) apitype.Profile {
	return apitype.Profile{ID: p.ID, Label: p.Label, Status: "pending", Since: p.Since, Code: p.Code, Expires: p.Expires}
}

// TimelineEntry is a timeline row as the API shows it (the CLI shows rows
// read from the store itself, when no daemon runs, the same way).
func TimelineEntry(e timeline.Entry) apitype.TimelineEntry {
	return apitype.TimelineEntry{ID: e.ID, CallID: e.CallID, TimeMs: ms(e.Time), Client: e.Client, Token: e.Token,
		Profile: e.Profile, Tab: e.Tab, Tool: e.Tool, Args: e.Args, Class: e.Class, Site: e.Site,
		Decision: e.Decision, DurationMs: float64(e.Duration) / float64(time.Millisecond),
		RTTMs:   float64(e.RTT) / float64(time.Millisecond),
		Outcome: string(e.Outcome), Error: e.Error}
}

// callEvent is a timeline live event as a KindCall event; ok is false for
// kinds the stream does not carry.
func callEvent(ev timeline.Event) (apitype.CallEvent, bool) {
	c := apitype.CallEvent{ID: ev.Entry.CallID, Entry: TimelineEntry(ev.Entry)}
	switch ev.Kind {
	case timeline.CallStarted:
		c.Phase = apitype.PhaseStarted
	case timeline.CallHeld:
		c.Phase = apitype.PhaseHeld
		if ev.Hold != nil {
			a := heldApproval(ev.Entry, *ev.Hold)
			c.Approval = &a
		}
	case timeline.CallAnswered:
		c.Phase = apitype.PhaseAnswered
		c.Answer, c.AnsweredBy = ev.Answer, ev.AnsweredBy
	case timeline.CallRecorded:
		c.Phase = apitype.PhaseFinished
		if ev.Entry.Outcome == timeline.Ignored {
			c.Phase = apitype.PhaseLateAnswer
		}
	default:
		return c, false
	}
	return c, true
}

// outcomes are the timeline's outcomes, as TimelineFacets offers them.
var outcomes = []string{string(timeline.OK), string(timeline.Error), string(timeline.Refused),
	string(timeline.Denied), string(timeline.Paused), string(timeline.Interrupted), string(timeline.Ignored), string(timeline.Unrecorded)}

func clientView(st clients.Status) apitype.Client {
	v := apitype.Client{ID: st.Client.ID, Name: st.Client.Name, Installed: st.Installed,
		Connected: st.Connected && len(st.Files) > 0, Reload: st.Client.Reload}
	var errs []string
	for i, f := range st.Files {
		if i == 0 {
			v.Path = f.Path
		}
		if f.Connected && v.Mode == "" {
			v.Mode = string(f.Mode)
		}
		if f.Err != nil {
			errs = append(errs, f.Err.Error())
		}
	}
	v.Error = strings.Join(errs, "; ")
	return v
}

func manifestVersion(fsys fs.FS) string {
	b, err := fs.ReadFile(fsys, "manifest.json")
	if err != nil {
		return ""
	}
	var m struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &m)
	return m.Version
}

// extensionState is the Extension page's state.
func (s *Server) extensionState() apitype.ExtensionState {
	st := apitype.ExtensionState{Dir: s.cfg.ExtensionDir, ID: s.cfg.ExtensionID, Outdated: []apitype.OutdatedExtension{}}
	for _, p := range s.cfg.Broker.Profiles() {
		st.Known++
		st.Connected = st.Connected || p.Connected
		if p.Connected && p.ExtOutdated != "" {
			st.Outdated = append(st.Outdated, apitype.OutdatedExtension{Profile: p.Label, Message: p.ExtOutdated})
		}
	}
	if s.cfg.Extension != nil {
		st.Version = manifestVersion(s.cfg.Extension)
	}
	if st.Dir != "" {
		st.WrittenVersion = manifestVersion(os.DirFS(st.Dir))
		st.Written = st.WrittenVersion != ""
	}
	dir := st.Dir
	if !st.Written {
		dir += " (press “Write the extension” first)"
	}
	st.Steps = []string{
		"In the Chrome profile the AI may use, open chrome://extensions.",
		"Turn on “Developer mode” (top right).",
		"Click “Load unpacked” and choose the folder " + dir + ".",
		"Click Tether’s icon in the toolbar and share the tabs the AI may see; only shared tabs are visible to it.",
		"Approve the new profile here, under Approvals. It then appears under Profiles.",
	}
	return st
}

// RecordLate stores a row that a UI process of the daemon produced: an
// approval dialog answered after its call was decided (outcome
// "ignored", carrying the call's id). It goes out on the event stream as
// PhaseLateAnswer. Errors are the timeline store's.
func (s *Server) RecordLate(ctx context.Context, e apitype.TimelineEntry) error {
	t := time.UnixMilli(e.TimeMs)
	if e.TimeMs == 0 {
		t = s.cfg.Now()
	}
	_, err := s.cfg.Timeline.Record(ctx, timeline.Entry{CallID: e.CallID, Time: t, Client: e.Client,
		Profile: e.Profile, Tab: e.Tab, Tool: e.Tool, Args: e.Args, Class: e.Class, Site: e.Site,
		Decision: e.Decision, Duration: time.Duration(e.DurationMs * float64(time.Millisecond)),
		Outcome: timeline.Outcome(e.Outcome), Error: e.Error})
	return err
}
