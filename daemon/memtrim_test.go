package daemon

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// The trim runs once the last call in flight ends, and not while a call
// runs.
func TestIdleTrimAfterLastCall(t *testing.T) {
	trimmed := make(chan struct{}, 4)
	tr := &idleTrimmer{delay: time.Millisecond, trim: func() { trimmed <- struct{}{} }}
	d := &drainer{trimmer: tr}
	release := make(chan struct{})
	started := make(chan struct{})
	h := d.wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		started <- struct{}{}
		<-release
	}))
	done := make(chan struct{})
	go func() {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/mcp", nil))
		close(done)
	}()
	<-started
	// A call in flight: nothing was armed, so nothing can fire.
	tr.mu.Lock()
	armed := tr.timer != nil
	tr.mu.Unlock()
	if armed {
		t.Fatal("the trim was armed while a call was in flight")
	}
	close(release)
	<-done
	select {
	case <-trimmed:
	case <-time.After(10 * time.Second):
		t.Fatal("no trim after the last call ended")
	}
}

// A call that starts before the delay passes disarms the trim.
func TestIdleTrimDisarmedByNextCall(t *testing.T) {
	tr := &idleTrimmer{delay: time.Hour, trim: func() { t.Error("trimmed while busy") }}
	tr.idle()
	tr.busy()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.timer.Stop() {
		t.Fatal("busy left the trim armed")
	}
}
