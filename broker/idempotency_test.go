package broker

import (
	"context"
	"testing"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// A call's idempotency key, tool and arguments' fingerprint (from its
// context) travel in the request frame of every method, reads too (the
// extension refuses a key used for another call); without them, none. A
// method that acts also says whether one of it was sent for the key
// before (Sending), so that an extension that dropped the key's record
// does not act again.
func TestIdempotencyKeyInRequestFrame(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "p1", "Home")
	sentMethods := map[protocol.Method]bool{}
	idem := protocol.IdempotentCall{Key: "key-1", Tool: "browser_click", Fingerprint: protocol.CallFingerprint(map[string]any{"ref": "e1"}), Scope: "\x00claude-code",
		Sending: func(m protocol.Method) (bool, func()) { return sentMethods[m], func() { sentMethods[m] = true } }}
	ctx := protocol.WithIdempotentCall(context.Background(), idem)
	type onWire struct {
		key, tool, fingerprint string
		sentBefore             bool
	}
	// The frame carries the key scoped to its app (WireKey), the tool and the fingerprint.
	sent := onWire{idem.WireKey(), idem.Tool, idem.Fingerprint, false}
	again := sent
	again.sentBefore = true
	for _, tc := range []struct {
		ctx    context.Context
		method protocol.Method
		params any
		want   onWire
	}{
		{ctx, protocol.MethodClick, &protocol.ClickParams{Ref: "e1"}, sent},
		{ctx, protocol.MethodSnapshot, &protocol.SnapshotParams{}, sent},
		{ctx, protocol.MethodClick, &protocol.ClickParams{Ref: "e1"}, again},
		{ctx, protocol.MethodSnapshot, &protocol.SnapshotParams{}, sent}, // reads never say it
		{context.Background(), protocol.MethodClick, &protocol.ClickParams{Ref: "e1"}, onWire{}},
	} {
		errc := make(chan error, 1)
		go func() { errc <- b.Call(tc.ctx, "", tc.method, tc.params, nil, 5*time.Second) }()
		r := f.readRequest()
		f.answer(r.ID, protocol.PageResult{})
		if err := <-errc; err != nil {
			t.Fatalf("%s: %v", tc.method, err)
		}
		got := onWire{r.IdempotencyKey, r.Tool, r.CallFingerprint, r.SentBefore}
		if got != tc.want {
			t.Fatalf("%s carried %+v, want %+v", tc.method, got, tc.want)
		}
	}
}
