package broker

import (
	"context"
	"sync"
)

// tabQueue serializes the mutating calls on one tab in arrival order (FIFO),
// so a type-then-click from one agent never interleaves with another call.
type tabQueue struct {
	mu      sync.Mutex
	busy    bool
	waiters []chan struct{}
}

// acquire waits for the tab, in arrival order, or for ctx to end. The
// returned release must be called exactly once.
func (q *tabQueue) acquire(ctx context.Context) (release func(), err error) {
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return q.release, nil
	}
	ch := make(chan struct{})
	q.waiters = append(q.waiters, ch)
	q.mu.Unlock()
	select {
	case <-ch:
		return q.release, nil
	case <-ctx.Done():
		q.mu.Lock()
		for i, w := range q.waiters {
			if w == ch {
				q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
				q.mu.Unlock()
				return nil, ctx.Err()
			}
		}
		q.mu.Unlock()
		// The turn was handed to us as ctx ended: pass it on.
		q.release()
		return nil, ctx.Err()
	}
}

func (q *tabQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiters) == 0 {
		q.busy = false
		return
	}
	next := q.waiters[0]
	q.waiters = q.waiters[1:]
	close(next) // busy stays true: ownership moves to next
}
