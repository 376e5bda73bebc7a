//go:build unix

package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/bridge"
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

// cpuTime is this process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measureCPU reports the process's CPU time per op (cpu-µs/op: the
// daemon's, the client's and the fake extensions'), the figure that noise
// on a shared machine moves least; call the returned func after the loop.
func measureCPU(b *testing.B) (stop func()) {
	b.ReportAllocs()
	b.ResetTimer()
	t0 := cpuTime(b)
	return func() {
		b.StopTimer()
		b.ReportMetric(float64((cpuTime(b)-t0).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

// benchDaemon runs the daemon with profiles profiles of tabs fake tabs
// each, every tab answering every request with a small page, and returns
// its config.
func benchDaemon(b *testing.B, profiles, tabs int) (config.Paths, string) {
	return benchDaemonPage(b, profiles, tabs, "- heading \"Example\" [level=1]\n- link \"More\" [ref=e1]\n- textbox \"Search\" [ref=e2]")
}

// benchDaemonPage is benchDaemon whose tabs answer with the snapshot text
// snapshot.
func benchDaemonPage(b *testing.B, profiles, tabs int, snapshot string) (config.Paths, string) {
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
	for i := range profiles {
		e, err := fakeext.Dial("ws://"+addr+PathExtension, protocol.Hello{
			ProfileID: fmt.Sprintf("bench-%02d-0000-4000-8000-000000000000", i), Label: fmt.Sprintf("P%02d", i), Tabs: list}, "")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		go e.Serve(func(req protocol.Request) (any, *protocol.Error) {
			var p protocol.TabParams
			_ = json.Unmarshal(req.Params, &p)
			return protocol.PageResult{Tab: p.Tab, URL: "https://example.com/", Title: "Example",
				Snapshot: snapshot}, nil
		})
	}
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
			p, addr := benchDaemon(b, 1, 8)
			c := benchClient(b, p, addr, v)
			args := map[string]any{"action": "list"}
			stop := measureCPU(b)
			for range b.N {
				benchCall(b, c, "browser_tabs", args)
			}
			stop()
		})
	}
}

// BenchmarkCallPathParallel is the concurrency bench's setup (32
// profiles × 8 tabs, 32 MCP sessions calling at once) and mix of calls
// (half browser_snapshot, the rest browser_click and browser_type).
func BenchmarkCallPathParallel(b *testing.B) {
	p, addr := benchDaemon(b, 32, 8)
	const sessions = 32
	clients := make([]*client.Client, sessions)
	for i := range clients {
		clients[i] = benchClient(b, p, addr, mcp.LATEST_PROTOCOL_VERSION)
	}
	var next atomic.Int64
	b.SetParallelism(max(1, sessions/runtime.GOMAXPROCS(0)))
	stop := measureCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		i := int(next.Add(1)) - 1
		c := clients[i%sessions]
		for n := 0; pb.Next(); n++ {
			args := map[string]any{"profile": fmt.Sprintf("p%02d", (i+n)%32), "tab": 1 + n%8}
			tool := "browser_snapshot"
			switch n % 10 {
			case 5, 6, 7:
				tool, args["ref"] = "browser_click", "e1"
			case 8, 9:
				tool, args["ref"], args["text"] = "browser_type", "e2", "hello"
			}
			benchCall(b, c, tool, args)
		}
	})
	stop()
}

// largeSnapshot is a snapshot's text of n table rows, each with a link, a
// button and a text box (as the bench's page-size series: about 87 bytes
// per element).
func largeSnapshot(n int) string {
	var sb strings.Builder
	sb.WriteString("- table \"Rows\" [ref=e1]\n")
	for i := range n / 3 {
		fmt.Fprintf(&sb, "  - row \"Row %d <b>&amp;\" [ref=e%d]\n    - link \"Open row %d\" [ref=e%d] /rows/%d?a=1&b=2\n    - button \"Delete row %d\" [ref=e%d]\n    - textbox \"Note for row %d\" [ref=e%d]: \"value \\\"%d\\\"\"\n",
			i, 4*i+2, i, 4*i+3, i, i, 4*i+4, i, 4*i+5, i)
	}
	return sb.String()
}

// BenchmarkCallPathLargeSnapshot is an uncapped browser_snapshot of a
// 50 000-element page (about 4 MB of text) through the daemon, one call at
// a time: the Go side of the bench's page-size series.
func BenchmarkCallPathLargeSnapshot(b *testing.B) {
	snap := largeSnapshot(50000)
	p, addr := benchDaemonPage(b, 1, 1, snap)
	c := benchClient(b, p, addr, mcp.LATEST_PROTOCOL_VERSION)
	args := map[string]any{"tab": 1}
	b.SetBytes(int64(len(snap)))
	stop := measureCPU(b)
	for range b.N {
		benchCall(b, c, "browser_snapshot", args)
	}
	stop()
}

// BenchmarkCallPathBridgeNoop is BenchmarkCallPathNoop through `tether
// mcp`'s bridge (over pipes, as an AI app's stdio), as the bench's no-op
// is: its CPU per op less BenchmarkCallPathNoop's is about the bridge's.
func BenchmarkCallPathBridgeNoop(b *testing.B) {
	for _, v := range []string{mcp.LATEST_PROTOCOL_VERSION, mcp.ProtocolVersion20251125} {
		b.Run(v, func(b *testing.B) {
			p, addr := benchDaemon(b, 1, 8)
			token, err := p.ReadToken()
			if err != nil {
				b.Fatal(err)
			}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			br := bridge.New(bridge.Config{Endpoint: func(context.Context) (string, string, error) {
				return "http://" + addr + PathMCP, token, nil
			}})
			go func() { _ = br.Run(context.Background(), inR, outW); outW.Close() }()
			b.Cleanup(func() { inW.Close() })
			out := bufio.NewReader(outR)
			roundTrip := func(line string) {
				if _, err := io.WriteString(inW, line+"\n"); err != nil {
					b.Fatal(err)
				}
				answer, err := out.ReadBytes('\n')
				if err != nil || !bytes.Contains(answer, []byte(`"result"`)) {
					b.Fatalf("answer %s: %v", answer, err)
				}
			}
			roundTrip(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
			if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
				b.Fatal(err)
			}
			call := func(i int) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"browser_tabs","arguments":{"action":"list"}}}`, i)
			}
			for i := range 5 {
				roundTrip(call(1 + i))
			}
			stop := measureCPU(b)
			for i := range b.N {
				roundTrip(call(10 + i))
			}
			stop()
		})
	}
}
