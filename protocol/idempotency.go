package protocol

import "context"

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

type idempotencyKeyCtx struct{}

// WithIdempotencyKey returns ctx carrying key, the idempotency key of the
// agent's call that ctx serves.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyCtx{}, key)
}

// IdempotencyKeyFrom returns the key WithIdempotencyKey put in ctx, or "".
func IdempotencyKeyFrom(ctx context.Context) string {
	key, _ := ctx.Value(idempotencyKeyCtx{}).(string)
	return key
}
