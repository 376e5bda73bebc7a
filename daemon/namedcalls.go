package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/mcptoken"
)

// namedTokenMessages applies two rules to the JSON-RPC messages a named
// token (remote mode, docs/remote.md) POSTs to /mcp that are not tool calls
// (those are limited by the tool guard):
//
//   - initialize takes one call from the token's rate limit
//     (remote.callsPerMinute): each one starts an MCP session, and the
//     daemon keeps at most DefaultMaxSessions, ending the one idle longest,
//     so a token holder initializing in a loop would end everyone else's
//     sessions. Over the limit it gets a JSON-RPC error naming the wait,
//     with HTTP 200 and Retry-After: MCP clients (mcp-go's among them) take
//     a 4xx answer to initialize for an old SSE server and drop its text.
//   - subscriptions/listen (MCP 2026-07-28's event stream, a POST that stays
//     open) ends when the token is revoked, as a GET stream does (apiGuard).
//
// Requests with the local token pass untouched: next sees the same body.
// limits or revoked may be nil (no rule then).
func namedTokenMessages(log *slog.Logger, limits *mcptoken.Limiter, revoked revocable, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := TokenName(r.Context())
		if name == "" || r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		// mcpLimits has read the body into memory, within MaxMCPBody.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeRPCError(w, http.StatusBadRequest, nil, mcpgo.PARSE_ERROR, "could not read the request body: "+err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		var msg struct {
			Method string `json:"method"`
			ID     any    `json:"id"`
		}
		if json.Unmarshal(body, &msg) != nil {
			next.ServeHTTP(w, r) // a batch or malformed: the SDK answers it
			return
		}
		switch mcpgo.MCPMethod(msg.Method) {
		case mcpgo.MethodInitialize:
			if limits == nil {
				break
			}
			if err := limits.Allow(name); err != nil {
				var over *mcptoken.OverLimitError
				if errors.As(err, &over) {
					w.Header().Set("Retry-After", retryAfter(over))
				}
				log.Warn("MCP initialize refused: the token is over its rate limit", "token", name)
				writeRPCError(w, http.StatusOK, msg.ID, mcpgo.INVALID_REQUEST, "initialize refused: "+err.Error())
				return
			}
		case mcpgo.MethodSubscriptionsListen:
			if revoked == nil {
				break
			}
			ctx, stop := endOnRevoke(r.Context(), log, revoked, name)
			defer stop()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// retryAfter is an OverLimitError's wait in whole seconds (at least 1), for
// the Retry-After header.
func retryAfter(e *mcptoken.OverLimitError) string {
	s := int(e.Wait.Seconds() + 0.999)
	return strconv.Itoa(max(s, 1))
}
