package timeline

import (
	"sync"
	"time"
)

// EventKind says what an Event reports.
type EventKind string

// The event kinds.
const (
	// CallStarted: a call passed the guard and runs now (Entry has no ID,
	// duration or outcome yet). The window highlights its tab.
	CallStarted EventKind = "started"
	// CallHeld: a started call waits for the user's answer (Hold says
	// until when).
	CallHeld EventKind = "held"
	// CallAnswered: a held call was answered (Answer, AnsweredBy).
	CallAnswered EventKind = "answered"
	// CallRecorded: a call ended (or was refused) and is on the timeline;
	// or a late answer's "ignored" row was recorded.
	CallRecorded EventKind = "recorded"
)

// Hold is what CallHeld adds to its Entry: the approval as queued.
type Hold struct {
	// Sites are the origins the call touches (Entry.Site joins them).
	Sites []string `json:"sites"`
	// Since is when the call was held; Deadline when it is denied
	// unanswered.
	Since    time.Time `json:"since"`
	Deadline time.Time `json:"deadline"`
}

// Event is one live update of the timeline.
type Event struct {
	// Kind says what happened.
	Kind EventKind `json:"kind"`
	// Entry is the call. Every event about one call carries its CallID.
	Entry Entry `json:"entry"`
	// Hold, on CallHeld, is the approval as queued.
	Hold *Hold `json:"hold,omitempty"`
	// Answer and AnsweredBy, on CallAnswered, are the answer and where it
	// came from (see Store.Answered).
	Answer     string `json:"answer,omitempty"`
	AnsweredBy string `json:"answeredBy,omitempty"`
	// Dropped is how many events this subscriber missed, because its buffer
	// was full, just before this one; reload with Query when non-zero.
	Dropped int `json:"dropped,omitempty"`
}

// Subscription receives events until Unsubscribe.
type Subscription struct {
	// C delivers the events. It is closed by Unsubscribe.
	C <-chan Event

	c       chan Event
	bus     *bus
	mu      sync.Mutex
	dropped int
	total   int
	closed  bool
}

// Dropped is the number of events this subscription has missed in all.
func (s *Subscription) Dropped() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// Unsubscribe stops the subscription and closes C.
func (s *Subscription) Unsubscribe() {
	s.bus.mu.Lock()
	delete(s.bus.subs, s)
	s.bus.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.c)
	}
}

// bus fans events out without ever blocking the publisher: a subscriber
// whose buffer is full misses the event and is told on the next one.
type bus struct {
	mu   sync.Mutex
	subs map[*Subscription]struct{}
}

func (b *bus) subscribe(buffer int) *Subscription {
	if buffer < 1 {
		buffer = 64
	}
	c := make(chan Event, buffer)
	s := &Subscription{C: c, c: c, bus: b}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.subs == nil {
		b.subs = map[*Subscription]struct{}{}
	}
	b.subs[s] = struct{}{}
	return s
}

func (b *bus) publish(e Event) {
	b.mu.Lock()
	subs := make([]*Subscription, 0, len(b.subs))
	for s := range b.subs {
		subs = append(subs, s)
	}
	b.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		if !s.closed {
			ev := e
			ev.Dropped = s.dropped
			select {
			case s.c <- ev:
				s.dropped = 0
			default:
				s.dropped++
				s.total++
			}
		}
		s.mu.Unlock()
	}
}
