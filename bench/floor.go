package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	"github.com/tether-browser/tether/bridge"
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

// The bridged floor is the same server in the shape an AI app reaches
// Tether in: the client starts a stdio relay (Tether's own, package bridge,
// as `tether mcp` runs it), which posts each message over loopback HTTP to
// the server's streamable HTTP endpoint in a third process. It is what the
// shape costs with mcp-go on both ends and none of the daemon's own work
// (no token, Host or Origin check, guard, broker or timeline).
const (
	// floorHTTPArg serves the floor over streamable HTTP on a loopback
	// port, printing its URL as the first line of stdout.
	floorHTTPArg = "mcp-floor-http"
	// floorBridgeArg relays stdio to the URL that follows it.
	floorBridgeArg = "mcp-floor-bridge"
)

// floorServer is mcp-go's server with the floor's one tool.
func floorServer() *mcpserver.MCPServer {
	s := mcpserver.NewMCPServer("tether-bench-floor", "1")
	s.AddTool(mcp.NewTool("list", mcp.WithDescription("Lists the pages (a fixed answer)."), mcp.WithReadOnlyHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(floorAnswer), nil
		})
	return s
}

// runFloorHTTP serves the floor over streamable HTTP until it is killed.
func runFloorHTTP() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: floor HTTP server:", err)
		return 1
	}
	fmt.Printf("http://%s/mcp\n", ln.Addr())
	err = http.Serve(ln, mcpserver.NewStreamableHTTPServer(floorServer()))
	fmt.Fprintln(os.Stderr, "bench: floor HTTP server:", err)
	return 1
}

// runFloorBridge relays stdio to url with Tether's bridge until stdin ends.
func runFloorBridge(url string) int {
	b := bridge.New(bridge.Config{Endpoint: func(context.Context) (string, string, error) { return url, "floor", nil }})
	if err := b.Run(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench: floor bridge:", err)
		return 1
	}
	return 0
}

// runFloorServer serves the floor on stdin and stdout until stdin ends.
func runFloorServer() int {
	if err := mcpserver.ServeStdio(floorServer()); err != nil {
		fmt.Fprintln(os.Stderr, "bench: floor server:", err)
		return 1
	}
	return 0
}

// noopFloor times n calls of the floor's tool, after 5 to warm up, as
// noops times a server's no-op.
func noopFloor(ctx context.Context, dir string, n int) ([]time.Duration, error) {
	return timeFloor(ctx, "mcp-go floor", dir, n, floorServerArg)
}

// noopFloorBridged times n calls of the bridged floor's tool, after 5 to
// warm up, as noopFloor does: its HTTP server runs while they do.
func noopFloorBridged(ctx context.Context, dir string, n int) ([]time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	srv := exec.CommandContext(ctx, exe, floorHTTPArg)
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	srv.Stderr = os.Stderr
	out, err := srv.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("floor HTTP server: no URL: %w", err)
	}
	return timeFloor(ctx, "mcp-go floor, bridged", dir, n, floorBridgeArg, strings.TrimSpace(url))
}

// timeFloor starts the bench itself with args as a stdio MCP server in dir
// and times n calls of its tool, after 5 to warm up.
func timeFloor(ctx context.Context, name, dir string, n int, args ...string) ([]time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s, err := startSession(ctx, name, dir, nil, exe, args...)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return noops(ctx, &server{name: name, s: s, noop: call{"list", map[string]any{}}}, n)
}
