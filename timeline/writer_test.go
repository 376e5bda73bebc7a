package timeline

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hold stops s's writer until the returned func is called: rows recorded
// meanwhile stay queued.
func hold(s *Store) (release func()) {
	held, rel := make(chan struct{}), make(chan struct{})
	s.q <- op{run: func() { close(held); <-rel }}
	<-held
	return func() { close(rel) }
}

func count(t *testing.T, s *Store) int {
	t.Helper()
	rows, err := s.Query(context.Background(), Filter{Limit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

// TestWriterStoresWhatIsQueuedInBatches: rows queued while the writer is
// busy go into one transaction each BatchSize of them.
func TestWriterStoresWhatIsQueuedInBatches(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "timeline.db"), Options{BatchSize: 4})
	release := hold(s)
	for i := range 10 {
		if e, err := s.Record(ctx, entry(i, "c", "p", OK, time.Now())); err != nil || e.ID != int64(i+1) {
			t.Fatalf("record %d: ID %d, %v", i, e.ID, err)
		}
	}
	if st := s.Stats(); st.Queued != 10 || st.Written != 0 {
		t.Fatalf("while held: %+v", st)
	}
	release()
	if n := count(t, s); n != 10 {
		t.Fatalf("%d rows after Flush, want 10", n)
	}
	if st := s.Stats(); st.Batches != 3 || st.Written != 10 || st.Queued != 0 || st.Dropped != 0 {
		t.Fatalf("stats %+v; want 10 rows in 3 batches (4, 4, 2)", st)
	}
}

// TestWriterKeepsTheOrderOfRecords: a call's row and a late answer's
// "ignored" row for it are stored in the order recorded, with the IDs the
// live events carried, whichever batch they land in.
func TestWriterKeepsTheOrderOfRecords(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "timeline.db"), Options{BatchSize: 3})
	sub := s.Subscribe(100)
	release := hold(s)
	var want []string
	for i := range 5 {
		id := fmt.Sprintf("call%d", i)
		s.Started(Entry{CallID: id, Tool: "browser_file_upload"})
		for _, o := range []Outcome{Denied, Ignored} {
			if _, err := s.Record(ctx, Entry{CallID: id, Tool: "browser_file_upload", Outcome: o}); err != nil {
				t.Fatal(err)
			}
			want = append(want, id+":"+string(o))
		}
	}
	release()
	rows, err := s.Query(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := len(rows) - 1; i >= 0; i-- {
		got = append(got, rows[i].CallID+":"+string(rows[i].Outcome))
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("stored\n %v\nwant\n %v", got, want)
	}
	var evIDs []int64
	for len(sub.C) > 0 {
		if ev := <-sub.C; ev.Kind == CallRecorded {
			evIDs = append(evIDs, ev.Entry.ID)
		}
	}
	for i, r := range rows {
		if j := len(rows) - 1 - i; evIDs[j] != r.ID {
			t.Fatalf("event %d had ID %d, row has %d", j, evIDs[j], r.ID)
		}
	}
}

// TestFullQueueDropsAndWritesAGapRow: with the writer behind, Record
// neither blocks nor fails; the rows beyond the queue are counted, still
// go out as events, and a gap row tells of them once the writer caught
// up.
func TestFullQueueDropsAndWritesAGapRow(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "timeline.db"), Options{QueueSize: 4})
	sub := s.Subscribe(100)
	release := hold(s)
	for i := range 7 {
		e, err := s.Record(ctx, entry(i, "c", "p", OK, time.Now()))
		if err != nil {
			t.Fatal(err)
		}
		if dropped := e.ID == 0; dropped != (i >= 4) {
			t.Fatalf("row %d: ID %d", i, e.ID)
		}
	}
	if st := s.Stats(); st.Dropped != 3 || st.Queued != 4 {
		t.Fatalf("stats %+v; want 3 dropped, 4 queued", st)
	}
	if len(sub.C) != 7 {
		t.Fatalf("%d events, want one for every call", len(sub.C))
	}
	release()
	rows, err := s.Query(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 4 and a gap row: %+v", len(rows), rows)
	}
	gap := rows[0]
	if gap.Outcome != Unrecorded || gap.Args != "3 calls not recorded" || gap.ID != 5 {
		t.Fatalf("gap row %+v", gap)
	}
	for len(sub.C) > 1 {
		<-sub.C
	}
	if ev := <-sub.C; ev.Kind != CallRecorded || ev.Entry != gap {
		t.Fatalf("gap event %+v, want %+v", ev, gap)
	}
	// Caught up: the next row is stored again, and no second gap row.
	if _, err := s.Record(ctx, entry(8, "c", "p", OK, time.Now())); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s); n != 6 {
		t.Fatalf("%d rows, want 6", n)
	}
}

// TestCloseStoresEverythingQueued: a clean stop loses nothing, and a
// closed store refuses new rows.
func TestCloseStoresEverythingQueued(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "timeline.db")
	s, err := Open(path, Options{MaxRows: 5000})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3000
	for i := range n {
		if _, err := s.Record(ctx, entry(i, "c", "p", OK, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Written != n || st.Dropped != 0 {
		t.Fatalf("stats after Close %+v", st)
	}
	if _, err := s.Record(ctx, entry(0, "c", "p", OK, time.Now())); err != ErrClosed {
		t.Fatalf("Record after Close: %v", err)
	}
	s = open(t, path, Options{MaxRows: 5000})
	if got := count(t, s); got != n {
		t.Fatalf("%d rows after a clean stop, want %d", got, n)
	}
}

// killBatch is the batch size, and how many rows at most are waiting,
// in the child TestKillLosesAtMostTheLastBatch kills.
const killBatch = 64

// TestKillLosesAtMostTheLastBatch runs a child process (this test binary)
// that records rows as fast as it can, killBatch at a time, and kills it
// (SIGKILL on Unix) mid-run: the file passes SQLite's integrity check, every
// row the child saw stored is there, and the rows form an unbroken run
// from the first, so nothing but the batch in progress was lost.
func TestKillLosesAtMostTheLastBatch(t *testing.T) {
	if path := os.Getenv("TETHER_TIMELINE_KILL_CHILD"); path != "" {
		killChild(path)
		return
	}
	path := filepath.Join(t.TempDir(), "timeline.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillLosesAtMostTheLastBatch$", "-test.count=1")
	cmd.Env = append(os.Environ(), "TETHER_TIMELINE_KILL_CHILD="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	var queued, stored int
	read := func() bool {
		if !lines.Scan() {
			return false
		}
		if kind, n, ok := strings.Cut(lines.Text(), " "); ok {
			v, _ := strconv.Atoi(n)
			switch kind {
			case "queued":
				queued = v
			case "stored":
				stored = v
			}
		}
		return true
	}
	for stored < 3000 && read() {
	}
	if stored < 3000 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child stopped after %d rows", stored)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for read() {
	}
	_ = cmd.Wait()

	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
	var n, first, last int
	if err := db.QueryRow("SELECT COUNT(*), MIN(tab), MAX(tab) FROM calls").Scan(&n, &first, &last); err != nil {
		t.Fatal(err)
	}
	t.Logf("child queued %d, reported %d stored; the file has rows 1–%d", queued, stored, last)
	if first != 1 || n != last {
		t.Fatalf("rows %d–%d, %d of them: a hole", first, last, n)
	}
	if last < stored || last > queued {
		t.Fatalf("%d rows stored; the child had queued %d and seen %d stored", last, queued, stored)
	}
	if queued-last > killBatch {
		t.Fatalf("lost %d rows, more than a batch", queued-last)
	}
	db.Close()
	s := open(t, path, Options{})
	if e, err := s.Record(context.Background(), Entry{Tool: "browser_snapshot", Outcome: OK}); err != nil || e.ID <= int64(last) {
		t.Fatalf("record after the crash: ID %d, %v", e.ID, err)
	}
}

// killChild records rows numbered by Tab from 1 on, killBatch at a time,
// and reports each batch queued and stored on stdout, until killed.
func killChild(path string) {
	s, err := Open(path, Options{BatchSize: killBatch, MaxRows: 1 << 30})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	for i := 1; ; {
		fmt.Printf("queued %d\n", i+killBatch-1)
		for range killBatch {
			e := entry(i, "c", "p", OK, time.Now())
			e.Tab = i
			if _, err := s.Record(ctx, e); err != nil {
				os.Exit(1)
			}
			i++
		}
		if err := s.Flush(ctx); err != nil {
			os.Exit(1)
		}
		fmt.Printf("stored %d\n", i-1)
	}
}

// TestWriterPrunes: the writer applies the retention limits as it stores,
// every pruneEvery rows, in the same transaction.
func TestWriterPrunes(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "timeline.db"), Options{MaxRows: 10})
	for i := range pruneEvery {
		if _, err := s.Record(ctx, entry(i, "c", "p", OK, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := s.Query(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 10 || rows[0].ID != pruneEvery {
		t.Fatalf("%d rows, newest %d; want the newest 10", len(rows), rows[0].ID)
	}
}

// TestRowsThatCannotBeStoredAreCounted: when another process took the
// next ID, the batch fails; its rows count as not recorded, the next batch
// says so with a gap row, and IDs move past the other process's rows.
func TestRowsThatCannotBeStoredAreCounted(t *testing.T) {
	ctx := context.Background()
	s := open(t, filepath.Join(t.TempDir(), "timeline.db"), Options{})
	if _, err := s.db.Exec(`INSERT INTO calls (id, time_us, tool, outcome) VALUES (1, 0, 'other', 'ok'), (2, 0, 'other', 'ok')`); err != nil {
		t.Fatal(err)
	}
	if e, err := s.Record(ctx, entry(1, "c", "p", OK, time.Now())); err != nil || e.ID != 1 {
		t.Fatalf("record: ID %d, %v", e.ID, err)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Dropped != 1 || st.Written != 0 {
		t.Fatalf("stats %+v; want 1 dropped", st)
	}
	if e, err := s.Record(ctx, entry(2, "c", "p", OK, time.Now())); err != nil || e.ID != 3 {
		t.Fatalf("record after the failure: ID %d, %v; want 3", e.ID, err)
	}
	rows, err := s.Query(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || rows[0].Outcome != Unrecorded || rows[0].Args != "1 call not recorded" || rows[1].ID != 3 {
		t.Fatalf("rows %+v", rows)
	}
}

// TestWriterLingersForMoreRows: rows recorded one after another while the
// writer waits (Options.Linger) share one transaction; a Flush (so any
// query) ends the wait at once, as does Close; without either, the batch
// is stored once the wait is over.
func TestWriterLingersForMoreRows(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := filepath.Join(t.TempDir(), "timeline.db")
	s, err := Open(path, Options{Linger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.Record(ctx, entry(i, "c", "p", OK, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush waited out the linger: %v", err)
	}
	if st := s.Stats(); st.Batches != 1 || st.Written != 3 {
		t.Fatalf("stats %+v; want 3 rows in 1 batch", st)
	}
	for i := range 2 {
		if _, err := s.Record(ctx, entry(i, "c", "p", OK, time.Now())); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Batches != 2 || st.Written != 5 {
		t.Fatalf("stats after Close %+v; want 5 rows in 2 batches", st)
	}

	// A short linger: the rows are stored when it is over, no Flush asked.
	s = open(t, path, Options{Linger: time.Millisecond})
	s.pmu.Lock()
	progress := s.progress
	s.pmu.Unlock()
	if _, err := s.Record(ctx, entry(9, "c", "p", OK, time.Now())); err != nil {
		t.Fatal(err)
	}
	select {
	case <-progress:
	case <-ctx.Done():
		t.Fatal("the row was not stored after the linger")
	}
	if st := s.Stats(); st.Written != 1 {
		t.Fatalf("stats %+v; want the row written", st)
	}
}

// runningRows counts the rows stored as calls started (hidden from queries).
func runningRows(t *testing.T, s *Store) int {
	t.Helper()
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.db.QueryRow(`SELECT COUNT(*) FROM calls WHERE outcome = 'running'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestActionsLeftRunningAreInterrupted: a call that acts is stored as it
// starts, out of sight; its end replaces that row; a daemon that stops
// while it runs leaves it, and the next Open shows it Interrupted, with
// what to do. Reads are not stored until they end. A call whose end is
// dropped (the queue was full) is not shown as interrupted.
func TestActionsLeftRunningAreInterrupted(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "timeline.db")
	s := open(t, path, Options{})
	click := Entry{CallID: "c1", Time: time.Now(), Client: "claude-code", Profile: "work", Tab: 2, Tool: "browser_click", Args: "ref=e4", Class: "interact"}
	s.Started(click)
	s.Started(Entry{CallID: "r1", Time: time.Now(), Client: "claude-code", Tool: "browser_snapshot", Class: "read"})
	if n := runningRows(t, s); n != 1 {
		t.Fatalf("%d rows stored as started; want the click's only", n)
	}
	if n := count(t, s); n != 0 {
		t.Fatalf("a query shows %d rows while the calls run; want none", n)
	}
	done := click
	done.Outcome, done.Duration = OK, 40*time.Millisecond
	if _, err := s.Record(ctx, done); err != nil {
		t.Fatal(err)
	}
	if n, r := count(t, s), runningRows(t, s); n != 1 || r != 0 {
		t.Fatalf("after the click ended: %d rows shown, %d started rows; want 1 and 0", n, r)
	}

	// A call that starts and ends within one batch: its started row is
	// never written, and its own row is.
	release := hold(s)
	quick := Entry{CallID: "q1", Time: time.Now(), Client: "claude-code", Tool: "browser_press_key", Class: "interact"}
	s.Started(quick)
	quick.Outcome = OK
	if _, err := s.Record(ctx, quick); err != nil {
		t.Fatal(err)
	}
	release()
	if n, r := count(t, s), runningRows(t, s); n != 2 || r != 0 {
		t.Fatalf("after a call within one batch: %d rows shown, %d started rows; want 2 and 0", n, r)
	}

	// The daemon stops while a navigation runs.
	nav := Entry{CallID: "c2", Time: time.Now(), Client: "cursor", Profile: "work", Tab: 3, Tool: "browser_navigate", Args: "url=https://example.com/", Class: "navigate"}
	s.Started(nav)
	s.Close()
	s = open(t, path, Options{})
	rows, err := s.Query(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[0].CallID != "c2" || rows[0].Outcome != Interrupted || rows[0].Tool != "browser_navigate" || rows[0].Args != nav.Args || !strings.Contains(rows[0].Error, "may have acted") {
		t.Fatalf("after the restart: %+v; want the navigation, interrupted, then the two others", rows)
	}
	if rows, _ := s.Query(ctx, Filter{Outcome: Interrupted}); len(rows) != 1 {
		t.Fatalf("filtered by outcome interrupted: %d rows", len(rows))
	}

	// The filter lists name no client whose only row is hidden (running).
	s.Started(Entry{CallID: "c9", Time: time.Now(), Client: "windsurf", Tool: "browser_click", Class: "interact"})
	if f, err := s.Facets(ctx); err != nil || slices.Contains(f.Clients, "windsurf") {
		t.Fatalf("facets %+v, %v: a running call's client is listed", f, err)
	}

	// A call held for the user's answer has not acted: its started row
	// goes, and a stop while it waits leaves nothing interrupted; once
	// allowed, it is stored as started again.
	held := Entry{CallID: "h1", Time: time.Now(), Client: "cursor", Tool: "browser_file_upload", Class: "sensitive"}
	s.Started(held)
	s.Held(held, Hold{})
	if r := runningRows(t, s); r != 1 { // c9's only
		t.Fatalf("%d started rows while h1 is held; want 1 (c9)", r)
	}
	s.Answered(held, "allow_once", "window")
	if r := runningRows(t, s); r != 2 {
		t.Fatalf("%d started rows once h1 is allowed; want 2", r)
	}
	denied := Entry{CallID: "h2", Time: time.Now(), Client: "cursor", Tool: "browser_file_upload", Class: "sensitive"}
	s.Started(denied)
	s.Held(denied, Hold{})
	s.Close()
	s = open(t, path, Options{})
	rows, _ = s.Query(ctx, Filter{Outcome: Interrupted})
	var ids []string
	for _, e := range rows {
		ids = append(ids, e.CallID)
	}
	if !slices.Equal(ids, []string{"h1", "c9", "c2"}) {
		t.Fatalf("interrupted after the second stop: %v; want h1 (allowed, running), c9, c2, and not h2 (still held)", ids)
	}

	// A call whose end finds the queue full: its started row goes with the gap row.
	s.Close()
	s = open(t, filepath.Join(t.TempDir(), "timeline.db"), Options{QueueSize: 2})
	release = hold(s)
	late := Entry{CallID: "c3", Time: time.Now(), Tool: "browser_type", Class: "interact"}
	s.Started(late)                                                              // queued: 1 of 2
	if _, err := s.Record(ctx, entry(1, "c", "p", OK, time.Now())); err != nil { // 2 of 2
		t.Fatal(err)
	}
	late.Outcome = OK
	if e, err := s.Record(ctx, late); err != nil || e.ID != 0 {
		t.Fatalf("the late end: ID %d, %v; want dropped", e.ID, err)
	}
	release()
	if r := runningRows(t, s); r != 0 {
		t.Fatalf("%d started rows left after the gap row; want 0", r)
	}
	rows, _ = s.Query(ctx, Filter{})
	if len(rows) != 2 || rows[0].Outcome != Unrecorded {
		t.Fatalf("rows %+v; want a gap row and the other call", rows)
	}
}
