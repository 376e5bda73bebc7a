package protocol

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// MetaIdempotencyKey is the MCP _meta key under which a tools/call carries
// its idempotency key ("tether/" prefix, per the MCP spec's rules for _meta
// key names). `tether mcp` sets it on every tools/call it relays; HTTP
// clients may set it themselves. The daemon forwards it to the extension
// as Request.IdempotencyKey.
const MetaIdempotencyKey = "tether/idempotencyKey"

// MaxIdempotencyKeyLen is the longest key accepted, in bytes.
const MaxIdempotencyKeyLen = 128

// ValidIdempotencyKey reports whether key is 1 to MaxIdempotencyKeyLen
// printable ASCII characters (0x21–0x7e: no spaces, no control characters).
func ValidIdempotencyKey(key string) bool {
	if key == "" || len(key) > MaxIdempotencyKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// IdempotentCall is the agent's call a key belongs to: its idempotency
// key, its tool, and the fingerprint of its arguments (CallFingerprint).
// Every request of the call carries all three (Request.IdempotencyKey,
// Tool, CallFingerprint).
type IdempotentCall struct {
	// Key is the key as the agent sent it.
	Key         string
	Tool        string
	Fingerprint string
	// Scope names whose key it is: the token and the app (MCP clientInfo
	// name) of the call, and its lasting session key when the client sent
	// one (mcp's keyScope). Keys are an app's own: the same key from
	// another app is another call (WireKey).
	Scope string
	// Repeat is true when the key came before with the same call: the
	// agent (or `tether mcp`) sends again one whose answer it never got.
	Repeat bool
	// Sending, when set, is called as a request of a method that acts is
	// about to go to the browser for this call: it reports whether one of
	// that method went for the key before (Request.SentBefore), and sent
	// records that this one went, to be called once the request is queued
	// for the extension (a request that never left is no reason to refuse
	// a retry). The daemon's key store sets it; it remembers for as long as
	// it remembers the key.
	Sending func(method Method) (before bool, sent func())
}

// WireKey is the key the extension gets for the call
// (Request.IdempotencyKey): Key behind 12 hex characters of SHA-256 of
// Scope and a dot, so that two apps that pick the same key (a counter
// each) never share a record: the second's call runs, and never gets the
// first one's answer. A key too long for that (past MaxIdempotencyKeyLen
// in all) is sent as "#" and SHA-256 of Key in hex instead. "" without a
// key.
func (c IdempotentCall) WireKey() string {
	if c.Key == "" {
		return ""
	}
	scope := sha256.Sum256([]byte(c.Scope))
	prefix := hex.EncodeToString(scope[:6]) + "."
	if len(prefix)+len(c.Key) <= MaxIdempotencyKeyLen {
		return prefix + c.Key
	}
	key := sha256.Sum256([]byte(c.Key))
	return prefix + "#" + hex.EncodeToString(key[:])
}

type idempotencyKeyCtx struct{}

// WithIdempotentCall returns ctx carrying call, the agent's call that ctx
// serves.
func WithIdempotentCall(ctx context.Context, call IdempotentCall) context.Context {
	return context.WithValue(ctx, idempotencyKeyCtx{}, call)
}

// IdempotentCallFrom returns the call WithIdempotentCall put in ctx, or the
// zero IdempotentCall.
func IdempotentCallFrom(ctx context.Context) IdempotentCall {
	call, _ := ctx.Value(idempotencyKeyCtx{}).(IdempotentCall)
	return call
}

// CallFingerprint is the fingerprint of a tool call's arguments: SHA-256,
// in hex, of their JSON (object keys sorted, as encoding/json writes maps).
// nil and an empty object give the same fingerprint.
func CallFingerprint(args map[string]any) string {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		b = []byte(err.Error()) // cannot happen for decoded JSON
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
