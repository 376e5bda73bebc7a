package daemon

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// A draining daemon refuses new calls with 503 before handling them, lets
// the call in flight finish with its true answer, and only then returns.
func TestDrainLetsInFlightCallsFinish(t *testing.T) {
	d := &drainer{}
	started, release := make(chan struct{}), make(chan struct{})
	handled := 0
	srv := httptest.NewServer(d.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		handled++
		if r.URL.Path == "/slow" {
			close(started)
			<-release
		}
		io.WriteString(w, "clicked")
	})))
	defer srv.Close()

	answer := make(chan string, 1)
	go func() {
		resp, err := http.Post(srv.URL+"/slow", "application/json", nil)
		if err != nil {
			answer <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answer <- string(b)
	}()
	<-started
	drained := make(chan int, 1)
	go func() { drained <- d.drain(slog.New(slog.DiscardHandler), 10*time.Second) }()
	for !d.draining.Load() {
		time.Sleep(time.Millisecond)
	}
	resp, err := http.Post(srv.URL+"/new", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a new call while draining got %s, want 503", resp.Status)
	}
	// GET (the notification stream) is not a call: it still passes.
	if resp, err := http.Get(srv.URL + "/stream"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET while draining: %v %v", resp, err)
	}
	select {
	case n := <-drained:
		t.Fatalf("drain returned (%d) while a call was in flight", n)
	default:
	}
	close(release)
	if got := <-answer; got != "clicked" {
		t.Fatalf("in-flight call answered %q, want its true result", got)
	}
	if n := <-drained; n != 0 {
		t.Fatalf("drain left %d calls", n)
	}
	if handled != 2 { // the slow call and the GET; never the refused one
		t.Fatalf("handled %d requests, want 2", handled)
	}
}

func TestDrainTimesOut(t *testing.T) {
	d := &drainer{}
	if !d.enter() {
		t.Fatal("enter refused before draining")
	}
	if n := d.drain(slog.New(slog.DiscardHandler), 50*time.Millisecond); n != 1 {
		t.Fatalf("drain returned %d, want 1 still running", n)
	}
	if d.enter() {
		t.Fatal("enter accepted while draining")
	}
}
