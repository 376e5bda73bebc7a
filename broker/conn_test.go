package broker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// A result that does not fit its method's schema fails the call with a
// clear error; a response with neither result nor error, or with an
// unknown error code, is dropped (the call then times out) and the
// connection lives on.
func TestMalformedResultsAndResponses(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "p-malformed", "Work")
	call := func() chan error {
		done := make(chan error, 1)
		go func() {
			var res protocol.PageResult
			done <- b.Call(context.Background(), "", protocol.MethodSnapshot, &protocol.SnapshotParams{}, &res, 700*time.Millisecond)
		}()
		return done
	}

	done := call()
	r := f.readRequest()
	f.send(json.RawMessage(`{"type":"response","id":"` + r.ID + `","result":{"tab":1,"dialogs":[{"kind":"popup"}]}}`))
	if err := <-done; err == nil || !strings.Contains(err.Error(), `malformed snapshot result (snapshot result: unknown dialog kind "popup")`) {
		t.Fatalf("malformed result: %v", err)
	}

	for _, frame := range []string{
		`{"type":"response","id":"%s"}`,
		`{"type":"response","id":"%s","error":{"code":"bogus","message":"x"}}`,
	} {
		done = call()
		r = f.readRequest()
		f.send(json.RawMessage(strings.Replace(frame, "%s", r.ID, 1)))
		if err := <-done; err == nil || !strings.Contains(err.Error(), "took longer than") {
			t.Fatalf("%s: %v; want the call to time out (the frame is dropped)", frame, err)
		}
	}

	done = call()
	r = f.readRequest()
	f.answer(r.ID, protocol.PageResult{Tab: 1, URL: "about:blank", Snapshot: ""})
	if err := <-done; err != nil {
		t.Fatalf("a good result after malformed ones: %v", err)
	}
}
