package daemon

import (
	"runtime/debug"
	"sync"
	"time"
)

// IdleTrimDelay is how long the daemon must have no MCP call in flight
// before it hands the heap a burst of calls left behind back to the OS.
// An agent's next call usually comes seconds after the last (the model
// thinks in between), so the trim runs once per step, not per call.
const IdleTrimDelay = 500 * time.Millisecond

// idleTrimmer returns freed heap memory to the OS once the daemon has been
// idle for delay: Go keeps memory it freed for reuse and gives it back only
// slowly (its background scavenger; a forced GC every 2 minutes), so after
// a large snapshot the idle daemon's RSS would stay high for minutes. The
// trim is debug.FreeOSMemory (a full GC, then returning free pages), which
// costs a few milliseconds of CPU on the daemon's heap, once per idle
// period. busy and idle are called as the count of calls in flight leaves
// and reaches zero.
type idleTrimmer struct {
	delay time.Duration
	trim  func() // debug.FreeOSMemory, or a test's stand-in

	mu    sync.Mutex
	timer *time.Timer
}

func newIdleTrimmer(delay time.Duration) *idleTrimmer {
	return &idleTrimmer{delay: delay, trim: debug.FreeOSMemory}
}

// idle arms the trim: it runs delay from now unless busy comes first.
func (t *idleTrimmer) idle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer == nil {
		t.timer = time.AfterFunc(t.delay, t.trim)
		return
	}
	t.timer.Reset(t.delay)
}

// busy disarms a pending trim: a call is in flight again.
func (t *idleTrimmer) busy() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.timer != nil {
		t.timer.Stop()
	}
}
