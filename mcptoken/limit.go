package mcptoken

import (
	"fmt"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter holds one token bucket per named token: perMinute tool calls a
// minute, refilled evenly, with a burst of perMinute (a quiet agent may
// make a minute's calls at once). It protects the user's browser from a
// runaway agent.
type Limiter struct {
	perMinute int
	now       func() time.Time

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
}

// NewLimiter returns a Limiter of perMinute calls a minute per token
// (perMinute ≥ 1; settings.json's remote.callsPerMinute).
func NewLimiter(perMinute int) *Limiter {
	if perMinute < 1 {
		perMinute = 1
	}
	return &Limiter{perMinute: perMinute, now: time.Now, buckets: map[string]*rate.Limiter{}}
}

// PerMinute is the limit.
func (l *Limiter) PerMinute() int { return l.perMinute }

// OverLimitError is a call refused for its token's rate limit.
type OverLimitError struct {
	Token     string
	PerMinute int
	// Wait is how long until the token may call again.
	Wait time.Duration
}

func (e *OverLimitError) Error() string {
	s := int(math.Ceil(e.Wait.Seconds()))
	if s < 1 {
		s = 1
	}
	return fmt.Sprintf("token %s is over its limit of %d calls per minute; wait %d s before the next call (the server's settings.json sets remote.callsPerMinute)",
		e.Token, e.PerMinute, s)
}

// Allow takes one call from name's bucket, or returns an *OverLimitError
// saying how long to wait; a refused call takes nothing.
func (l *Limiter) Allow(name string) error {
	l.mu.Lock()
	b, ok := l.buckets[name]
	if !ok {
		b = rate.NewLimiter(rate.Limit(float64(l.perMinute)/60), l.perMinute)
		l.buckets[name] = b
	}
	l.mu.Unlock()
	now := l.now()
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return &OverLimitError{Token: name, PerMinute: l.perMinute, Wait: d}
	}
	return nil
}
