package bridge

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tether-browser/tether/protocol"
)

// callMsg is a tools/call as an AI app of MCP 2026-07-28 sends it: every
// request carries the client's info and capabilities in _meta.
const callMsg = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"browser_type","arguments":{"ref":"e12","text":"hello world","submit":true},` +
	`"_meta":{"progressToken":7,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"claude-ai","version":"1.2.3"},` +
	`"io.modelcontextprotocol/clientCapabilities":{"sampling":{},"elicitation":{}}}}}`

// BenchmarkWithIdempotencyKey: what `tether mcp` adds to every tools/call
// before it sends it (on the call's path).
func BenchmarkWithIdempotencyKey(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if _, own := withIdempotencyKey([]byte(callMsg), false); !own {
			b.Fatal("no key added")
		}
	}
}

// TestWithIdempotencyKeyKeepsTheMessage: the key is added to params._meta
// (made when missing), everything else in the message means what it meant;
// a client's own key is kept unless replace; a message that is not what a
// tools/call should be is passed on unchanged, not a crash.
func TestWithIdempotencyKeyKeepsTheMessage(t *testing.T) {
	decode := func(t *testing.T, b []byte) map[string]any {
		t.Helper()
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m
	}
	for _, in := range []string{
		callMsg,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"browser_tabs"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"browser_tabs","_meta":null}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
		`{"jsonrpc":"2.0","id":"a\u00e9\"b","method":"tools/call","params":{"name":"x","arguments":{"k\"ey":"v\u2028al","n":1e400}}}`,
	} {
		out, own := withIdempotencyKey([]byte(in), false)
		if !own {
			t.Errorf("%s: no key added", in)
			continue
		}
		got, want := decode(t, out), decode(t, []byte(in))
		params, _ := got["params"].(map[string]any)
		meta, _ := params["_meta"].(map[string]any)
		key, _ := meta[protocol.MetaIdempotencyKey].(string)
		if !strings.HasPrefix(key, "tmcp-") || len(key) != len("tmcp-")+32 {
			t.Errorf("%s: key %q", in, key)
		}
		delete(meta, protocol.MetaIdempotencyKey)
		if wp, _ := want["params"].(map[string]any); wp != nil && wp["_meta"] == nil && len(meta) == 0 {
			wp["_meta"] = meta
		} else if wp == nil && len(meta) == 0 && len(params) == 1 {
			want["params"] = params
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Errorf("message changed:\n got %s\nwant %s", g, w)
		}
	}
	own := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","_meta":{"` + protocol.MetaIdempotencyKey + `":"mine"}}}`
	if out, ok := withIdempotencyKey([]byte(own), false); ok || string(out) != own {
		t.Errorf("the client's key was not kept: %s", out)
	}
	if out, ok := withIdempotencyKey([]byte(own), true); !ok || strings.Contains(string(out), `"mine"`) {
		t.Errorf("replace kept the old key: %s", out)
	}
	for _, bad := range []string{`{"method":"tools/call","params":null}`, `{"method":"tools/call","params":[1]}`,
		`{"method":"tools/call","params":{"_meta":[1]}}`, `[1]`, `null`} {
		if out, ok := withIdempotencyKey([]byte(bad), false); ok || string(out) != bad {
			t.Errorf("%s: changed to %s", bad, out)
		}
	}
}
