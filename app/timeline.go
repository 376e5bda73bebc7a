package app

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tether-browser/tether/apitype"
)

// The kinds of TimelineEvent besides the call phases it carries
// (apitype.PhaseStarted, apitype.PhaseFinished).
const (
	// TimelineResync: events may have been missed (the stream reconnected
	// or the daemon dropped some); reload the list.
	TimelineResync = "resync"
)

// TimelineEvent is a live update of the timeline.
type TimelineEvent struct {
	// Kind is "started" (a call runs now; its Entry has no ID yet),
	// "finished" (it is on the timeline: Entry is its row) or "resync"
	// (no entry: reload with Timeline).
	Kind  string                `json:"kind"`
	Entry apitype.TimelineEntry `json:"entry"`
	// Dropped, on "resync", is how many events the daemon dropped for this
	// window (0 after a reconnection, when the number is unknown).
	Dropped int `json:"dropped"`
}

// Timeline returns the recorded calls matching f, newest first.
func (a *App) Timeline(f apitype.TimelineFilter) ([]apitype.TimelineEntry, error) {
	rows, err := a.c.Timeline(a.ctx(), f)
	if err != nil {
		return nil, fail("read the timeline", err)
	}
	return nonNil(rows), nil
}

// TimelineFacets returns the clients, profiles and outcomes the timeline's
// filters offer.
func (a *App) TimelineFacets() (apitype.TimelineFacets, error) {
	f, err := a.c.TimelineFacets(a.ctx())
	if err != nil {
		return apitype.TimelineFacets{}, fail("read the timeline", err)
	}
	f.Clients, f.Profiles, f.Outcomes = nonNil(f.Clients), nonNil(f.Profiles), nonNil(f.Outcomes)
	return f, nil
}

// ExportTimeline asks where to save, then writes the rows matching f
// (every row, oldest first, when f.Limit is 0) as JSON Lines. It returns
// the file written, or "" when the user cancelled.
func (a *App) ExportTimeline(f apitype.TimelineFilter) (string, error) {
	s := a.getShell()
	if s == nil {
		return "", fmt.Errorf("the Tether window is not open yet; try again in a moment")
	}
	path, err := s.SaveFile("Export the timeline", "tether-timeline-"+a.cfg.Now().Format("2006-01-02")+".jsonl")
	if err != nil || path == "" {
		return "", err
	}
	return path, a.exportTo(path, f)
}

// exportTo writes the rows matching f to path as JSON Lines (the daemon's
// export), atomically: an existing file is replaced only once the export
// is complete.
func (a *App) exportTo(path string, f apitype.TimelineFilter) error {
	var n int
	err := writeFileAtomic(path, func(w *os.File) error {
		var err error
		n, err = a.c.ExportTimeline(a.ctx(), w, f)
		return err
	})
	if err != nil {
		return fail("export the timeline to "+path, err)
	}
	a.log.Info("timeline exported from the window", "path", path, "rows", n)
	return nil
}

// writeFileAtomic writes path through a temporary file in the same folder,
// so a reader never sees half a file and a failed write leaves the old one.
func writeFileAtomic(path string, write func(f *os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
