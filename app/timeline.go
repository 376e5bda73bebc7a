package app

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tether-browser/tether/timeline"
)

// TimelineEntry is one tool call on the timeline (timeline.Entry).
type TimelineEntry struct {
	ID int64 `json:"id"`
	// TimeMs is when the call arrived, in Unix milliseconds.
	TimeMs int64 `json:"timeMs"`
	// Client is the MCP client's name from its clientInfo, e.g. "claude-ai".
	Client  string `json:"client"`
	Profile string `json:"profile"`
	Tab     int    `json:"tab"`
	Tool    string `json:"tool"`
	// Args summarizes the arguments, secrets and typed passwords redacted.
	Args     string `json:"args"`
	Class    string `json:"class"`
	Site     string `json:"site"`
	Decision string `json:"decision"`
	// DurationMs is how long the call took, approval wait included.
	DurationMs float64 `json:"durationMs"`
	// Outcome is "ok", "error", "refused", "denied" or "paused"; "" for a
	// call still running (TimelineEvent kind "started"); "ignored" for a
	// native dialog answered after its call was decided.
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
}

// TimelineEvent is a live update of the timeline.
type TimelineEvent struct {
	// Kind is "started" (a call runs now), "recorded" (it ended, or was
	// refused, and is on the timeline) or "resync" (no entry: reload, as
	// for Dropped).
	Kind  string        `json:"kind"`
	Entry TimelineEntry `json:"entry"`
	// Dropped is how many events the window missed just before this one;
	// when non-zero it should reload with Timeline.
	Dropped int `json:"dropped"`
}

// TimelineFilter selects timeline rows; empty fields match everything.
type TimelineFilter struct {
	Client  string `json:"client"`
	Profile string `json:"profile"`
	// Outcome is one of TimelineEntry's outcomes.
	Outcome string `json:"outcome"`
	// BeforeID pages: rows older than this ID, when > 0.
	BeforeID int64 `json:"beforeId"`
	// Limit caps the rows (100 when 0, at most 1000).
	Limit int `json:"limit"`
}

// TimelineFacets are the values the timeline's filters offer.
type TimelineFacets struct {
	Clients  []string `json:"clients"`
	Profiles []string `json:"profiles"`
	Outcomes []string `json:"outcomes"`
}

func entryView(e timeline.Entry) TimelineEntry {
	return TimelineEntry{ID: e.ID, TimeMs: ms(e.Time), Client: e.Client, Profile: e.Profile, Tab: e.Tab,
		Tool: e.Tool, Args: e.Args, Class: e.Class, Site: e.Site, Decision: e.Decision,
		DurationMs: float64(e.Duration) / float64(time.Millisecond), Outcome: string(e.Outcome), Error: e.Error}
}

func timelineEvent(ev timeline.Event) TimelineEvent {
	return TimelineEvent{Kind: string(ev.Kind), Entry: entryView(ev.Entry), Dropped: ev.Dropped}
}

func (f TimelineFilter) filter() (timeline.Filter, error) {
	switch timeline.Outcome(f.Outcome) {
	case "", timeline.OK, timeline.Error, timeline.Refused, timeline.Denied, timeline.Paused, timeline.Ignored:
	default:
		return timeline.Filter{}, fmt.Errorf("unknown outcome %q (one of ok, error, refused, denied, paused, ignored)", f.Outcome)
	}
	limit := f.Limit
	if limit > 1000 {
		limit = 1000
	}
	return timeline.Filter{Client: f.Client, Profile: f.Profile, Outcome: timeline.Outcome(f.Outcome),
		BeforeID: f.BeforeID, Limit: limit}, nil
}

// Timeline returns the recorded calls matching f, newest first.
func (a *App) Timeline(f TimelineFilter) ([]TimelineEntry, error) {
	tf, err := f.filter()
	if err != nil {
		return nil, err
	}
	rows, err := a.cfg.Timeline.Query(context.Background(), tf)
	if err != nil {
		return nil, fmt.Errorf("read the timeline: %w", err)
	}
	out := make([]TimelineEntry, len(rows))
	for i, e := range rows {
		out[i] = entryView(e)
	}
	return out, nil
}

// TimelineFacets returns the clients and profiles the timeline has seen,
// for its filters.
func (a *App) TimelineFacets() (TimelineFacets, error) {
	f, err := a.cfg.Timeline.Facets(context.Background())
	if err != nil {
		return TimelineFacets{}, fmt.Errorf("read the timeline: %w", err)
	}
	return TimelineFacets{Clients: f.Clients, Profiles: f.Profiles,
		Outcomes: []string{string(timeline.OK), string(timeline.Error), string(timeline.Refused), string(timeline.Denied), string(timeline.Paused), string(timeline.Ignored)}}, nil
}

// ExportTimeline asks where to save, then writes the rows matching f
// (every row, oldest first, when f is empty) as JSON Lines. It returns the
// file written, or "" when the user cancelled.
func (a *App) ExportTimeline(f TimelineFilter) (string, error) {
	s := a.getShell()
	if s == nil {
		return "", ErrNoWindow
	}
	path, err := s.SaveFile("Export the timeline", "tether-timeline-"+a.cfg.Now().Format("2006-01-02")+".jsonl")
	if err != nil || path == "" {
		return "", err
	}
	return path, a.exportTo(path, f)
}

// exportTo writes the rows matching f to path as JSON Lines
// (timeline.Entry per line), atomically: an existing file is replaced only
// once the export is complete.
func (a *App) exportTo(path string, f TimelineFilter) error {
	tf, err := f.filter()
	if err != nil {
		return err
	}
	tf.Limit = f.Limit // Export: 0 is every row
	var n int
	err = writeFileAtomic(path, func(w *os.File) error {
		var err error
		n, err = a.cfg.Timeline.Export(context.Background(), w, tf)
		return err
	})
	if err != nil {
		return fmt.Errorf("export the timeline to %s: %w", path, err)
	}
	a.log.Info("timeline exported from the window", "path", path, "rows", n)
	return nil
}
