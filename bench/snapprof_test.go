package main

// A profiling helper for the uncapped snapshot of a large page (issue 16),
// not part of the bench's runs: it skips unless SNAPPROF_BIN is set.
//
//	SNAPPROF_BIN=$PWD/bin/tether go test -count=1 -run TestSnapProf -v ./bench/
//
// starts Tether (uncapped, as `bench pagesize` does), loads the
// SNAPPROF_N-element page (default 50 000), times SNAPPROF_ROUNDS
// snapshots (default 3), then takes one more while the page's renderer,
// the service worker and the offscreen document are CPU-profiled over CDP
// (the page's profile covers the content script's isolated world). It logs
// each profile's busy time per 100 ms from the call's start (so where the
// time goes end to end: page, then service worker, then offscreen
// document, then the daemon, bridge and client), its top functions, and
// writes the profiles to $TMPDIR/snapprof-*.cpuprofile (Chrome DevTools
// opens them). SNAPPROF_TEXT=file keeps the snapshot's text.
// SNAPPROF_FIND=text profiles a browser_find of that text instead of the
// last snapshot, SNAPPROF_FINDROLE=role one of that role alone.
//
// SNAPPROF_BUNDLES=old=a.js,new=b.js instead compares snapshot code in the
// same (hidden, as Tether's tab is) page: each script runs in an isolated
// world of its own and must define globalThis.__snap(maxChars), returning
// an object with a "snap" field (ms); they are alternated round by round.
// One built from an extension tree with esbuild
// (src/content/snapshot.ts's snapshotPage with a RefRegistry, timed with
// performance.now(), plus a hash of the text to compare outputs) shows the
// content script's cost without the transport. SNAPPROF_HEAP=name also
// samples that bundle's allocations (V8's sampling heap profiler, objects
// collected by minor and major GCs included) over one snapshot, and
// SNAPPROF_CPU=name CPU-profiles one of its calls (top functions logged, the
// profile written to $TMPDIR/snapprof-name.cpuprofile).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/heapprofiler"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
	"golang.org/x/sys/unix"

	"github.com/tether-browser/tether/test/e2e"
)

// TestSnapProf: see the file's comment.
func TestSnapProf(t *testing.T) {
	bin := os.Getenv("SNAPPROF_BIN")
	if bin == "" {
		t.Skip("no SNAPPROF_BIN")
	}
	n, _ := strconv.Atoi(os.Getenv("SNAPPROF_N"))
	if n == 0 {
		n = 50000
	}
	rounds, _ := strconv.Atoi(os.Getenv("SNAPPROF_ROUNDS"))
	if rounds == 0 {
		rounds = 3
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	srv := httptest.NewServer(sizeServerMux())
	defer srv.Close()
	tmp := t.TempDir()
	tt, err := startTetherCapped(ctx, bin, filepath.Join(tmp, "u"), 10_000_000)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { tt.s.Close(); tt.stop() }()
	var dialogs int
	if _, _, err := tt.do(ctx, tt.navigate(fmt.Sprintf("%s/size/%d.html", srv.URL, n)), &dialogs); err != nil {
		t.Logf("navigate: %v", err)
	}
	text, d, err := tt.do(ctx, tt.snapshot, &dialogs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("warm-up snapshot: %v, %d bytes", d, len(text))
	if out := os.Getenv("SNAPPROF_TEXT"); out != "" {
		_ = os.WriteFile(out, []byte(text), 0o644)
	}
	url, err := e2e.DevToolsURL(tt.profileDir, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	alloc, acancel := remote.NewAllocator(ctx, url)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(alloc)
	defer bcancel()
	if err := chromedp.Do(bctx); err != nil {
		t.Fatal(err)
	}
	infos, err := chromedp.Targets(bctx)
	if err != nil {
		t.Fatal(err)
	}
	var walls []time.Duration
	// Unprofiled rounds first.
	for range rounds {
		_, d, err := tt.do(ctx, tt.snapshot, &dialogs)
		if err != nil {
			t.Fatal(err)
		}
		walls = append(walls, d)
	}
	t.Logf("unprofiled walls: %v", walls)
	if spec := os.Getenv("SNAPPROF_BUNDLES"); spec != "" {
		for _, in := range infos {
			if in.Type != "page" || !strings.Contains(in.URL, "/size/") {
				continue
			}
			c, _ := chromedp.NewContext(bctx, chromedp.WithTargetID(in.TargetID))
			if err := chromedp.Do(c); err != nil {
				t.Fatal(err)
			}
			ft, err := chromedp.Call(c, page.GetFrameTree, cdp.Empty{})
			if err != nil {
				t.Fatal(err)
			}
			yes := true
			var names []string
			ids := map[string]runtime.ExecutionContextID{}
			for _, kv := range strings.Split(spec, ",") {
				name, file, _ := strings.Cut(kv, "=")
				src, _ := os.ReadFile(file)
				w, err := chromedp.Call(c, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: ft.FrameTree.Frame.ID, WorldName: "bench-" + name})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := chromedp.Call(c, runtime.Evaluate, runtime.EvaluateParams{Expression: string(src) + ";0", ContextID: w.ExecutionContextID}); err != nil {
					t.Fatal(err)
				}
				ids[name] = w.ExecutionContextID
				names = append(names, name)
			}
			r, _ := chromedp.Call(c, runtime.Evaluate, runtime.EvaluateParams{Expression: "document.visibilityState + ' ' + document.hidden", ReturnByValue: &yes})
			t.Logf("page visibility: %s", r.Result.Value)
			snaps := map[string][]float64{}
			for i := range rounds {
				for _, name := range names {
					r, err := chromedp.Call(c, runtime.Evaluate, runtime.EvaluateParams{Expression: "__snap(10000000)", ContextID: ids[name], ReturnByValue: &yes})
					if err != nil {
						t.Fatal(err)
					}
					var m map[string]any
					_ = json.Unmarshal(r.Result.Value, &m)
					snaps[name] = append(snaps[name], m["snap"].(float64))
					t.Logf("%d %s: %s", i, name, r.Result.Value)
					time.Sleep(1500 * time.Millisecond)
				}
			}
			if cp := os.Getenv("SNAPPROF_CPU"); cp != "" {
				if _, err := chromedp.Call(c, profiler.Enable, cdp.Empty{}); err != nil {
					t.Fatal(err)
				}
				_, _ = chromedp.Call(c, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 100})
				if _, err := chromedp.Call(c, profiler.Start, cdp.Empty{}); err != nil {
					t.Fatal(err)
				}
				if _, err := chromedp.Call(c, runtime.Evaluate, runtime.EvaluateParams{Expression: "__snap(10000000)", ContextID: ids[cp], ReturnByValue: &yes}); err != nil {
					t.Fatal(err)
				}
				res, err := chromedp.Call(c, profiler.Stop, cdp.Empty{})
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := json.Marshal(res.Profile)
				out := filepath.Join(os.TempDir(), "snapprof-"+cp+".cpuprofile")
				_ = os.WriteFile(out, raw, 0o644)
				t.Logf("== %s: %s\n%s", cp, out, profSummary(res.Profile))
			}
			if hp := os.Getenv("SNAPPROF_HEAP"); hp != "" {
				yes := true
				_, _ = chromedp.Call(c, heapprofiler.Enable, cdp.Empty{})
				if _, err := chromedp.Call(c, heapprofiler.StartSampling, heapprofiler.StartSamplingParams{SamplingInterval: 8192, IncludeObjectsCollectedByMajorGC: &yes, IncludeObjectsCollectedByMinorGC: &yes}); err != nil {
					t.Fatal(err)
				}
				if _, err := chromedp.Call(c, runtime.Evaluate, runtime.EvaluateParams{Expression: "__snap(10000000)", ContextID: ids[hp], ReturnByValue: &yes}); err != nil {
					t.Fatal(err)
				}
				res, err := chromedp.Call(c, heapprofiler.StopSampling, cdp.Empty{})
				if err != nil {
					t.Fatal(err)
				}
				self := map[string]float64{}
				incl := map[string]float64{}
				var walk func(n *heapprofiler.SamplingHeapProfileNode, path []string) float64
				walk = func(n *heapprofiler.SamplingHeapProfileNode, path []string) float64 {
					k := fmt.Sprintf("%s:%d", n.CallFrame.FunctionName, n.CallFrame.LineNumber+1)
					self[k] += n.SelfSize
					tot := n.SelfSize
					for _, ch := range n.Children {
						tot += walk(ch, append(path, k))
					}
					seen := false
					for _, p := range path {
						if p == k {
							seen = true
						}
					}
					if !seen {
						incl[k] += tot
					}
					return tot
				}
				total := walk(res.Profile.Head, nil)
				t.Logf("allocated %.1f MB", total/1e6)
				for _, m := range []map[string]float64{self, incl} {
					var sb strings.Builder
					for _, x := range largestFirst(m, 40) {
						fmt.Fprintf(&sb, "%8.2f MB %s\n", x.v/1e6, x.k)
					}
					t.Logf("alloc:\n%s", sb.String())
				}
			}
			for _, name := range names {
				xs := snaps[name]
				sort.Float64s(xs)
				t.Logf("%s: median %.0f ms of %v", name, xs[len(xs)/2], xs)
			}
		}
		return
	}
	type prof struct {
		name string
		ctx  context.Context
	}
	var profs []prof
	for _, in := range infos {
		t.Logf("target %s %s %s", in.Type, in.TargetID, in.URL)
		name := ""
		switch {
		case in.Type == "page" && strings.Contains(in.URL, "/size/"):
			name = "page"
		case strings.Contains(in.URL, "offscreen"):
			name = "offscreen"
		case in.Type == "service_worker":
			name = "sw"
		}
		if name == "" {
			continue
		}
		c, _ := chromedp.NewContext(bctx, chromedp.WithTargetID(in.TargetID))
		if err := chromedp.Do(c); err != nil {
			t.Logf("%s: attach: %v", name, err)
			continue
		}
		if _, err := chromedp.Call(c, profiler.Enable, cdp.Empty{}); err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		_, _ = chromedp.Call(c, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 200})
		if _, err := chromedp.Call(c, profiler.Start, cdp.Empty{}); err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		profs = append(profs, prof{name, c})
	}
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	callStart := ts.Nano() / 1000
	profiled := tt.snapshot
	if text := os.Getenv("SNAPPROF_FIND"); text != "" {
		profiled = call{"browser_find", map[string]any{"text": text}}
	}
	if r := os.Getenv("SNAPPROF_FINDROLE"); r != "" {
		profiled = call{"browser_find", map[string]any{"role": r}}
	}
	_, d, err = tt.do(ctx, profiled, &dialogs)
	if err != nil {
		t.Fatal(err)
	}
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	callEnd := ts.Nano() / 1000
	t.Logf("profiled wall: %v (call %d..%d us mono)", d, callStart, callEnd)
	for _, p := range profs {
		res, err := chromedp.Call(p.ctx, profiler.Stop, cdp.Empty{})
		if err != nil {
			t.Logf("%s stop: %v", p.name, err)
			continue
		}
		pr := res.Profile
		raw, _ := json.Marshal(pr)
		out := filepath.Join(os.TempDir(), "snapprof-"+p.name+".cpuprofile")
		_ = os.WriteFile(out, raw, 0o644)
		t.Logf("== %s: %s\n%s\n%s", p.name, out, busyTimeline(pr, callStart, callEnd), profSummary(pr))
	}
}

// profSummary is a CPU profile's total, and its top functions by self and by inclusive time.
func profSummary(p *profiler.Profile) string {
	byID := map[int64]*profiler.ProfileNode{}
	parent := map[int64]int64{}
	for _, nd := range p.Nodes {
		byID[nd.ID] = nd
		for _, c := range nd.Children {
			parent[c] = nd.ID
		}
	}
	self := map[string]float64{}
	incl := map[string]float64{}
	var total, idle float64
	name := func(nd *profiler.ProfileNode) string {
		u := nd.CallFrame.URL
		if i := strings.LastIndex(u, "/"); i >= 0 {
			u = u[i+1:]
		}
		return fmt.Sprintf("%s %s:%d", nd.CallFrame.FunctionName, u, nd.CallFrame.LineNumber+1)
	}
	for i, id := range p.Samples {
		dt := float64(p.TimeDeltas[i]) / 1000
		if i+1 < len(p.TimeDeltas) {
			dt = float64(p.TimeDeltas[i+1]) / 1000
		}
		nd := byID[id]
		total += dt
		if nd.CallFrame.FunctionName == "(idle)" || nd.CallFrame.FunctionName == "(program)" {
			idle += dt
		}
		self[name(nd)] += dt
		seen := map[string]bool{}
		for x := id; ; {
			k := name(byID[x])
			if !seen[k] {
				seen[k] = true
				incl[k] += dt
			}
			px, ok := parent[x]
			if !ok {
				break
			}
			x = px
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "total %.0f ms, idle+program %.0f ms\n", total, idle)
	top := func(m map[string]float64, k int, title string) {
		fmt.Fprintf(&sb, "-- %s\n", title)
		for _, x := range largestFirst(m, k) {
			fmt.Fprintf(&sb, "%8.1f ms  %s\n", x.v, x.k)
		}
	}
	top(self, 45, "self")
	top(incl, 60, "inclusive")
	return sb.String()
}

// keyed is one entry of a map of figures.
type keyed struct {
	k string
	v float64
}

// largestFirst is m's n largest entries, largest first.
func largestFirst(m map[string]float64, n int) []keyed {
	xs := make([]keyed, 0, len(m))
	for k, v := range m {
		xs = append(xs, keyed{k, v})
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i].v > xs[j].v })
	return xs[:min(n, len(xs))]
}

// busyTimeline: per 100 ms from the call's start, ms of non-idle samples (GC in brackets).
func busyTimeline(p *profiler.Profile, callStart, callEnd int64) string {
	byID := map[int64]*profiler.ProfileNode{}
	for _, nd := range p.Nodes {
		byID[nd.ID] = nd
	}
	busy := map[int64]float64{}
	gc := map[int64]float64{}
	ts := int64(p.StartTime)
	var maxB int64
	for i, id := range p.Samples {
		ts += p.TimeDeltas[i]
		f := byID[id].CallFrame.FunctionName
		if f == "(idle)" {
			continue
		}
		b := (ts - callStart) / 100000
		dt := 0.0
		if i+1 < len(p.TimeDeltas) {
			dt = float64(p.TimeDeltas[i+1]) / 1000
		}
		busy[b] += dt
		if f == "(garbage collector)" {
			gc[b] += dt
		}
		if b > maxB {
			maxB = b
		}
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "call ends at %d ms; busy ms per 100 ms [gc]: ", (callEnd-callStart)/1000)
	for b := int64(-2); b <= maxB; b++ {
		fmt.Fprintf(&sb, "%d:%.0f[%.0f] ", b*100, busy[b], gc[b])
	}
	return sb.String()
}
