// Package mcpclient holds what every test and the bench do with an mcp-go
// client: the initialize handshake as an AI app makes it, and the text of a
// tool result.
package mcpclient

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Initialize performs the MCP initialize handshake with clientInfo name
// (the name the timeline records as the client).
func Initialize(ctx context.Context, c *client.Client, name string) (*mcp.InitializeResult, error) {
	return InitializeVersion(ctx, c, name, mcp.LATEST_PROTOCOL_VERSION)
}

// InitializeVersion initializes c as the client name, asking for protocol
// version (mcp.ProtocolVersion20251125 for a client with an MCP session:
// the stateless 2026-07-28 protocol has none).
func InitializeVersion(ctx context.Context, c *client.Client, name, version string) (*mcp.InitializeResult, error) {
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	return c.Initialize(ctx, req)
}

// Text joins the text contents of a tool result, in order.
func Text(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, content := range res.Content {
		if tc, ok := content.(mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// Call runs tool with args (meta, if non-nil, is sent as the request's
// _meta) and returns the result's text and whether it is an error result.
func Call(ctx context.Context, c *client.Client, tool string, args map[string]any, meta *mcp.Meta) (string, bool, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	req.Params.Meta = meta
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", false, err
	}
	return Text(res), res.IsError, nil
}
