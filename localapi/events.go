package localapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tether-browser/tether/apitype"
)

// ringSize is how many recent events a reconnecting client can get back.
const ringSize = 1024

// writeTimeout bounds one write to an event stream: a client that reads
// nothing for this long is let go.
const writeTimeout = 30 * time.Second

// hub numbers events, keeps the last ringSize of them, and fans them out to
// subscribers without ever waiting for one: a subscriber whose buffer is
// full misses events (counted) until it has drained its buffer, then gets
// a KindResync event carrying the count.
type hub struct {
	mu     sync.Mutex
	seq    uint64
	ring   []apitype.Event // circular, ring[(seq-1) % len] is event seq
	filled int             // events in ring
	subs   map[*subscriber]struct{}
	buffer int

	dropped atomic.Int64 // over all subscribers, ever
}

// subscriber is one event stream's queue.
type subscriber struct {
	c chan apitype.Event
	// backlog is what it missed before subscribing (Last-Event-ID), sent
	// before c.
	backlog []apitype.Event

	mu sync.Mutex
	// dropped counts the events missed since the last resync; while it is
	// non-zero, publish drops every event for this subscriber, so that the
	// resync comes before anything newer. lastDropped is the last missed
	// event's Seq (the resync's).
	dropped     int
	lastDropped uint64
}

// newHub returns a hub whose sequence starts after start's Unix
// microseconds: a client resuming with an id from an earlier daemon gets a
// resync, not another daemon's events (ids stay below 2^53, exact in
// JavaScript, until the year 2255).
func newHub(ring, buffer int, start time.Time) *hub {
	return &hub{ring: make([]apitype.Event, ring), subs: map[*subscriber]struct{}{}, buffer: buffer,
		seq: uint64(start.UnixMicro())}
}

// publish numbers ev, keeps it in the ring and queues it for every
// subscriber that has room. It never blocks.
func (h *hub) publish(ev apitype.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	ev.Seq = h.seq
	h.ring[int(h.seq%uint64(len(h.ring)))] = ev
	h.filled = min(h.filled+1, len(h.ring))
	for s := range h.subs {
		s.mu.Lock()
		if s.dropped == 0 {
			select {
			case s.c <- ev:
				s.mu.Unlock()
				continue
			default:
			}
		}
		s.dropped++
		s.lastDropped = ev.Seq
		s.mu.Unlock()
		h.dropped.Add(1)
	}
}

// subscribe adds a subscriber. With lastID > 0 (Last-Event-ID), its backlog
// is the ring's events after lastID, or a KindResync event when some of
// those are gone or lastID is not this daemon's.
func (h *hub) subscribe(lastID uint64) *subscriber {
	s := &subscriber{c: make(chan apitype.Event, h.buffer)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if lastID > 0 && lastID != h.seq {
		oldest := h.seq - uint64(h.filled) + 1
		if lastID > h.seq || lastID+1 < oldest {
			s.backlog = []apitype.Event{{Seq: h.seq, Kind: apitype.KindResync}}
		} else {
			for seq := lastID + 1; seq <= h.seq; seq++ {
				s.backlog = append(s.backlog, h.ring[int(seq%uint64(len(h.ring)))])
			}
		}
	}
	h.subs[s] = struct{}{}
	return s
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
}

func (h *hub) droppedTotal() int64 { return h.dropped.Load() }

// resync returns the KindResync event owed to s once its buffer is empty,
// and resets its count; ok is false when it missed nothing.
func (s *subscriber) resync() (apitype.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dropped == 0 || len(s.c) > 0 {
		return apitype.Event{}, false
	}
	ev := apitype.Event{Seq: s.lastDropped, Kind: apitype.KindResync, Dropped: s.dropped}
	s.dropped = 0
	return ev, true
}

// getEvents serves GET /api/events: Server-Sent Events (see apitype's
// package doc). It returns when the client goes, a write stalls for
// writeTimeout, or the Server closes.
func (s *Server) getEvents(w http.ResponseWriter, r *http.Request) {
	var lastID uint64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			writeError(w, http.StatusBadRequest, "Last-Event-ID must be the id of an event this stream sent")
			return
		}
		lastID = n
	}
	rc := http.NewResponseController(w)
	sub := s.hub.subscribe(lastID)
	defer s.hub.unsubscribe(sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	write := func(ev apitype.Event) bool {
		if ev.Kind == apitype.KindResync && ev.Dropped > 0 {
			s.log.Warn("event stream subscriber too slow: events dropped", "dropped", ev.Dropped, "dropped_total", s.hub.droppedTotal())
		}
		b, err := json.Marshal(ev)
		if err != nil {
			s.log.Error("encode event", "kind", ev.Kind, "err", err)
			return true
		}
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Kind, b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	for _, ev := range sub.backlog {
		if !write(ev) {
			return
		}
	}
	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	for {
		if ev, ok := sub.resync(); ok && !write(ev) {
			return
		}
		select {
		case ev := <-sub.c:
			if !write(ev) {
				return
			}
		case <-ping.C:
			_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}
