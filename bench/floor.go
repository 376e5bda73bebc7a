package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// The no-op floor (issue 16's no-op target is a ratio to Chrome DevTools
// MCP): mcp-go's own stdio server with one tool that answers a fixed line
// from memory, in one process, with no daemon, browser, bridge, guard or
// timeline. It is what a call costs any server built on mcp-go's server
// package, measured with the bench's client in the same run, so that the
// no-op row can be read against what the library itself allows.

// floorServerArg is the bench's own subcommand that serves the floor over
// stdio (the bench starts itself with it).
const floorServerArg = "mcp-floor-server"

// floorAnswer is the floor's answer, about as long as Chrome DevTools
// MCP's list_pages answer for one page.
const floorAnswer = "## Pages\n1: about:blank [selected]"

// runFloorServer serves the floor on stdin and stdout until stdin ends.
func runFloorServer() int {
	s := mcpserver.NewMCPServer("tether-bench-floor", "1")
	s.AddTool(mcp.NewTool("list", mcp.WithDescription("Lists the pages (a fixed answer)."), mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(floorAnswer), nil
		})
	if err := mcpserver.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, "bench: floor server:", err)
		return 1
	}
	return 0
}

// noopFloor times n calls of the floor's tool, after 5 to warm up, as
// noops times a server's no-op.
func noopFloor(ctx context.Context, dir string, n int) ([]time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s, err := startSession(ctx, "mcp-go floor", dir, nil, exe, floorServerArg)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return noops(ctx, &server{name: "mcp-go floor", s: s, noop: call{"list", map[string]any{}}}, n)
}
