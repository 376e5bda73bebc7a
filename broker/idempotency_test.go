package broker

import (
	"context"
	"testing"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// A call's idempotency key, tool and arguments' fingerprint (from its
// context) travel in the request frame of every method, reads too (the
// extension refuses a key used for another call); without them, none.
func TestIdempotencyKeyInRequestFrame(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "p1", "Home")
	idem := protocol.IdempotentCall{Key: "key-1", Tool: "browser_click", Fingerprint: protocol.CallFingerprint(map[string]any{"ref": "e1"}), Scope: "\x00claude-code"}
	ctx := protocol.WithIdempotentCall(context.Background(), idem)
	// The frame carries the key scoped to its app (WireKey), the tool and the fingerprint.
	sent := protocol.IdempotentCall{Key: idem.WireKey(), Tool: idem.Tool, Fingerprint: idem.Fingerprint}
	for _, tc := range []struct {
		ctx    context.Context
		method protocol.Method
		params any
		want   protocol.IdempotentCall
	}{
		{ctx, protocol.MethodClick, &protocol.ClickParams{Ref: "e1"}, sent},
		{ctx, protocol.MethodSnapshot, &protocol.SnapshotParams{}, sent},
		{context.Background(), protocol.MethodClick, &protocol.ClickParams{Ref: "e1"}, protocol.IdempotentCall{}},
	} {
		errc := make(chan error, 1)
		go func() { errc <- b.Call(tc.ctx, "", tc.method, tc.params, nil, 5*time.Second) }()
		r := f.readRequest()
		f.answer(r.ID, protocol.PageResult{})
		if err := <-errc; err != nil {
			t.Fatalf("%s: %v", tc.method, err)
		}
		got := protocol.IdempotentCall{Key: r.IdempotencyKey, Tool: r.Tool, Fingerprint: r.CallFingerprint}
		if got != tc.want {
			t.Fatalf("%s carried %+v, want %+v", tc.method, got, tc.want)
		}
	}
}
