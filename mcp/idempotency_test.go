package mcp

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
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

// A key belongs to one call: after a click with key K, the same click again
// reaches the browser (the extension answers it from its record), but
// another tool with K, read-only ones too, or the click with other
// arguments, is refused before anything reaches the browser.
func TestIdempotencyKeyBelongsToOneCall(t *testing.T) {
	fb := &fakeBrowser{results: map[protocol.Method]any{
		protocol.MethodClick: protocol.PageResult{}, protocol.MethodNavigate: protocol.PageResult{},
		protocol.MethodHistory: protocol.PageResult{}, protocol.MethodReadURL: protocol.ReadResult{},
		protocol.MethodSnapshot: protocol.PageResult{},
	}}
	c := newClient(t, fb)
	meta := &mcpgo.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: "k-1"}}
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		text, isErr, err := mcpclient.Call(context.Background(), c, tool, args, meta)
		if err != nil {
			t.Fatal(err)
		}
		return text, isErr
	}
	for i := 0; i < 2; i++ {
		if text, isErr := call("browser_click", map[string]any{"ref": "e1"}); isErr {
			t.Fatalf("click %d: %s", i+1, text)
		}
	}
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"browser_navigate", map[string]any{"url": "https://example.com/"}},
		{"browser_navigate_back", nil},
		{"browser_reload", nil},
		{"browser_read_url", map[string]any{"url": "https://example.com/"}},
		{"browser_snapshot", nil},
		{"browser_click", map[string]any{"ref": "e2"}},
	} {
		text, isErr := call(tc.tool, tc.args)
		if !isErr || !strings.Contains(text, "already used") || !strings.Contains(text, "use a new key for each call") || !strings.HasPrefix(text, tc.tool+" was not run") {
			t.Fatalf("%s with the click's key: got %q (error %v), want a refusal", tc.tool, text, isErr)
		}
	}
	if len(fb.calls) != 2 {
		t.Fatalf("browser calls %+v, want only the two clicks", fb.calls)
	}
	want := protocol.IdempotentCall{Key: "k-1", Tool: "browser_click", Fingerprint: protocol.CallFingerprint(map[string]any{"ref": "e1"}), Scope: "\x00test"}
	for i, fc := range fb.calls {
		want.Repeat = i == 1 // the second is the repeat
		got := fc.idem
		if got.Sending == nil {
			t.Fatalf("the click's browser call %d has no Sending", i+1)
		}
		got.Sending = nil
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("the click's browser call %d carried %+v, want %+v", i+1, got, want)
		}
	}
	// Both attempts share the key's record of what was sent: once the
	// first click is marked sent, the second learns it went to the
	// browser; nothing counts as sent before it is marked.
	before, sent := fb.calls[0].idem.Sending(protocol.MethodClick)
	if before {
		t.Fatal("a click counts as sent before any was")
	}
	if again, _ := fb.calls[1].idem.Sending(protocol.MethodClick); again {
		t.Fatal("a click that was never marked sent counts as sent")
	}
	sent()
	if again, _ := fb.calls[1].idem.Sending(protocol.MethodClick); !again {
		t.Fatal("the second attempt does not learn the first click went")
	}
	if nav, _ := fb.calls[1].idem.Sending(protocol.MethodNavigate); nav {
		t.Fatal("another method counts as sent")
	}
	// A read-only call claims its key as well.
	meta = &mcpgo.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: "k-2"}}
	if text, isErr := call("browser_snapshot", nil); isErr {
		t.Fatalf("snapshot: %s", text)
	}
	if text, isErr := call("browser_snapshot", map[string]any{}); isErr {
		t.Fatalf("the same snapshot again (no arguments = {}): %s", text)
	}
	if text, isErr := call("browser_click", map[string]any{"ref": "e1"}); !isErr || !strings.Contains(text, "a browser_snapshot call") {
		t.Fatalf("click with a snapshot's key: %q (error %v)", text, isErr)
	}
	if len(fb.calls) != 4 {
		t.Fatalf("%d browser calls, want 4", len(fb.calls))
	}
}

// The daemon remembers a key's call for 10 minutes, and at most maxKeys keys.
func TestKeyStoreBounds(t *testing.T) {
	now := time.Unix(1000, 0)
	s := newKeyStore()
	s.now = func() time.Time { return now }
	s.max = 3
	if e, repeat, _ := s.claim("a", "browser_click", "f1"); e != nil || repeat {
		t.Fatalf("a new key: refused %v, repeat %v", e, repeat)
	}
	if e, repeat, _ := s.claim("a", "browser_click", "f1"); e != nil || !repeat {
		t.Fatalf("a repeat: refused %v, repeat %v", e, repeat)
	}
	if e, _, _ := s.claim("a", "browser_navigate", "f1"); e == nil || e.tool != "browser_click" {
		t.Fatalf("another tool: %+v", e)
	}
	if e, _, _ := s.claim("a", "browser_click", "f2"); e == nil {
		t.Fatal("other arguments accepted")
	}
	now = now.Add(keyTTL)
	if e, repeat, _ := s.claim("a", "browser_navigate", "f1"); e != nil || repeat {
		t.Fatal("a key 10 minutes old is still remembered")
	}
	for _, k := range []string{"b", "c", "d"} {
		s.claim(k, "browser_click", "f")
	}
	if len(s.calls) != 3 || len(s.order) != 3 {
		t.Fatalf("%d keys, %d in order; want 3", len(s.calls), len(s.order))
	}
	if e, _, _ := s.claim("a", "browser_click", "f1"); e != nil {
		t.Fatal("the oldest key was not forgotten for room")
	}
	if e, _, _ := s.claim("d", "browser_snapshot", "f"); e == nil {
		t.Fatal("the newest key was forgotten")
	}
}

// recorderSpy records how each call ended.
type recorderSpy struct {
	mu   sync.Mutex
	ends []string
}

func (r *recorderSpy) Started(ToolCall, Verdict) {}
func (r *recorderSpy) Finished(call ToolCall, _ Verdict, end CallEnd) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ends = append(r.ends, call.Tool+" "+end.Outcome+" "+end.Error)
}

// A key reused for another call is refused before the Guard (the user is
// never asked to approve a call that would be refused), and the refusal is
// on the timeline.
func TestReusedKeyRefusedBeforeTheGuard(t *testing.T) {
	spy, rec := &guardSpy{}, &recorderSpy{}
	fb := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodClick: protocol.PageResult{}}}
	c, err := client.NewInProcessClient(NewServer(fb, Config{Version: "test", Fence: "FENCE", Guard: spy, Recorder: rec}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := mcpclient.Initialize(ctx, c, "test"); err != nil {
		t.Fatal(err)
	}
	meta := &mcpgo.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: "k-1"}}
	if text, isErr, err := mcpclient.Call(ctx, c, "browser_click", map[string]any{"ref": "e1"}, meta); err != nil || isErr {
		t.Fatalf("click: %v %s", err, text)
	}
	if text, isErr, err := mcpclient.Call(ctx, c, "browser_navigate", map[string]any{"url": "https://example.com/"}, meta); err != nil || !isErr {
		t.Fatalf("navigate with the click's key: %v %v %s", err, isErr, text)
	}
	if len(spy.clients) != 1 {
		t.Fatalf("the Guard saw %d calls, want only the click", len(spy.clients))
	}
	if len(rec.ends) != 2 || !strings.HasPrefix(rec.ends[1], "browser_navigate error browser_navigate was not run") {
		t.Fatalf("recorded %q", rec.ends)
	}
}

// Keys are an app's own: two apps that pick the same key for the same
// click (a counter each) make two calls, neither a repeat of the other, and
// the browser gets two different keys; the key used for a navigation by a
// third app is not refused because of the others' click.
func TestIdempotencyKeysArePerApp(t *testing.T) {
	fb := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodClick: protocol.PageResult{}, protocol.MethodNavigate: protocol.PageResult{}}}
	srv := NewServer(fb, Config{Version: "test", Fence: "FENCE"})
	ctx := context.Background()
	app := func(name string) *client.Client {
		c, err := client.NewInProcessClient(srv)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := mcpclient.Initialize(ctx, c, name); err != nil {
			t.Fatal(err)
		}
		return c
	}
	meta := &mcpgo.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: "1"}}
	for _, c := range []*client.Client{app("app-a"), app("app-b")} {
		if text, isErr, err := mcpclient.Call(ctx, c, "browser_click", map[string]any{"ref": "e1"}, meta); err != nil || isErr {
			t.Fatalf("click: %v %s", err, text)
		}
	}
	if text, isErr, err := mcpclient.Call(ctx, app("app-c"), "browser_navigate", map[string]any{"url": "https://example.com/"}, meta); err != nil || isErr {
		t.Fatalf("another app's navigate with the same key: %v %s", err, text)
	}
	if len(fb.calls) != 3 {
		t.Fatalf("%d browser calls, want 3", len(fb.calls))
	}
	a, b := fb.calls[0].idem, fb.calls[1].idem
	if a.Repeat || b.Repeat || a.Key != "1" || b.Key != "1" || a.WireKey() == b.WireKey() || !strings.HasSuffix(a.WireKey(), ".1") {
		t.Fatalf("the two apps' clicks carried %+v (wire key %q) and %+v (wire key %q): want two calls with key 1, not repeats, different wire keys",
			a, a.WireKey(), b, b.WireKey())
	}
}

// keyScope: token and app, and the lasting session key when there is one
// (two instances of one app); the MCP session is not part of it.
func TestKeyScope(t *testing.T) {
	base := context.Background()
	if keyScope(base) != keyScope(base) || keyScope(WithToken(base, "phone")) == keyScope(base) {
		t.Fatal("the token's name is not part of the scope")
	}
	a, b := WithSessionKey(base, "bridge-session-0001"), WithSessionKey(base, "bridge-session-0002")
	if keyScope(a) == keyScope(b) || keyScope(a) == keyScope(base) || keyScope(a) != keyScope(WithSessionKey(base, "bridge-session-0001")) {
		t.Fatalf("scopes %q, %q, %q: want the lasting session key in it", keyScope(a), keyScope(b), keyScope(base))
	}
}
