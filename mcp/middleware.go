package mcp

import (
	"context"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/tether-browser/tether/protocol"
)

// ToolCall is one tool call as the Guard and the Recorder see it.
type ToolCall struct {
	// Tool is the tool's name.
	Tool string
	// Args are the arguments as the client sent them (after schema
	// validation). They may hold secrets (typed text): never log them whole.
	Args map[string]any
	// Client is the client's name from initialize's clientInfo ("" when
	// the session has none).
	Client string
	// Session names the caller's session for good (Caller.Session);
	// MCPSession is the id of the MCP session the call came in ("" for a
	// client of MCP 2026-07-28, which opens none).
	Session, MCPSession string
	// Token is the named token the client authenticated with (WithToken;
	// remote mode), "" for the local MCP token.
	Token string
	// Started is when the call arrived.
	Started time.Time
	// Progress, set when the client sent a progressToken, sends it a
	// progress notification: Guard calls it while a call waits for the
	// user's approval, so the client does not time out.
	Progress func(message string)
}

// Verdict is the Guard's answer about a call.
type Verdict struct {
	// Allow lets the call run.
	Allow bool
	// Outcome names why it did not: "paused", "refused" or "denied".
	Outcome string
	// Message is the tool error the model gets when it did not.
	Message string
	// Note is the Guard's own context for the Recorder (what it resolved
	// and decided); the tools never look at it.
	Note any
}

// Guard decides, before any tool runs, whether it may: the pause switch,
// the user's policy and approvals. An error is a broken daemon, not a
// refusal.
type Guard interface {
	Check(ctx context.Context, call ToolCall) (Verdict, error)
}

// Noter, when the Guard implements it, tells a call's result what happened
// meanwhile outside the call (a download the policy judged): Notes returns
// the lines for the call that ran (v its verdict), "" when none; the
// result gets them as a last text block.
type Noter interface {
	Notes(call ToolCall, v Verdict) string
}

// CallEnd is how a call ended.
type CallEnd struct {
	// Duration is from arrival to end, approval wait included.
	Duration time.Duration
	// Outcome is "ok", "error", or the Verdict's when the call was refused.
	Outcome string
	// Error is the tool error's text for "error" (possibly long).
	Error string
}

// Recorder records tool calls, e.g. on the timeline. Its methods must not
// block for long: they run on the call's path.
type Recorder interface {
	// Started is called when an allowed call starts running.
	Started(call ToolCall, v Verdict)
	// Finished is called once per call, refused ones included.
	Finished(call ToolCall, v Verdict, end CallEnd)
}

// guardMiddleware runs every tool call through disabled → validation →
// idempotency key (claim) → prepare → pause → policy → approval (the Guard),
// then the tool, then the Recorder. disabled refuses a tool that is off;
// claim may refuse the call (a malformed key, or a key used for another
// call) before the user is asked anything, or return the context the tool
// runs with. prepare may rewrite the arguments in place (resolved upload
// paths); the tool then gets the rewritten ones.
func guardMiddleware(valid *argValidator, disabled func(tool string) string, claim func(context.Context, mcpgo.CallToolRequest) (context.Context, string),
	prepare func(tool string, args map[string]any) string, g Guard, r Recorder) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			caller := CallerOf(ctx)
			call := ToolCall{
				Tool: req.Params.Name, Args: req.GetArguments(), Client: caller.App, Session: caller.Session, MCPSession: caller.MCPSession,
				Token: TokenOf(ctx), Started: time.Now(), Progress: progressFunc(ctx, req),
			}
			v := Verdict{Allow: true}
			if msg := disabled(call.Tool); msg != "" {
				if r != nil {
					r.Finished(call, v, CallEnd{Duration: time.Since(call.Started), Outcome: "error", Error: msg})
				}
				return mcpgo.NewToolResultError(msg), nil
			}
			if msg := valid.check(req); msg != "" {
				if r != nil {
					r.Finished(call, v, CallEnd{Duration: time.Since(call.Started), Outcome: "error", Error: msg})
				}
				return mcpgo.NewToolResultError(msg), nil
			}
			if claim != nil {
				var msg string
				if ctx, msg = claim(ctx, req); msg != "" {
					if r != nil {
						r.Finished(call, v, CallEnd{Duration: time.Since(call.Started), Outcome: "error", Error: msg})
					}
					return mcpgo.NewToolResultError(msg), nil
				}
			}
			if prepare != nil && call.Args != nil {
				if msg := prepare(call.Tool, call.Args); msg != "" {
					if r != nil {
						r.Finished(call, v, CallEnd{Duration: time.Since(call.Started), Outcome: "error", Error: msg})
					}
					return mcpgo.NewToolResultError(msg), nil
				}
				// The typed handlers decode RawArguments first: drop them so
				// that the tool binds the rewritten map.
				req.Params.RawArguments = nil
			}
			if g != nil {
				var err error
				if v, err = g.Check(ctx, call); err != nil {
					if r != nil {
						r.Finished(call, v, CallEnd{Duration: time.Since(call.Started), Outcome: "error", Error: err.Error()})
					}
					return nil, err
				}
			}
			if !v.Allow {
				if r != nil {
					r.Finished(call, v, CallEnd{Duration: time.Since(call.Started), Outcome: v.Outcome})
				}
				return mcpgo.NewToolResultError(v.Message), nil
			}
			if r != nil {
				r.Started(call, v)
			}
			res, err := next(context.WithValue(ctx, verdictKey{}, v), req)
			if n, ok := g.(Noter); ok && res != nil && err == nil {
				if s := n.Notes(call, v); s != "" {
					res.Content = append(res.Content, mcpgo.NewTextContent(s))
				}
			}
			if r != nil {
				end := CallEnd{Duration: time.Since(call.Started), Outcome: "ok"}
				switch {
				case err != nil:
					end.Outcome, end.Error = "error", err.Error()
				case res != nil && res.IsError:
					end.Outcome, end.Error = "error", resultText(res)
				}
				r.Finished(call, v, end)
			}
			return res, err
		}
	}
}

// clientName is the session's clientInfo name, cleaned (CleanClientName:
// at most 100 characters, no control or bidi characters), "" when unknown.
func clientName(ctx context.Context) string {
	if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return CleanClientName(s.GetClientInfo().Name)
	}
	return ""
}

// Caller is who makes a tool call.
type Caller struct {
	// Session names the session for good: the key `tether mcp` sends
	// (protocol.HeaderSession, through WithSessionKey), which outlives the
	// MCP sessions it opens; else the MCP session's id; else, for a client
	// of the stateless protocol (MCP 2026-07-28, no sessions), "app:" and
	// its name: all its requests are one session.
	Session string
	// MCPSession is the MCP session's id ("" outside a session).
	MCPSession string
	// App is the client's clientInfo.name, cleaned.
	App string
}

type tokenCtx struct{}

// WithToken marks the requests of ctx as authenticated with the named
// token name (the daemon's /mcp guard; "" is the local MCP token).
func WithToken(ctx context.Context, name string) context.Context {
	if name == "" {
		return ctx
	}
	return context.WithValue(ctx, tokenCtx{}, name)
}

// TokenOf is the named token of ctx's request, "" for the local MCP token.
func TokenOf(ctx context.Context) string {
	n, _ := ctx.Value(tokenCtx{}).(string)
	return n
}

type sessionKeyCtx struct{}

// WithSessionKey marks the requests of ctx as those of the session key
// names (a valid protocol.HeaderSession value; others are ignored).
func WithSessionKey(ctx context.Context, key string) context.Context {
	if !protocol.ValidSessionKey(key) {
		return ctx
	}
	return context.WithValue(ctx, sessionKeyCtx{}, key)
}

// CallerOf is who makes the tool call of ctx (every tool call has one).
func CallerOf(ctx context.Context) Caller {
	var c Caller
	if s := server.ClientSessionFromContext(ctx); s != nil {
		c.MCPSession = s.SessionID()
	}
	c.App = clientName(ctx)
	c.Session = c.MCPSession
	if key, ok := ctx.Value(sessionKeyCtx{}).(string); ok {
		c.Session = key
	} else if c.Session == "" {
		c.Session = "app:" + c.App
	}
	return c
}

// progressFunc returns a function sending notifications/progress for the
// request's progressToken, or nil when the client sent none.
func progressFunc(ctx context.Context, req mcpgo.CallToolRequest) func(string) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	token := req.Params.Meta.ProgressToken
	n := 0
	return func(message string) {
		n++
		_ = srv.SendNotificationToClient(ctx, string(mcpgo.MethodNotificationProgress), map[string]any{
			"progressToken": token, "progress": n, "message": message,
		})
	}
}

func resultText(res *mcpgo.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcpgo.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

type verdictKey struct{}

// VerdictFrom returns the Guard's verdict on the tool call whose context
// ctx is (or derives from), so that the Browser can tell the Recorder what
// the call really addressed (its Note).
func VerdictFrom(ctx context.Context) (Verdict, bool) {
	v, ok := ctx.Value(verdictKey{}).(Verdict)
	return v, ok
}
