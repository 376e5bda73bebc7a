package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/fakeext"
	"github.com/tether-browser/tether/test/mcpclient"
)

// ConcurrencyResult is the concurrency benchmark's outcome.
type ConcurrencyResult struct {
	Profiles, Tabs, Calls, Workers int
	Errors                         int
	Elapsed                        time.Duration
	// CPUSeconds is the user + system time of this whole process while
	// the calls ran: the daemon, and the MCP clients and fake extensions
	// that drive it (0 when /proc is not there).
	CPUSeconds float64
	// MCP is the latency of each call through the MCP endpoint.
	MCP Percentiles
	// Bare is the latency of a bare WebSocket request/response round trip
	// with the same frames, measured in the same run.
	Bare Percentiles
	// Apps are the two AI apps that ran alongside the workers on the first
	// profile, each in its own session and its own tab, calling without a
	// tab: AppCalls in all, AppErrors failed, Crossings reached a tab not
	// their own.
	Apps                           []string
	AppCalls, AppErrors, Crossings int
}

// ownedTabs is the first profile's fake extension state for the apps:
// tab_new opens a tab owned by the caller and reports it (tabs_changed)
// before answering, as the extension does.
type ownedTabs struct {
	mu   sync.Mutex
	ext  *fakeext.Ext
	tabs []protocol.TabInfo
}

func (o *ownedTabs) handle(req protocol.Request) (any, *protocol.Error) {
	if req.Method != protocol.MethodTabNew {
		return fakeHandler(req)
	}
	var p protocol.TabNewParams
	_ = json.Unmarshal(req.Params, &p)
	o.mu.Lock()
	n := len(o.tabs) + 1
	o.tabs = append(o.tabs, protocol.TabInfo{Tab: n, URL: "https://example.com/", Title: "Example", Owner: p.Owner})
	_ = o.ext.Send(protocol.TabsChanged{Type: protocol.TypeTabsChanged, Change: protocol.TabOpened, Tab: n, Tabs: slices.Clone(o.tabs)})
	o.mu.Unlock()
	return snapshotResult(n), nil
}

// Percentiles of a latency sample.
type Percentiles struct{ P50, P99 time.Duration }

func percentiles(d []time.Duration) Percentiles {
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[min(len(d)-1, int(q*float64(len(d))))] }
	return Percentiles{P50: at(0.50), P99: at(0.99)}
}

// snapshotResult is what every fake tab answers: a small page.
func snapshotResult(tab int) protocol.PageResult {
	return protocol.PageResult{Tab: tab, URL: "https://example.com/", Title: "Example",
		Snapshot: "- heading \"Example\" [level=1]\n- link \"More\" [ref=e1]\n- textbox \"Search\" [ref=e2]"}
}

func fakeHandler(req protocol.Request) (any, *protocol.Error) {
	var p protocol.TabParams
	_ = json.Unmarshal(req.Params, &p)
	if req.Method == protocol.MethodTabsList {
		return protocol.TabsListResult{}, nil
	}
	return snapshotResult(p.Tab), nil
}

// runConcurrency: profiles fake profiles × tabs tabs receive calls mixed
// calls (snapshot, click, type) through the MCP endpoint from workers
// concurrent MCP sessions.
// A non-empty cpuprofile names the file that gets a Go CPU profile of the
// calls (from the first to the last, the bare round trips left out).
func runConcurrency(ctx context.Context, profiles, tabs, calls, workers int, cpuprofile string) (ConcurrencyResult, error) {
	res := ConcurrencyResult{Profiles: profiles, Tabs: tabs, Calls: calls, Workers: workers}
	dir, err := os.MkdirTemp("", "tether-bench-")
	if err != nil {
		return res, err
	}
	paths := config.Paths{Dir: filepath.Join(dir, "cfg")}
	dctx, stop := context.WithCancel(ctx)
	addrc := make(chan string, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- daemon.Run(dctx, daemon.Config{Paths: paths, Version: "bench", AutoApproveProfiles: true,
			Logger: slog.New(slog.DiscardHandler), Ready: func(a string) { addrc <- a }})
	}()
	// Remove the config dir only once the daemon has stopped writing it.
	defer func() {
		stop()
		<-errc
		os.RemoveAll(dir)
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-errc:
		errc <- err // for the deferred wait
		return res, err
	}
	tabList := make([]protocol.TabInfo, tabs)
	for i := range tabList {
		tabList[i] = protocol.TabInfo{Tab: i + 1, URL: "https://example.com/", Title: "Example", Current: i == 0, Active: i == 0}
	}
	owned := &ownedTabs{tabs: slices.Clone(tabList)}
	for i := range profiles {
		e, err := fakeext.Dial("ws://"+addr+daemon.PathExtension, protocol.Hello{
			ProfileID: fmt.Sprintf("bench-%02d-0000-4000-8000-000000000000", i), Label: fmt.Sprintf("P%02d", i), Tabs: tabList}, "")
		if err != nil {
			return res, err
		}
		defer e.Close()
		if i == 0 {
			owned.ext = e
			go e.Serve(owned.handle)
			continue
		}
		go e.Serve(fakeHandler)
	}
	token, err := paths.ReadToken()
	if err != nil {
		return res, err
	}

	// dial starts an MCP client over streamable HTTP, initialized as name
	// with protocol version.
	dial := func(name, version string) (*client.Client, error) {
		c, err := client.NewStreamableHttpClient("http://"+addr+daemon.PathMCP,
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		if err != nil {
			return nil, err
		}
		if err := c.Start(ctx); err != nil {
			return nil, err
		}
		if _, err := mcpclient.InitializeVersion(ctx, c, name, version); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
	clients := make([]*client.Client, workers)
	for w := range clients {
		c, err := dial("bench", mcp.LATEST_PROTOCOL_VERSION)
		if err != nil {
			return res, err
		}
		defer c.Close()
		clients[w] = c
	}

	// Two AI apps, each one MCP session (MCP 2025-11-25) with a tab of its
	// own on the first profile, which the workers' calls reach too.
	res.Apps = []string{"app-a", "app-b"}
	appClients := make([]*client.Client, len(res.Apps))
	appTabs := make([]int, len(res.Apps))
	for i, name := range res.Apps {
		c, err := dial(name, mcp.ProtocolVersion20251125)
		if err != nil {
			return res, err
		}
		defer c.Close()
		req := mcp.CallToolRequest{}
		req.Params.Name = "browser_tabs"
		req.Params.Arguments = map[string]any{"action": "new", "profile": "p00"}
		out, err := c.CallTool(ctx, req)
		if err != nil || out.IsError {
			return res, fmt.Errorf("%s: open its tab: %v %s", name, err, mcpclient.Text(out))
		}
		if _, err := fmt.Sscanf(mcpclient.Text(out), "Opened tab %d.", &appTabs[i]); err != nil {
			return res, fmt.Errorf("%s: %q: %w", name, mcpclient.Text(out), err)
		}
		appClients[i] = c
	}

	lat := make([]time.Duration, calls)
	var next, errs atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	var appCalls, appErrs, crossings atomic.Int64
	appDone := make(chan struct{})
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return res, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return res, err
		}
	}
	cpu0, cpuErr := cpuSeconds(os.Getpid())
	start := time.Now()
	var apps sync.WaitGroup
	for i, c := range appClients {
		apps.Add(1)
		go func() {
			defer apps.Done()
			// A result names its tab "Tab 3. …", or "Tab 3: …" when it
			// carries only the changes since the app's last snapshot.
			want := []string{fmt.Sprintf("Tab %d. ", appTabs[i]), fmt.Sprintf("Tab %d: ", appTabs[i])}
			for n := 0; ; n++ {
				select {
				case <-appDone:
					return
				default:
				}
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = "browser_snapshot", map[string]any{}
				if n%2 == 1 {
					req.Params.Name, req.Params.Arguments = "browser_click", map[string]any{"ref": "e1"}
				}
				out, err := c.CallTool(ctx, req)
				appCalls.Add(1)
				switch {
				case err != nil || out.IsError:
					appErrs.Add(1)
					firstErr.Do(func() { fmt.Fprintln(os.Stderr, "first error:", err, out) })
				case !strings.Contains(mcpclient.Text(out), want[0]) && !strings.Contains(mcpclient.Text(out), want[1]):
					crossings.Add(1)
				}
			}
		}()
	}
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for {
				i := int(next.Add(1)) - 1
				if i >= calls {
					return
				}
				req := mcp.CallToolRequest{}
				args := map[string]any{"profile": fmt.Sprintf("p%02d", rng.IntN(profiles)), "tab": 1 + rng.IntN(tabs)}
				switch r := rng.IntN(10); {
				case r < 5:
					req.Params.Name = "browser_snapshot"
				case r < 8:
					req.Params.Name = "browser_click"
					args["ref"] = "e1"
				default:
					req.Params.Name = "browser_type"
					args["ref"], args["text"] = "e2", "hello"
				}
				req.Params.Arguments = args
				t0 := time.Now()
				out, err := clients[w].CallTool(ctx, req)
				lat[i] = time.Since(t0)
				if err != nil || out.IsError {
					errs.Add(1)
					firstErr.Do(func() { fmt.Fprintln(os.Stderr, "first error:", err, out) })
				}
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	close(appDone)
	apps.Wait()
	res.AppCalls, res.AppErrors, res.Crossings = int(appCalls.Load()), int(appErrs.Load()), int(crossings.Load())
	if cpu1, err := cpuSeconds(os.Getpid()); err == nil && cpuErr == nil {
		res.CPUSeconds = cpu1 - cpu0
	}
	if cpuprofile != "" {
		pprof.StopCPUProfile()
	}
	res.Errors = int(errs.Load())
	res.MCP = percentiles(lat)
	res.Bare, err = bareRoundTrips(ctx, calls, workers)
	return res, err
}

// bareRoundTrips measures request/response over one bare WebSocket with the
// same frames and concurrency, to isolate what the daemon and MCP add.
func bareRoundTrips(ctx context.Context, calls, workers int) (Percentiles, error) {
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		var mu sync.Mutex
		for {
			var req protocol.Request
			if err := ws.ReadJSON(&req); err != nil {
				return
			}
			go func() {
				raw, _ := json.Marshal(snapshotResult(1))
				mu.Lock()
				defer mu.Unlock()
				_ = ws.WriteJSON(protocol.Response{Type: protocol.TypeResponse, ID: req.ID, Result: raw})
			}()
		}
	}))
	defer srv.Close()
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		return Percentiles{}, err
	}
	defer ws.Close()
	var wmu, pmu sync.Mutex
	pending := map[string]chan struct{}{}
	go func() {
		for {
			var resp protocol.Response
			if err := ws.ReadJSON(&resp); err != nil {
				return
			}
			pmu.Lock()
			ch := pending[resp.ID]
			delete(pending, resp.ID)
			pmu.Unlock()
			if ch != nil {
				close(ch)
			}
		}
	}()
	lat := make([]time.Duration, calls)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= calls {
					return
				}
				id := fmt.Sprint(i)
				ch := make(chan struct{})
				pmu.Lock()
				pending[id] = ch
				pmu.Unlock()
				params, _ := json.Marshal(protocol.ClickParams{TabParams: protocol.TabParams{Tab: 1}, Ref: "e1"})
				t0 := time.Now()
				wmu.Lock()
				err := ws.WriteJSON(protocol.Request{Type: protocol.TypeRequest, ID: id, Method: protocol.MethodClick, Params: params, TimeoutMs: 30000})
				wmu.Unlock()
				if err != nil {
					return
				}
				<-ch
				lat[i] = time.Since(t0)
			}
		}()
	}
	wg.Wait()
	return percentiles(lat), nil
}

// concurrencyBaseline is the concurrency bench's throughput (calls/s, 32
// sessions) that issue 16 measured before the timeline left the call path:
// its throughput target is twice this. It was measured on another day, so
// the ratio carries that day's load too.
const concurrencyBaseline = 1700
