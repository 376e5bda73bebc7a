package mcp

import (
	"context"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/mcpclient"
)

// The _meta idempotency key reaches the browser call; a malformed one is
// refused before anything reaches the browser; no key, no key.
func TestIdempotencyKeyReachesTheBrowser(t *testing.T) {
	fb := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodClick: protocol.PageResult{}}}
	c := newClient(t, fb)
	call := func(meta *mcpgo.Meta) (string, bool) {
		t.Helper()
		text, isErr, err := mcpclient.Call(context.Background(), c, "browser_click", map[string]any{"ref": "e1"}, meta)
		if err != nil {
			t.Fatal(err)
		}
		return text, isErr
	}
	if text, isErr := call(&mcpgo.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: "k-1"}}); isErr {
		t.Fatalf("click with a key: %s", text)
	}
	if text, isErr := call(nil); isErr {
		t.Fatalf("click without a key: %s", text)
	}
	for _, bad := range []any{"", "with space", strings.Repeat("x", 129), 42, "é"} {
		text, isErr := call(&mcpgo.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: bad}})
		if !isErr || !strings.Contains(text, protocol.MetaIdempotencyKey) {
			t.Fatalf("key %#v: got %q (error %v), want a tool error naming the key", bad, text, isErr)
		}
	}
	if len(fb.calls) != 2 || fb.calls[0].key != "k-1" || fb.calls[1].key != "" {
		t.Fatalf("browser calls %+v, want two: key k-1, then none", fb.calls)
	}
}
