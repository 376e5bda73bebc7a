package daemon

import (
	"context"
	"time"

	"github.com/tether-browser/tether/broker"
	tmcp "github.com/tether-browser/tether/mcp"
	"github.com/tether-browser/tether/protocol"
)

// browserAdapter lets the MCP tools reach the broker through their own
// Browser interface.
type browserAdapter struct{ b *broker.Broker }

func (a browserAdapter) Call(ctx context.Context, profile string, method protocol.Method, params, result any, timeout time.Duration) error {
	var n *note
	if v, ok := tmcp.VerdictFrom(ctx); ok {
		if n, _ = v.Note.(*note); n != nil {
			profile = n.pin(profile, params)
		}
	}
	// The timeline records what the call really addressed (the broker's
	// choice when the call named no profile, or several were candidates),
	// and the tool learns which profile its call reached.
	toolCtx := ctx
	ctx = broker.WithResolved(ctx, func(r broker.Resolved) {
		if n != nil {
			n.resolved(r.Slug, r.Tab)
		}
		tmcp.ReportProfile(toolCtx, r.ID)
	})
	return a.b.Call(callerCtx(ctx), profile, method, params, result, timeout)
}

// callerCtx tells the broker which MCP session and app make the calls of ctx.
func callerCtx(ctx context.Context) context.Context {
	c := tmcp.CallerOf(ctx)
	if c.Session == "" {
		return ctx
	}
	return broker.WithCaller(ctx, brokerCaller(c))
}

func brokerCaller(c tmcp.Caller) broker.Caller {
	return broker.Caller{Session: c.Session, MCPSession: c.MCPSession, App: c.App}
}

func (a browserAdapter) Profiles(ctx context.Context) []tmcp.Profile {
	ps := a.b.ProfilesFor(brokerCaller(tmcp.CallerOf(ctx)))
	out := make([]tmcp.Profile, len(ps))
	for i, p := range ps {
		out[i] = tmcp.Profile{ID: p.ID, Label: p.Label, Slug: p.Slug, Connected: p.Connected, Tabs: p.Tabs,
			RTT: p.RTT, SlowLink: p.RTT >= broker.SlowLinkRTT}
	}
	return out
}
