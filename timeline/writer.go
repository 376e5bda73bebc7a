package timeline

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// ErrClosed is Record's error once the store is closed.
var ErrClosed = errors.New("the timeline is closed")

// Stats is the writer's account since Open (Store.Stats).
type Stats struct {
	// Queued is how many rows wait for the writer now.
	Queued int
	// Written is how many rows the writer has stored, gap rows included.
	Written int64
	// Batches is how many transactions it has committed.
	Batches int64
	// Dropped is how many calls were not recorded: the queue was full when
	// they ended, or their batch could not be written. Gap rows say so on
	// the timeline itself.
	Dropped int64
}

// op is one item of the writer's queue: a row, or (tests only) a func the
// writer runs between batches.
type op struct {
	entry Entry
	run   func()
	// remove is a started row to delete (a call held for the user's
	// answer: it has not acted).
	remove int64
}

// pruneEvery is how many rows the writer stores between prunes.
const pruneEvery = 100

// DefaultLinger is Options.Linger's default: short next to what a person
// notices in the window (which gets the live events before the row is
// stored anyway), long next to a no-op call (under a millisecond).
const DefaultLinger = 10 * time.Millisecond

const insertRow = `INSERT INTO calls
	(id, time_us, client, profile, tab, tool, args, class, site, decision, duration_us, outcome, error, call_id, token, rtt_us)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// markInterrupted gives the rows of calls left running (a daemon that
// stopped without ending them) the outcome Interrupted, and says how many.
func markInterrupted(db *sql.DB) (int64, error) {
	res, err := db.Exec(`UPDATE calls SET outcome = ?, error = ? WHERE outcome = ?`, string(Interrupted), interruptedError, string(running))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// enqueueStarted gives e (a call that acts, as it starts) the next ID and
// queues it for the writer, unpublished: the live stream has CallStarted.
// It returns the ID, 0 when the queue is full (the call is then recorded
// only when it ends) or the store is closed.
func (s *Store) enqueueStarted(e Entry) int64 {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closed || len(s.q) == cap(s.q) {
		return 0
	}
	s.lastID++
	e.ID, s.lastQueued = s.lastID, s.lastID
	s.q <- op{entry: e}
	return e.ID
}

// enqueueRemove queues the deletion of the started row id, unless the
// queue is full (the row then becomes Interrupted if the daemon stops
// before the call ends, and is replaced when it ends).
func (s *Store) enqueueRemove(id int64) bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closed || len(s.q) == cap(s.q) {
		return false
	}
	s.q <- op{remove: id}
	return true
}

// enqueue gives e the next ID, publishes it and queues it for the writer,
// all under qmu so that IDs, events and rows keep one order. It never
// blocks: when the queue is full the row is counted as dropped and the
// event goes out with ID 0.
func (s *Store) enqueue(e Entry) (Entry, error) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closed {
		return e, ErrClosed
	}
	// Only senders hold qmu and the writer only takes, so a queue with
	// room now still has room at the send.
	if len(s.q) == cap(s.q) {
		s.dropped.Add(1)
		s.droppedTotal.Add(1)
		if e.replaces != 0 {
			s.orphans = append(s.orphans, e.replaces) // the call ended: not interrupted
		}
		e.replaces = 0
		s.bus.publish(Event{Kind: CallRecorded, Entry: e})
		return e, nil
	}
	s.lastID++
	e.ID, s.lastQueued = s.lastID, s.lastID
	s.bus.publish(Event{Kind: CallRecorded, Entry: e})
	s.q <- op{entry: e}
	return e, nil
}

// write is the writer goroutine: it takes the first row waiting, then
// every row queued up to Options.BatchSize, waiting up to Options.Linger
// for more once the queue is empty (unless a Flush waits), and stores
// them in one transaction; until Close closes the queue.
func (s *Store) write() {
	defer close(s.done)
	batch := make([]Entry, 0, s.opts.BatchSize)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	for o := range s.q {
		batch = batch[:0]
		open, lingering := true, false
	collect:
		for {
			switch {
			case o.run != nil:
				o.run()
			case o.remove != 0:
				s.pendingRemovals = append(s.pendingRemovals, o.remove) // deleted with this batch
			default:
				batch = append(batch, o.entry)
			}
			if len(batch) >= s.opts.BatchSize {
				break
			}
			select {
			case o, open = <-s.q:
				if !open {
					break collect
				}
				continue
			default:
			}
			if len(batch) == 0 || s.opts.Linger < 0 {
				break
			}
			if !lingering {
				linger.Reset(s.opts.Linger)
				lingering = true
			}
			select {
			case o, open = <-s.q:
				if !open {
					break collect
				}
			case <-linger.C:
				lingering = false
				break collect
			case <-s.flushNow:
				break collect
			}
		}
		if lingering {
			linger.Stop() // since Go 1.23 no stale tick can follow
		}
		// Caught up (or stopping): the calls that found the queue full are
		// told of, after the rows that were queued before them.
		s.commit(s.appendGap(batch))
		if !open {
			break
		}
	}
	s.commit(s.appendGap(nil))
}

// appendGap appends a row saying how many calls were not recorded since
// the last one, if any were and the queue is empty (the writer caught
// up: no queued row has a lower ID than the gap row gets), and publishes
// it.
func (s *Store) appendGap(batch []Entry) []Entry {
	s.qmu.Lock()
	if len(s.q) > 0 || s.dropped.Load() == 0 {
		s.qmu.Unlock()
		return batch
	}
	n := s.dropped.Swap(0)
	s.lastID++
	s.lastQueued = s.lastID
	calls := "calls"
	if n == 1 {
		calls = "call"
	}
	e := Entry{ID: s.lastID, Time: time.UnixMicro(s.opts.Now().UnixMicro()), Outcome: Unrecorded,
		Args: fmt.Sprintf("%d %s not recorded", n, calls), Decision: "the timeline fell behind: these calls ran but their rows were not stored"}
	s.pendingRemovals, s.orphans = append(s.pendingRemovals, s.orphans...), nil
	s.bus.publish(Event{Kind: CallRecorded, Entry: e})
	s.qmu.Unlock()
	s.log.Warn("timeline: calls not recorded", "calls", n, "dropped_total", s.droppedTotal.Load())
	return append(batch, e)
}

// commit stores rows in one transaction with one prepared statement,
// pruning every pruneEvery rows, then tells Flush how far it got. Rows it
// cannot store count as dropped, for the next gap row.
func (s *Store) commit(rows []Entry) {
	if len(rows) == 0 {
		if len(s.pendingRemovals) > 0 && s.insert(nil) == nil {
			s.pendingRemovals = nil
		}
		return
	}
	err := s.insert(rows)
	if err != nil {
		s.log.Error("timeline: rows not stored", "rows", len(rows), "err", err)
		var calls int64
		for _, e := range rows {
			n := int64(1)
			switch e.Outcome {
			case Unrecorded: // already counted in droppedTotal
				_, _ = fmt.Sscanf(e.Args, "%d", &n)
				s.droppedTotal.Add(-n)
			case running: // not a call's end: its Record row counts
				n = 0
			}
			calls += n
		}
		s.dropped.Add(calls)
		s.droppedTotal.Add(calls)
		s.resyncID()
	} else {
		s.written.Add(int64(len(rows)))
		s.batches.Add(1)
		s.pendingRemovals = nil
	}
	last := rows[len(rows)-1].ID
	s.pmu.Lock()
	s.writtenID = max(s.writtenID, last)
	close(s.progress)
	s.progress = make(chan struct{})
	s.pmu.Unlock()
}

func (s *Store) insert(rows []Entry) error {
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The statement is prepared once on each connection the writer uses
	// (database/sql keeps it), not once per transaction.
	stmt := tx.StmtContext(ctx, s.insertStmt)
	defer stmt.Close()
	// The rows stored as calls started that end in this batch: one that
	// is in the batch too (a call shorter than the writer's linger, most
	// of them) is never written; one stored by an earlier batch goes, with
	// the gap's orphans, in one DELETE for the batch.
	inBatch := map[int64]bool{}
	for _, e := range rows {
		if e.replaces != 0 {
			inBatch[e.replaces] = false // false: not seen in this batch (yet)
		}
	}
	for _, e := range rows {
		if _, ok := inBatch[e.ID]; ok && e.Outcome == running {
			inBatch[e.ID] = true
		}
	}
	replaced := make([]any, 0, len(s.pendingRemovals))
	for _, id := range s.pendingRemovals {
		replaced = append(replaced, id)
	}
	for _, e := range rows {
		if e.Outcome == running && inBatch[e.ID] {
			continue // its call's own row follows in this batch
		}
		if _, err := stmt.ExecContext(ctx, e.ID, e.Time.UnixMicro(), e.Client, e.Profile, e.Tab, e.Tool, e.Args, e.Class,
			e.Site, e.Decision, e.Duration.Microseconds(), string(e.Outcome), e.Error, e.CallID, e.Token, e.RTT.Microseconds()); err != nil {
			return err
		}
		if e.replaces != 0 && !inBatch[e.replaces] {
			replaced = append(replaced, e.replaces)
		}
	}
	for len(replaced) > 0 {
		n := min(len(replaced), 500) // within SQLite's bound on parameters
		q := "DELETE FROM calls WHERE id IN (?" + strings.Repeat(",?", n-1) + ")"
		if _, err := tx.ExecContext(ctx, q, replaced[:n]...); err != nil {
			return err
		}
		replaced = replaced[n:]
	}
	if s.sincePrune += len(rows); s.sincePrune >= pruneEvery {
		if _, err := s.prune(ctx, tx); err != nil {
			return err
		}
		s.sincePrune = 0
	}
	return tx.Commit()
}

// resyncID moves the next ID past every row in the file, in case another
// process wrote rows.
func (s *Store) resyncID() {
	id, err := maxID(s.db)
	if err != nil {
		return
	}
	s.qmu.Lock()
	s.lastID = max(s.lastID, id)
	s.qmu.Unlock()
}

// maxID is the highest ID the calls table has ever given.
func maxID(db *sql.DB) (int64, error) {
	var id int64
	err := db.QueryRow(`SELECT MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'calls'), 0),
		COALESCE((SELECT MAX(id) FROM calls), 0))`).Scan(&id)
	return id, err
}

// Flush waits until every row recorded before it is stored (or was found
// not storable, see Stats.Dropped). Queries flush first, so they see the
// calls that ended before them. Errors: ctx's.
func (s *Store) Flush(ctx context.Context) error {
	s.qmu.Lock()
	target := s.lastQueued
	s.qmu.Unlock()
	for {
		s.pmu.Lock()
		reached, progress := s.writtenID >= target, s.progress
		s.pmu.Unlock()
		if reached {
			return nil
		}
		select {
		case s.flushNow <- struct{}{}: // the writer commits without lingering
		default: // a nudge is already pending
		}
		select {
		case <-progress:
		case <-s.done:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("wait for the timeline's writer: %w", ctx.Err())
		}
	}
}

// Stats returns the writer's counts.
func (s *Store) Stats() Stats {
	return Stats{Queued: len(s.q), Written: s.written.Load(), Batches: s.batches.Load(), Dropped: s.droppedTotal.Load()}
}

// counters are the writer's atomics, embedded in Store.
type counters struct {
	dropped      atomic.Int64 // since the last gap row
	droppedTotal atomic.Int64
	written      atomic.Int64
	batches      atomic.Int64
}
