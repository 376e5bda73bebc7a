package mcp

import (
	"context"
	"fmt"
	"sync"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/protocol"
)

// keyTTL is how long the daemon (and the extension) remember a key's call.
const keyTTL = 10 * time.Minute

// maxKeys bounds the keys the daemon remembers (oldest forgotten first).
const maxKeys = 10000

// keyedCall is the call a key was first used for.
type keyedCall struct {
	key, tool, fingerprint string
	at                     time.Time
	// sent are the methods that act sent to the browser for the key
	// (protocol.IdempotentCall.Sending), under keyStore.mu.
	sent map[protocol.Method]bool
}

// keyStore remembers, for keyTTL, which call (tool and arguments'
// fingerprint) each idempotency key was first used for, so that a key
// belongs to one call: the same key with another tool or other arguments
// is refused before anything runs. It holds at most max keys; they expire
// in the order they came, so a slice in that order serves both bounds.
type keyStore struct {
	mu    sync.Mutex
	now   func() time.Time
	max   int
	calls map[string]*keyedCall
	order []*keyedCall
}

func newKeyStore() *keyStore {
	return &keyStore{now: time.Now, max: maxKeys, calls: map[string]*keyedCall{}}
}

// sending reports whether a request of method, which acts, went to the
// browser for c's key before, and returns sent, which records that one
// went (protocol.IdempotentCall.Sending).
func (s *keyStore) sending(c *keyedCall, method protocol.Method) (before bool, sent func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.sent[method], func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if c.sent == nil {
			c.sent = map[protocol.Method]bool{}
		}
		c.sent[method] = true
	}
}

// claim records key for (tool, fingerprint) if it is new (or forgotten),
// and returns the earlier call when the key was used for another one
// (nil when the call may go on: a new key, or a repeat of the same call),
// and the call the key now names (nil with earlier).
func (s *keyStore) claim(key, tool, fingerprint string) (earlier *keyedCall, repeat bool, this *keyedCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for len(s.order) > 0 && (now.Sub(s.order[0].at) >= keyTTL || len(s.order) > s.max) {
		old := s.order[0]
		s.order[0] = nil
		s.order = s.order[1:]
		if s.calls[old.key] == old {
			delete(s.calls, old.key)
		}
	}
	if c, ok := s.calls[key]; ok {
		if c.tool == tool && c.fingerprint == fingerprint {
			return nil, true, c
		}
		earlier := *c
		return &earlier, false, nil
	}
	c := &keyedCall{key: key, tool: tool, fingerprint: fingerprint, at: now}
	s.calls[key] = c
	s.order = append(s.order, c)
	if len(s.order) > s.max {
		old := s.order[0]
		s.order[0] = nil
		s.order = s.order[1:]
		delete(s.calls, old.key)
	}
	return nil, false, c
}

// reusedKeyMessage is the tool error for a key used before for another call.
func reusedKeyMessage(tool, key string, earlier *keyedCall, age time.Duration) string {
	what := "another " + earlier.tool + " call (other arguments)"
	if earlier.tool != tool {
		what = "a " + earlier.tool + " call"
	}
	return fmt.Sprintf("%s was not run: its idempotency key %q (_meta %q) was already used %s ago for %s. "+
		"A key belongs to one call: use a new key for each call, and the same key only to repeat that very call (same tool, same arguments).",
		tool, key, protocol.MetaIdempotencyKey, age.Round(time.Second), what)
}

// keyScope names whose idempotency keys a call's are
// (protocol.IdempotentCall.Scope): its token's name, its app's name and,
// when the client sent one, its lasting session key (protocol.HeaderSession,
// as `tether mcp` does: two instances of one app are then apart). Not the
// MCP session: an agent repeats a call in a new one after the daemon
// restarts, and it must still be the same call.
func keyScope(ctx context.Context) string {
	scope := TokenOf(ctx) + "\x00" + CallerOf(ctx).App
	if key, ok := ctx.Value(sessionKeyCtx{}).(string); ok {
		scope += "\x00" + key
	}
	return scope
}

// claimCall passes a tools/call's _meta idempotency key
// (protocol.MetaIdempotencyKey), with the call's tool and arguments'
// fingerprint (of the arguments as the client sent them), on to the browser
// calls its tool makes, through the returned context
// (protocol.WithIdempotentCall). It refuses (a message for the AI) a key
// that is not a string of 1 to 128 printable ASCII characters, and a key
// used in the last 10 minutes for another call (another tool or other
// arguments), for every tool, read-only ones too. Keys are per token, app
// and lasting session key (keyScope): another app's same key is another
// call. A call without a key
// goes on as before. guardMiddleware calls it after validation, before
// the arguments are rewritten and before the Guard.
func (s *keyStore) claimCall(ctx context.Context, req mcpgo.CallToolRequest) (context.Context, string) {
	if req.Params.Meta == nil {
		return ctx, ""
	}
	raw, ok := req.Params.Meta.AdditionalFields[protocol.MetaIdempotencyKey]
	if !ok {
		return ctx, ""
	}
	key, _ := raw.(string)
	if !protocol.ValidIdempotencyKey(key) {
		return ctx, fmt.Sprintf("_meta %q must be a string of 1 to %d printable ASCII characters (no spaces), unique per call; the call was not run",
			protocol.MetaIdempotencyKey, protocol.MaxIdempotencyKeyLen)
	}
	call := protocol.IdempotentCall{Key: key, Tool: req.Params.Name, Fingerprint: protocol.CallFingerprint(req.GetArguments()), Scope: keyScope(ctx)}
	earlier, repeat, this := s.claim(call.WireKey(), call.Tool, call.Fingerprint)
	if earlier != nil {
		return ctx, reusedKeyMessage(call.Tool, key, earlier, s.now().Sub(earlier.at))
	}
	call.Repeat = repeat
	call.Sending = func(m protocol.Method) (bool, func()) { return s.sending(this, m) }
	return protocol.WithIdempotentCall(ctx, call), ""
}
