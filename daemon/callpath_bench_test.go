package daemon

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/fakeext"
	"github.com/tether-browser/tether/test/mcpclient"
)

// The benchmarks of the daemon's per-call path (issue 16, "no-op call"):
// the real daemon (Run) in this process, a fake extension over a real
// WebSocket, and mcp-go's client over streamable HTTP. Profile them with
//
//	go test -run '^$' -bench CallPath -cpuprofile cpu.out -memprofile mem.out ./daemon
//
// The client's work is in the profile too; the daemon's is what the
// packages tether/* and mcp-go/server account for.

// benchDaemon runs the daemon with one profile of tabs fake tabs, each
// answering every request with a small page, and returns its config.
func benchDaemon(b *testing.B, tabs int) (config.Paths, string) {
	b.Helper()
	p := config.Paths{Dir: filepath.Join(b.TempDir(), "cfg")}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Paths: p, Version: "bench", Logger: slog.New(slog.DiscardHandler),
			AutoApproveProfiles: true, Ready: func(a string) { addrc <- a }})
	}()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	})
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		b.Fatalf("daemon: %v", err)
	}
	list := make([]protocol.TabInfo, tabs)
	for i := range list {
		list[i] = protocol.TabInfo{Tab: i + 1, URL: "https://example.com/", Title: "Example", Current: i == 0, Active: i == 0}
	}
	e, err := fakeext.Dial("ws://"+addr+PathExtension, protocol.Hello{ProfileID: "bench-00-0000-4000-8000-000000000000", Label: "P00", Tabs: list})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	go e.Serve(func(req protocol.Request) (any, *protocol.Error) {
		return protocol.PageResult{Tab: 1, URL: "https://example.com/", Title: "Example",
			Snapshot: "- heading \"Example\" [level=1]\n- link \"More\" [ref=e1]\n- textbox \"Search\" [ref=e2]"}, nil
	})
	return p, addr
}

// benchClient is an MCP client over streamable HTTP, initialized with
// protocol version.
func benchClient(b *testing.B, p config.Paths, addr, version string) *client.Client {
	b.Helper()
	token, err := p.ReadToken()
	if err != nil {
		b.Fatal(err)
	}
	c, err := client.NewStreamableHttpClient("http://"+addr+PathMCP,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	if _, err := mcpclient.InitializeVersion(context.Background(), c, "bench", version); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func benchCall(b *testing.B, c *client.Client, tool string, args map[string]any) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	if res.IsError {
		b.Fatalf("%s: %s", tool, mcpclient.Text(res))
	}
}

// BenchmarkCallPathNoop is the bench's no-op: browser_tabs list with no
// profile, answered from the daemon's registry, one call at a time.
func BenchmarkCallPathNoop(b *testing.B) {
	for _, v := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.ProtocolVersion20251125} {
		b.Run(v, func(b *testing.B) {
			p, addr := benchDaemon(b, 8)
			c := benchClient(b, p, addr, v)
			args := map[string]any{"action": "list"}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				benchCall(b, c, "browser_tabs", args)
			}
		})
	}
}

// BenchmarkCallPathParallel is the concurrency bench's mix in miniature:
// 32 MCP sessions calling browser_snapshot on the fake tabs at once.
func BenchmarkCallPathParallel(b *testing.B) {
	p, addr := benchDaemon(b, 8)
	const sessions = 32
	clients := make([]*client.Client, sessions)
	for i := range clients {
		clients[i] = benchClient(b, p, addr, mcp.LATEST_PROTOCOL_VERSION)
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.SetParallelism((sessions + 1) / 2)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) - 1
		c := clients[i%sessions]
		args := map[string]any{"profile": "p00", "tab": 1 + i%8}
		for pb.Next() {
			benchCall(b, c, "browser_snapshot", args)
		}
	})
}
