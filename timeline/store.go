// Package timeline records every tool call the AI makes — when, which
// client, which profile and tab, which tool, a redacted summary of its
// arguments, how long it took and how it ended — in an embedded SQLite
// database (timeline.db in the config dir, mode 0600), and streams the
// records live to subscribers such as the tray's window.
//
// Rows are written off the call path: Record publishes the live event and
// queues the row for one writer goroutine, which stores what is queued in
// batches (one transaction each; it waits Options.Linger for more rows
// before it commits, unless a query waits). When the queue is full, Record drops the
// row rather than wait, and the writer stores a gap row ("N calls not
// recorded", outcome Unrecorded) once it has caught up. Close stores
// everything queued; a crash loses at most what was not yet committed.
//
// Retention: the newest Options.MaxRows rows (10 000) are kept, and none
// older than Options.MaxAge (30 days); older rows are deleted when the store
// opens and, by the writer, after every 100 rows it stores.
//
// What is typed (browser_type's text) and code run in pages
// (browser_evaluate's expression) are never stored, only their length: the
// daemon cannot tell whether a field is a password field.
package timeline

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/tether-browser/tether/config"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go
)

// Outcome is how a call ended.
type Outcome string

// The outcomes.
const (
	// OK: the tool ran and succeeded.
	OK Outcome = "ok"
	// Error: the tool ran and returned an error (Entry.Error says which).
	Error Outcome = "error"
	// Refused: a deny rule of the policy refused it.
	Refused Outcome = "refused"
	// Denied: a confirm rule held it and it was not approved.
	Denied Outcome = "denied"
	// Paused: AI access was paused.
	Paused Outcome = "paused"
	// Unrecorded: not a call but a gap: Entry.Args says how many calls
	// ended while the timeline's queue was full and were not stored.
	Unrecorded Outcome = "unrecorded"
	// Ignored: not a call but a late answer to one already decided (a
	// native approval dialog answered after the window's queue or the
	// timeout); Entry.Decision says so. It changed nothing.
	Ignored Outcome = "ignored"
	// Interrupted: a call that acts (its class is not read) was running,
	// or waiting for the user's answer, when the daemon stopped without
	// ending it (it crashed or was killed); whether it acted is unknown.
	// Its row is stored as it starts and given this outcome when the
	// timeline is next opened.
	Interrupted Outcome = "interrupted"
	// running is the stored outcome of a call that acts while it runs:
	// never shown (queries leave it out), it becomes Interrupted if the
	// call never ends, and is replaced by the call's row when it does.
	running Outcome = "running"
)

// interruptedError is the Error of an Interrupted row (short: the CLI's
// outcome column shows 80 characters). Tether stopped: it crashed, was
// killed, or its drain before a stop ended before the call did.
const interruptedError = "Tether stopped mid-call; it may have acted: check the page"

// readClass is the policy class of calls that change nothing; only the
// others get a row as they start (Interrupted).
const readClass = "read"

// Entry is one tool call on the timeline.
type Entry struct {
	// ID increases with every record; 0 until recorded.
	ID int64 `json:"id"`
	// CallID is the call's id, given by the daemon when it first saw the
	// call and the same in every live event about it ("" for rows recorded
	// before call ids existed). A late answer's "ignored" row carries the
	// id of the call it answered.
	CallID string `json:"callId,omitempty"`
	// Time is when the call arrived.
	Time time.Time `json:"time"`
	// Client is the MCP client's name from its clientInfo, e.g. "claude-ai".
	Client string `json:"client"`
	// Token is the named token the client authenticated with (tether
	// token add; remote mode), "" for the local MCP token.
	Token string `json:"token,omitempty"`
	// Profile is the browser profile's slug, when known.
	Profile string `json:"profile,omitempty"`
	// Tab is the tab's number, when known.
	Tab int `json:"tab,omitempty"`
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Args summarizes the arguments, secrets redacted (see Summarize).
	Args string `json:"args"`
	// Class is the tool's policy class (read, navigate, interact, sensitive).
	Class string `json:"class,omitempty"`
	// Site is the origin the policy judged, when known.
	Site string `json:"site,omitempty"`
	// Decision says how the guard decided, e.g. "allow (default for read
	// actions)" or "confirm (…): denied by the user".
	Decision string `json:"decision,omitempty"`
	// Duration is how long the call took, approval wait included.
	Duration time.Duration `json:"durationNs"`
	// RTT is the round-trip time of the profile's link to Tether as the
	// call ended (0: unknown).
	RTT time.Duration `json:"rttNs,omitempty"`
	// Outcome is how it ended.
	Outcome Outcome `json:"outcome"`
	// Error is the tool's error text, shortened, for Error outcomes.
	Error string `json:"error,omitempty"`

	// replaces is the ID of the row stored as this call started (its
	// outcome running), which the writer deletes as it stores this one.
	replaces int64
}

// Options configure a Store.
type Options struct {
	// MaxRows is how many rows are kept (10 000).
	MaxRows int
	// MaxAge is how long rows are kept (30 days).
	MaxAge time.Duration
	// Now is the clock (time.Now).
	Now func() time.Time
	// QueueSize is how many rows may wait for the writer (4096); a row
	// recorded when that many wait is dropped and counted.
	QueueSize int
	// BatchSize is the most rows the writer stores in one transaction
	// (256).
	BatchSize int
	// Linger is how long the writer waits, once the queue is empty, for
	// more rows to join the batch it holds before it commits (10 ms; < 0:
	// no wait). Calls that end in quick succession then share one
	// transaction, which costs far less CPU than one each; Flush (and so
	// every query) ends the wait at once. A crash loses at most the batch
	// the writer holds: what ended in the last Linger.
	Linger time.Duration
	// Logger gets the writer's warnings (dropped rows) and errors
	// (discarded when nil).
	Logger *slog.Logger
}

// Store is the timeline database. Its methods are safe for concurrent use.
type Store struct {
	db   *sql.DB
	path string
	opts Options
	log  *slog.Logger
	bus  bus
	mu   sync.Mutex
	// running are the calls started and not yet recorded, by call id.
	running map[string]*runningCall

	// The writer's queue. qmu orders ID assignment, events and sends, and
	// sends with Close.
	qmu    sync.Mutex
	q      chan op
	closed bool
	lastID int64 // the last ID given
	// lastQueued is the last row's ID given by this store (lastID may
	// skip ahead, see resyncID): Flush waits for it.
	lastQueued int64
	// orphans are the started rows (Started) of calls whose rows were
	// dropped: deleted with the next gap row (appendGap), once the
	// writer has caught up, so after they were stored.
	orphans []int64
	// pendingRemovals are the started rows the writer deletes in its next
	// commit: orphans (after a gap row), and rows of calls now held
	// (writer only).
	pendingRemovals []int64
	done            chan struct{}
	// flushNow ends the writer's wait for more rows (Options.Linger): a
	// Flush is waiting.
	flushNow chan struct{}
	// insert is the writer's prepared INSERT (insertRow).
	insertStmt *sql.Stmt
	// How far the writer got: progress is closed and replaced at every
	// commit.
	pmu        sync.Mutex
	writtenID  int64
	progress   chan struct{}
	sincePrune int // rows stored since the last prune (writer only)
	counters
	closeOnce sync.Once
	closeErr  error
}

// runningCall is a call started and not yet recorded.
type runningCall struct {
	entry Entry
	held  bool // waiting for the user's answer
	// row is the ID of the row stored as it started (0: none, a read).
	row int64
}

const schema = `
CREATE TABLE IF NOT EXISTS calls (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	time_us     INTEGER NOT NULL,
	client      TEXT NOT NULL DEFAULT '',
	profile     TEXT NOT NULL DEFAULT '',
	tab         INTEGER NOT NULL DEFAULT 0,
	tool        TEXT NOT NULL,
	args        TEXT NOT NULL DEFAULT '',
	class       TEXT NOT NULL DEFAULT '',
	site        TEXT NOT NULL DEFAULT '',
	decision    TEXT NOT NULL DEFAULT '',
	duration_us INTEGER NOT NULL DEFAULT 0,
	outcome     TEXT NOT NULL,
	error       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS calls_time ON calls(time_us);
`

// schemaVersion is the user_version of the current schema: 1 the first
// table, 2 added call_id, 3 token and rtt_us. Older files are migrated in place on Open, their
// rows kept (call_id ”); a binary of an older version still reads and
// writes a migrated file, since it names its columns.
const schemaVersion = 3

// migrate brings the calls table to schemaVersion.
func migrate(db *sql.DB) error {
	for _, col := range []string{"call_id TEXT NOT NULL DEFAULT ''", "token TEXT NOT NULL DEFAULT ''", "rtt_us INTEGER NOT NULL DEFAULT 0"} {
		name, _, _ := strings.Cut(col, " ")
		var has int
		if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info('calls') WHERE name = ?`, name).Scan(&has); err != nil {
			return err
		}
		if has == 0 {
			if _, err := db.Exec(`ALTER TABLE calls ADD COLUMN ` + col); err != nil {
				return err
			}
		}
	}
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v < schemaVersion {
		_, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", schemaVersion))
		return err
	}
	return nil
}

// Open opens (creating, mode 0600) the timeline database at path and
// applies the retention limits.
func Open(path string, opts Options) (*Store, error) {
	if opts.MaxRows <= 0 {
		opts.MaxRows = 10000
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = 30 * 24 * time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = 4096
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	if opts.Linger == 0 {
		opts.Linger = DefaultLinger
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	// Create the file first so that it, and the journal files SQLite
	// derives from it, get mode 0600.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open timeline %s: %w%s", path, err, config.PermissionHint(err))
	}
	f.Close()
	dsn := "file:" + uriPath(path) + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open timeline %s: %w", path, err)
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("timeline %s is not a Tether timeline, or is damaged: rename it (Tether then starts a new one) and keep it, since sqlite3's .recover may get its rows back: %w", path, err)
	}
	if err := migrate(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("update timeline %s to this version's format: %w", path, err)
	}
	// Calls that acts stored as they started and never ended: the daemon
	// that ran them stopped without recording them (one daemon per config
	// dir, and it opens the timeline as it starts).
	if n, err := markInterrupted(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("timeline %s: mark the calls a stopped daemon left running: %w", path, err)
	} else if n > 0 {
		opts.Logger.Warn("timeline: calls the last daemon left running are marked interrupted", "calls", n)
	}
	// The writer and the queries each keep their connection open.
	db.SetMaxIdleConns(4)
	s := &Store{db: db, path: path, opts: opts, log: opts.Logger, running: map[string]*runningCall{},
		q: make(chan op, opts.QueueSize), done: make(chan struct{}), progress: make(chan struct{}), flushNow: make(chan struct{}, 1)}
	if _, err := s.prune(context.Background(), db); err != nil {
		db.Close()
		return nil, err
	}
	if s.lastID, err = maxID(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("read timeline %s: %w", path, err)
	}
	s.writtenID, s.lastQueued = s.lastID, s.lastID
	if s.insertStmt, err = db.Prepare(insertRow); err != nil {
		db.Close()
		return nil, fmt.Errorf("timeline %s: %w", path, err)
	}
	go s.write()
	return s, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close stores every row queued, stops the writer and closes the
// database; Record fails with ErrClosed after it. Calling it again returns
// the first call's error.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.qmu.Lock()
		s.closed = true
		close(s.q)
		s.qmu.Unlock()
		<-s.done
		st := s.Stats()
		s.log.Debug("timeline closed", "written", st.Written, "batches", st.Batches, "dropped", st.Dropped)
		s.insertStmt.Close()
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}

// Subscribe returns a subscription to live events with a buffer of n (64
// when n < 1). Publishing never blocks: when the buffer is full the event is
// dropped and the next one delivered says how many were.
func (s *Store) Subscribe(n int) *Subscription { return s.bus.subscribe(n) }

// Started announces a call that runs now; with a CallID, it counts among
// Running until its Record. A call that acts (Class is not "read") is
// also stored as it starts, out of sight, so that if the daemon dies
// before the call ends the timeline still shows it, Interrupted.
func (s *Store) Started(e Entry) {
	if e.CallID != "" {
		r := &runningCall{entry: e}
		if actsClass(e.Class) {
			r.row = s.enqueueStarted(startedRow(e, s.opts.Now))
		}
		s.mu.Lock()
		s.running[e.CallID] = r
		s.mu.Unlock()
	}
	s.bus.publish(Event{Kind: CallStarted, Entry: e})
}

// Held announces a started call now waiting for the user's answer; it
// leaves Running until Answered. Its started row (Started) is deleted: a
// held call has not acted, so a daemon that stops meanwhile leaves no
// Interrupted row for it.
func (s *Store) Held(e Entry, h Hold) {
	s.mu.Lock()
	if r, ok := s.running[e.CallID]; ok {
		r.held = true
		if r.row != 0 && s.enqueueRemove(r.row) {
			r.row = 0
		}
	}
	s.mu.Unlock()
	s.bus.publish(Event{Kind: CallHeld, Entry: e, Hold: &h})
}

// Answered announces the answer to a held call: answer is "allow_once",
// "always_allow_site", "deny", "timeout" or "cancelled", by where it came
// from ("window", "cli", "dialog", "timeout", "pause", "cancelled"). A
// call allowed to run, which acts, is stored as started again (Started).
func (s *Store) Answered(e Entry, answer, by string) {
	s.mu.Lock()
	if r, ok := s.running[e.CallID]; ok {
		r.held = false
		if allows := answer == "allow_once" || answer == "always_allow_site"; allows && r.row == 0 && actsClass(r.entry.Class) {
			r.row = s.enqueueStarted(startedRow(r.entry, s.opts.Now))
		}
	}
	s.mu.Unlock()
	s.bus.publish(Event{Kind: CallAnswered, Entry: e, Answer: answer, AnsweredBy: by})
}

// actsClass reports whether calls of a policy class may act (all but read).
func actsClass(class string) bool { return class != "" && class != readClass }

// startedRow is the row stored for e as it starts (Started).
func startedRow(e Entry, now func() time.Time) Entry {
	e.Outcome = running
	if e.Time.IsZero() {
		e.Time = now()
	}
	e.Time = time.UnixMicro(e.Time.UnixMicro())
	return e
}

// Running returns the calls started and not yet recorded, oldest first,
// except those waiting for the user's answer. It is the daemon's own
// account, not derived from the live stream, so it misses nothing.
func (s *Store) Running() []Entry {
	s.mu.Lock()
	out := make([]Entry, 0, len(s.running))
	for _, r := range s.running {
		if !r.held {
			out = append(out, r.entry)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Entry) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return strings.Compare(a.CallID, b.CallID)
	})
	return out
}

// Record publishes e as CallRecorded and queues it for the writer, and
// returns it as published: with its ID (the row's, once stored), Time and
// Duration in whole microseconds, Error shortened. It never waits for the
// database: when Options.QueueSize rows already wait, the row is dropped
// (ID 0), counted in Stats.Dropped and told of by a gap row. Errors:
// ErrClosed after Close (ctx is not used).
func (s *Store) Record(ctx context.Context, e Entry) (Entry, error) {
	if e.Time.IsZero() {
		e.Time = s.opts.Now()
	}
	e.Error = ShortError(e.Error)
	if e.CallID != "" && e.Outcome != Ignored {
		// The call ends here, whether or not the row can be written.
		s.mu.Lock()
		if r, ok := s.running[e.CallID]; ok {
			e.replaces = r.row
		}
		delete(s.running, e.CallID)
		s.mu.Unlock()
	}
	e.Time = time.UnixMicro(e.Time.UnixMicro())
	e.Duration = e.Duration.Truncate(time.Microsecond)
	return s.enqueue(e)
}

// Prune stores what is queued, then deletes the rows beyond the retention
// limits and returns how many. The writer prunes by itself; this is for
// tests and tools.
func (s *Store) Prune(ctx context.Context) (int64, error) {
	if err := s.Flush(ctx); err != nil {
		return 0, err
	}
	return s.prune(ctx, s.db)
}

// prune deletes the rows beyond the retention limits with x (the
// database or the writer's transaction).
func (s *Store) prune(ctx context.Context, x interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}) (int64, error) {
	cutoff := s.opts.Now().Add(-s.opts.MaxAge).UnixMicro()
	res, err := x.ExecContext(ctx, `DELETE FROM calls WHERE time_us < ? OR id <= (
		SELECT id FROM calls ORDER BY id DESC LIMIT 1 OFFSET ?)`, cutoff, s.opts.MaxRows)
	if err != nil {
		return 0, fmt.Errorf("prune the timeline: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// Filter selects timeline rows. Zero fields match everything.
type Filter struct {
	// Client, Profile and Outcome match exactly.
	Client  string
	Profile string
	Outcome Outcome
	// BeforeID returns rows older than this ID (paging), when > 0.
	BeforeID int64
	// Limit caps the rows (100 when 0; Export: no cap when 0).
	Limit int
}

func (f Filter) where() (string, []any) {
	// The rows of calls still running are Running's, not the timeline's.
	conds := []string{"outcome != '" + string(running) + "'"}
	var args []any
	if f.Client != "" {
		conds, args = append(conds, "client = ?"), append(args, f.Client)
	}
	if f.Profile != "" {
		conds, args = append(conds, "profile = ?"), append(args, f.Profile)
	}
	if f.Outcome != "" {
		conds, args = append(conds, "outcome = ?"), append(args, string(f.Outcome))
	}
	if f.BeforeID > 0 {
		conds, args = append(conds, "id < ?"), append(args, f.BeforeID)
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

const columns = `id, time_us, client, profile, tab, tool, args, class, site, decision, duration_us, outcome, error, call_id, token, rtt_us`

// Query returns the rows matching f, newest first, after the rows
// recorded before it are stored (Flush).
func (s *Store) Query(ctx context.Context, f Filter) ([]Entry, error) {
	if err := s.Flush(ctx); err != nil {
		return nil, err
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	where, args := f.where()
	rows, err := s.db.QueryContext(ctx, "SELECT "+columns+" FROM calls"+where+" ORDER BY id DESC LIMIT ?", append(args, f.Limit)...)
	if err != nil {
		return nil, fmt.Errorf("query the timeline: %w", err)
	}
	defer rows.Close()
	out := []Entry{}
	for rows.Next() {
		e, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func scan(rows *sql.Rows) (Entry, error) {
	var e Entry
	var t, d, rtt int64
	var outcome string
	if err := rows.Scan(&e.ID, &t, &e.Client, &e.Profile, &e.Tab, &e.Tool, &e.Args, &e.Class, &e.Site, &e.Decision, &d, &outcome, &e.Error, &e.CallID, &e.Token, &rtt); err != nil {
		return e, fmt.Errorf("read the timeline: %w", err)
	}
	e.Time, e.Duration, e.Outcome = time.UnixMicro(t), time.Duration(d)*time.Microsecond, Outcome(outcome)
	e.RTT = time.Duration(rtt) * time.Microsecond
	return e, nil
}

// Export writes the rows matching f as JSON Lines, one Entry per line,
// oldest first (f.Limit keeps the newest that many), and returns how many;
// like Query, it flushes first.
func (s *Store) Export(ctx context.Context, w io.Writer, f Filter) (int, error) {
	if err := s.Flush(ctx); err != nil {
		return 0, err
	}
	where, args := f.where()
	q := "SELECT " + columns + " FROM calls" + where + " ORDER BY id ASC"
	if f.Limit > 0 {
		q = "SELECT * FROM (SELECT " + columns + " FROM calls" + where + " ORDER BY id DESC LIMIT ?) ORDER BY id ASC"
		args = append(args, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("export the timeline: %w", err)
	}
	defer rows.Close()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	n := 0
	for rows.Next() {
		e, err := scan(rows)
		if err != nil {
			return n, err
		}
		if err := enc.Encode(e); err != nil {
			return n, fmt.Errorf("export the timeline: %w", err)
		}
		n++
	}
	return n, rows.Err()
}

// ReadJSONL reads entries written by Export.
func ReadJSONL(r io.Reader) ([]Entry, error) {
	dec := json.NewDecoder(r)
	var out []Entry
	for {
		var e Entry
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("read timeline line %d: %w", len(out)+1, err)
		}
		out = append(out, e)
	}
}

// Facets are the distinct values of the timeline's filter columns.
type Facets struct {
	// Clients and Profiles are sorted; empty values are left out.
	Clients  []string
	Profiles []string
}

// Facets returns the clients and profiles the timeline holds rows for.
func (s *Store) Facets(ctx context.Context) (Facets, error) {
	var f Facets
	if err := s.Flush(ctx); err != nil {
		return f, err
	}
	for _, c := range []struct {
		col string
		out *[]string
	}{{"client", &f.Clients}, {"profile", &f.Profiles}} {
		rows, err := s.db.QueryContext(ctx, "SELECT DISTINCT "+c.col+" FROM calls WHERE "+c.col+" != '' AND outcome != '"+string(running)+"' ORDER BY "+c.col)
		if err != nil {
			return Facets{}, fmt.Errorf("read the timeline's %ss: %w", c.col, err)
		}
		*c.out = []string{}
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return Facets{}, err
			}
			*c.out = append(*c.out, v)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return Facets{}, err
		}
	}
	return f, nil
}

// uriPath escapes path for a SQLite URI filename (https://sqlite.org/uri.html):
// SQLite percent-decodes the path and ends it at the first '?' or '#', so a
// config dir with "#", "?" or "%" in its name (a user name on Windows, a
// folder a user named) would otherwise open another file.
func uriPath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}
