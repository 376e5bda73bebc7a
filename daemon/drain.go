package daemon

import (
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// DrainTimeout is how long a stopping daemon waits for its in-flight MCP
// calls to finish: longer than any tool's own timeout (browser_wait_for's
// 60 s), so a call that is running returns its true result.
const DrainTimeout = 65 * time.Second

// drainer lets a stopping daemon finish the MCP calls it started before it
// disconnects the browsers: it counts in-flight MCP POSTs (each carries one
// JSON-RPC message and is answered when the call ends), and once draining
// refuses new ones with 503 before they are handled, so that `tether mcp`
// sends them again to the next daemon. GET (the notification stream) and
// DELETE are not counted: they are not calls.
type drainer struct {
	draining atomic.Bool
	mu       sync.Mutex
	inflight int
	idle     chan struct{} // closed when inflight reaches 0 while draining
	// trimmer, when set, hears when calls start and when none is left.
	trimmer *idleTrimmer
}

// wrap returns next behind the drainer.
func (d *drainer) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if !d.enter() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Tether is restarting: it finishes the calls it started, then stops; send the request again to the next daemon (`tether mcp` does this by itself)", http.StatusServiceUnavailable)
			return
		}
		defer d.leave()
		next.ServeHTTP(w, r)
	})
}

// enter counts one request in, unless draining (then false).
func (d *drainer) enter() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.draining.Load() {
		return false
	}
	d.inflight++
	if d.inflight == 1 && d.trimmer != nil {
		d.trimmer.busy()
	}
	return true
}

func (d *drainer) leave() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.inflight--
	if d.inflight == 0 && d.idle != nil {
		close(d.idle)
		d.idle = nil
	}
	if d.inflight == 0 && d.trimmer != nil {
		d.trimmer.idle()
	}
}

// drain stops taking requests and waits until those in flight are answered
// or timeout passes; it returns how many were still running at the end (0
// when all finished).
func (d *drainer) drain(log *slog.Logger, timeout time.Duration) int {
	d.mu.Lock()
	d.draining.Store(true)
	n := d.inflight
	var idle chan struct{}
	if n > 0 {
		d.idle = make(chan struct{})
		idle = d.idle
	}
	d.mu.Unlock()
	if n == 0 {
		return 0
	}
	log.Info("draining: waiting for in-flight MCP calls to finish before stopping", "calls", n, "timeout", timeout)
	select {
	case <-idle:
		log.Info("drained: every in-flight MCP call finished")
		return 0
	case <-time.After(timeout):
		d.mu.Lock()
		defer d.mu.Unlock()
		log.Warn("drain timed out; stopping with MCP calls still running", "calls", d.inflight)
		return d.inflight
	}
}
