package broker

import (
	"context"
	"testing"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// A call's idempotency key (from its context) travels in the request frame
// of a method that acts, and never with a read.
func TestIdempotencyKeyInRequestFrame(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "p1", "Home")
	ctx := protocol.WithIdempotencyKey(context.Background(), "key-1")
	for _, tc := range []struct {
		method protocol.Method
		params any
		want   string
	}{
		{protocol.MethodClick, &protocol.ClickParams{Ref: "e1"}, "key-1"},
		{protocol.MethodSnapshot, &protocol.SnapshotParams{}, ""},
	} {
		errc := make(chan error, 1)
		go func() { errc <- b.Call(ctx, "", tc.method, tc.params, nil, 5*time.Second) }()
		r := f.readRequest()
		f.answer(r.ID, protocol.PageResult{})
		if err := <-errc; err != nil {
			t.Fatalf("%s: %v", tc.method, err)
		}
		if r.IdempotencyKey != tc.want {
			t.Fatalf("%s carried key %q, want %q", tc.method, r.IdempotencyKey, tc.want)
		}
	}
}
