package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	tmcp "github.com/tether-browser/tether/mcp"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/timeline"
)

// downloadWindow is how long after a tool call on a tab a download there
// is still that call's: it uses the call's client and the tab's site.
const downloadWindow = 10 * time.Second

// downloadTool names downloads in the approval queue and on the timeline
// (a download is no tool; its policy class is policy.Download).
const downloadTool = "download"

// notesKept bounds the notes waiting for a session's next result.
const notesKept = 20

// tabKey names a shared tab: profile slug and tab number.
type tabKey struct {
	profile string
	tab     int
}

// lastCall is the latest tool call on a tab.
type lastCall struct {
	client, session string
	running         int       // calls of it still running
	ended           time.Time // when the last one ended
}

// judged is a download the daemon judged, until it ends.
type judged struct {
	entry   timeline.Entry
	session string
	denied  bool
}

// downloads judges the downloads the extension reports (protocol.DownloadEvent)
// by the user's policy, class download: allow resumes it, deny cancels it
// and removes its file, confirm holds it (paused) for the user's answer.
// Each decision and each end is a timeline row (filename and size, never
// the content), and a note in the next result of the session whose call
// the download followed. A note is outside the result's fence, so the
// file's name and path in it, chosen by the page (Content-Disposition, the
// URL), are quoted: a name cannot break the note's line or pass for
// Tether's own words.
type downloads struct {
	guard    *policy.Guard
	timeline *timeline.Store // nil: not recorded
	// decide calls the extension (the broker's Call).
	decide func(ctx context.Context, profile string, method protocol.Method, params, result any, timeout time.Duration) error
	log    *slog.Logger
	now    func() time.Time

	mu     sync.Mutex
	calls  map[tabKey]*lastCall
	swept  time.Time           // when callEnded last forgot idle tabs
	notes  map[string][]string // session → notes for its next result
	judged map[tabKey]judged   // by profile and download id (tab = download id)
	// early holds ends that came while their start was still being judged
	// (each frame is handled on its own goroutine; a download that ended
	// before the extension could pause it sends both at once).
	early map[tabKey]earlyEnd
}

// earlyEnd is an end whose start was not judged yet.
type earlyEnd struct {
	dl   protocol.Download
	when time.Time
}

// earlyKept bounds the ends waiting for their start (a user's own
// download's end never finds one); they go after forgetAfter.
const earlyKept = 100

func newDownloads(guard *policy.Guard, tl *timeline.Store, decide func(ctx context.Context, profile string, method protocol.Method, params, result any, timeout time.Duration) error, log *slog.Logger) *downloads {
	return &downloads{guard: guard, timeline: tl, decide: decide, log: log, now: time.Now,
		calls: map[tabKey]*lastCall{}, notes: map[string][]string{}, judged: map[tabKey]judged{}, early: map[tabKey]earlyEnd{}}
}

// forgetAfter is how long a tab without a call is remembered; callEnded
// looks for such tabs at most every forgetSweep (a sweep walks every tab
// known: never on each call).
const (
	forgetAfter = time.Minute
	forgetSweep = 10 * time.Second
)

// callStarted and callEnded track the tool calls on each tab.
func (d *downloads) callStarted(profile string, tab int, client, session string) {
	if d == nil || profile == "" || tab <= 0 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	k := tabKey{profile, tab}
	c := d.calls[k]
	if c == nil {
		c = &lastCall{}
		d.calls[k] = c
	}
	c.client, c.session = client, session
	c.running++
}

func (d *downloads) callEnded(profile string, tab int) {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	if c := d.calls[tabKey{profile, tab}]; c != nil {
		if c.running > 0 {
			c.running--
		}
		c.ended = now
	}
	if now.Sub(d.swept) < forgetSweep {
		return
	}
	// Forget tabs idle for long.
	d.swept = now
	for k, c := range d.calls {
		if c.running == 0 && now.Sub(c.ended) > forgetAfter {
			delete(d.calls, k)
		}
	}
}

// callOf is the tool call a download on the tab belongs to: one running,
// or one that ended within downloadWindow.
func (d *downloads) callOf(profile string, tab int) (lastCall, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := d.calls[tabKey{profile, tab}]
	if c == nil || c.running == 0 && d.now().Sub(c.ended) > downloadWindow {
		return lastCall{}, false
	}
	return *c, true
}

func (d *downloads) note(session, text string) {
	if session == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := append(d.notes[session], text)
	if len(n) > notesKept {
		n = n[len(n)-notesKept:]
	}
	d.notes[session] = n
}

// take returns and forgets the notes for session's next result.
func (d *downloads) take(session string) string {
	if d == nil || session == "" {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.notes[session]
	delete(d.notes, session)
	return strings.Join(n, "\n")
}

// downloadName is a download's file name (not its path): Chrome's, else
// the URL's last segment.
func downloadName(dl protocol.Download) string {
	if dl.Filename != "" {
		return filepath.Base(dl.Filename)
	}
	if u, err := url.Parse(dl.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
		if b := path.Base(u.Path); b != "/" && b != "." {
			return b
		}
	}
	return "(not named yet)"
}

// downloadSize is a download's size for people: total when known, else
// what was received.
func downloadSize(dl protocol.Download) string {
	n := dl.Total
	if dl.State == "complete" || n < 0 {
		n = dl.Received
	}
	return tmcp.ByteSize(n)
}

// summary is the timeline's and the approval's view: name and size.
func downloadSummary(dl protocol.Download) string {
	s := fmt.Sprintf("file=%q", downloadName(dl))
	if dl.Total >= 0 || dl.State == "complete" {
		s += " size=" + downloadSize(dl)
	}
	return s
}

// handle is the broker's OnDownload handler.
func (d *downloads) handle(profile string, ev protocol.DownloadEvent) {
	switch ev.Event {
	case protocol.DownloadStarted:
		d.started(profile, ev)
	case protocol.DownloadEnded:
		d.ended(profile, ev.Download)
	}
}

const decideTimeout = 10 * time.Second

func (d *downloads) started(profile string, ev protocol.DownloadEvent) {
	dl := ev.Download
	c, ok := d.callOf(profile, dl.Tab)
	if !ok {
		// No tool call on the tab lately: the user's own download.
		if ev.Paused {
			d.act(profile, dl, "resume")
		}
		return
	}
	var sites []string
	if ev.Site != "" {
		sites = []string{ev.Site}
	}
	e := timeline.Entry{CallID: newCallID(), Time: d.now(), Client: c.client, Profile: profile, Tab: dl.Tab,
		Tool: downloadTool, Args: downloadSummary(dl), Class: string(policy.Download), Site: ev.Site}
	pc := policy.Call{ID: e.CallID, Tool: downloadTool, Class: policy.Download, Client: c.client,
		Profile: profile, Tab: dl.Tab, Sites: sites, Summary: e.Args}
	pc.Held = func(r policy.Request) {
		state := "is paused"
		if !ev.Paused {
			// It ended (a data: URL, a small file) before the extension
			// could pause it: a refusal removes its file instead.
			state = "already finished downloading, and its file is removed if they refuse"
		}
		d.note(c.session, fmt.Sprintf("Tab %d: download #%d %q %s: the user's policy asks them to approve it in Tether. A later result says what they answered.", dl.Tab, dl.ID, downloadName(dl), state))
		if d.timeline != nil {
			d.timeline.Started(e)
			d.timeline.Held(e, timeline.Hold{Sites: r.Sites, Since: r.Since, Deadline: r.Deadline})
		}
	}
	v := d.guard.Check(context.Background(), pc)
	if v.AnsweredBy != "" && d.timeline != nil {
		d.timeline.Answered(e, v.Answer, v.AnsweredBy)
	}
	e.Decision = v.Decision
	var j judged
	if v.Allow {
		now := dl
		if ev.Paused {
			if got, err := d.act(profile, dl, "resume"); err == nil {
				now = got
			}
		}
		where := "its path is not chosen yet"
		if now.Filename != "" {
			where = fmt.Sprintf("saving to %q", now.Filename)
		}
		d.note(c.session, fmt.Sprintf("Tab %d: download #%d %q allowed, %s; browser_network show: downloads id: %d waits for it.", dl.Tab, dl.ID, downloadName(now), where, dl.ID))
		e.Outcome = timeline.OK
		j = judged{entry: e, session: c.session}
	} else {
		_, err := d.act(profile, dl, "cancel")
		what := "cancelled and its partial file removed"
		if err != nil {
			what = "to be cancelled, but the browser could not be reached (" + err.Error() + "): it stays paused in Chrome"
		}
		d.note(c.session, fmt.Sprintf("Tab %d: download #%d %q was not allowed (%s): %s. Do not retry it; ask the user if it is needed.", dl.Tab, dl.ID, downloadName(dl), v.Decision, what))
		e.Outcome = timeline.Outcome(v.Outcome)
		j = judged{entry: e, session: c.session, denied: true}
	}
	d.record(e)
	d.judge(profile, dl.ID, j)
}

// judge keeps the judgement of download id until it ends, or, when its
// end came while it was being judged, records that end at once.
func (d *downloads) judge(profile string, id int, j judged) {
	k := tabKey{profile, id}
	d.mu.Lock()
	end, ok := d.early[k]
	delete(d.early, k)
	d.judged[k] = j
	d.mu.Unlock()
	if ok {
		d.ended(profile, end.dl)
	}
}

// act resumes or cancels a paused download.
func (d *downloads) act(profile string, dl protocol.Download, action string) (protocol.Download, error) {
	var got protocol.Download
	ctx, cancel := context.WithTimeout(context.Background(), decideTimeout)
	defer cancel()
	err := d.decide(ctx, profile, protocol.MethodDownloadDecide, &protocol.DownloadDecideParams{ID: dl.ID, Action: action}, &got, decideTimeout)
	if err != nil {
		d.log.Warn("download decision not applied", "profile", profile, "tab", dl.Tab, "action", action, "err", err)
	}
	return got, err
}

// ended records the end of a download the daemon allowed.
func (d *downloads) ended(profile string, dl protocol.Download) {
	k := tabKey{profile, dl.ID}
	d.mu.Lock()
	j, ok := d.judged[k]
	delete(d.judged, k)
	if !ok {
		d.keepEarly(k, dl)
	}
	d.mu.Unlock()
	if !ok || j.denied {
		return
	}
	e := j.entry
	e.CallID, e.Time, e.Args = newCallID(), d.now(), downloadSummary(dl)
	e.Duration = e.Time.Sub(j.entry.Time)
	if dl.State == "complete" {
		e.Outcome, e.Decision = timeline.OK, "complete"
		d.note(j.session, fmt.Sprintf("Tab %d: download #%d complete: %q (%s).", dl.Tab, dl.ID, dl.Filename, downloadSize(dl)))
	} else {
		e.Outcome, e.Decision, e.Error = timeline.Error, "interrupted", dl.Error
		d.note(j.session, fmt.Sprintf("Tab %d: download #%d %q was interrupted (%s).", dl.Tab, dl.ID, downloadName(dl), tmcp.OneLine(dl.Error)))
	}
	d.record(e)
}

// keepEarly holds an end whose start may still be being judged; d.mu is held.
func (d *downloads) keepEarly(k tabKey, dl protocol.Download) {
	now := d.now()
	for ek, e := range d.early {
		if now.Sub(e.when) > forgetAfter {
			delete(d.early, ek)
		}
	}
	if len(d.early) < earlyKept {
		d.early[k] = earlyEnd{dl: dl, when: now}
	}
}

func (d *downloads) record(e timeline.Entry) {
	if d.timeline == nil {
		return
	}
	if _, err := d.timeline.Record(context.Background(), e); err != nil {
		d.log.Error("timeline record failed", "tool", downloadTool, "err", err)
	}
}
