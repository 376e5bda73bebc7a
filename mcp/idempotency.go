package mcp

import (
	"context"
	"fmt"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/tether-browser/tether/protocol"
)

// idempotencyMiddleware passes a tools/call's _meta idempotency key
// (protocol.MetaIdempotencyKey) on to the browser calls its tool makes,
// through the context (protocol.WithIdempotencyKey). A key that is not a
// string of 1 to 128 printable ASCII characters is a tool error, before the
// tool runs; a call without one runs as before.
func idempotencyMiddleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		if req.Params.Meta == nil {
			return next(ctx, req)
		}
		raw, ok := req.Params.Meta.AdditionalFields[protocol.MetaIdempotencyKey]
		if !ok {
			return next(ctx, req)
		}
		key, _ := raw.(string)
		if !protocol.ValidIdempotencyKey(key) {
			return mcpgo.NewToolResultError(fmt.Sprintf("_meta %q must be a string of 1 to %d printable ASCII characters (no spaces), unique per call; the call was not run",
				protocol.MetaIdempotencyKey, protocol.MaxIdempotencyKeyLen)), nil
		}
		return next(protocol.WithIdempotencyKey(ctx, key), req)
	}
}
