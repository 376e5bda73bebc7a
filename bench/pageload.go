package main

// Page-load cost of Tether in tabs the user has not shared: the same pages
// loaded, interleaved, in Chromium without the extension and in Chromium
// with it (paired, daemon running, tab not shared). Per page: load time
// (loadEventEnd of the navigation timing), script time (CDP
// Performance.getMetrics ScriptDuration) and JS heap used
// (JSHeapUsedSize). Besides the corpus, a page with 20 iframes (the
// per-frame cost) and one making 200 requests (the cost of webRequest:
// the extension registers its listeners per shared tab, filtered by tabId,
// so with nothing shared it should have none, and Chrome dispatches nothing).
// A third browser holds the extension minus webRequest, for
// what the permission itself costs (Chromium proxies every request of a
// profile whose extensions hold it).
// Before measuring, the bench lists, over CDP in the extension's service
// worker, the webRequest events that have a listener, and reports them.
// `go run ./bench pageload`.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/extension"
	"github.com/tether-browser/tether/launcher"
	"github.com/tether-browser/tether/test/e2e"
)

// loadSample is one page load.
type loadSample struct {
	LoadMS, ScriptMS, HeapMB float64
}

// pageLoadResult pairs each page's median load with and without Tether.
type pageLoadResult struct {
	Pages  int
	Rounds int
	Frames map[string]int // frames per page
	Plain  map[string][]loadSample
	Tether map[string][]loadSample
	// Unproxied is Chromium with Tether's extension without the
	// permission that makes Chromium proxy the profile's requests
	// (webRequest): Tether − Unproxied is what that permission costs.
	Unproxied map[string][]loadSample
	// Listeners are the webRequest events with a listener in the Tether
	// browser's service worker, nothing being shared (none expected).
	Listeners []string
}

// webRequestEvents are the events the extension's service worker listens
// to for each shared tab (extension/src/background/network-listeners.ts).
var webRequestEvents = []string{"onBeforeRequest", "onSendHeaders", "onHeadersReceived", "onCompleted", "onErrorOccurred"}

// requestsPageCount is how many requests the many-requests page makes.
const requestsPageCount = 200

// requestsPage makes requestsPageCount image requests, all of which
// hold its load event; every URL is new (round) and not cacheable, so each
// one reaches the network and Chrome's webRequest dispatch.
func requestsPage(round string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "<!doctype html><title>%d requests</title>", requestsPageCount)
	for i := range requestsPageCount {
		fmt.Fprintf(&sb, `<img src="/px.svg?r=%s&amp;i=%d" width="4" height="4">`, round, i)
	}
	return sb.String()
}

func runPageLoad(args []string) int {
	fs := flag.NewFlagSet("pageload", flag.ExitOnError)
	bin := fs.String("bin", "bin/tether", "the tether binary (make build)")
	corpus := fs.String("corpus", filepath.Join("..", "shared", "corpus", "readability"), "folder of <page>/source.html")
	pages := fs.Int("pages", 30, "corpus pages (0: all)")
	rounds := fs.Int("rounds", 5, "loads of each page in each browser")
	_ = fs.Parse(args)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	r, err := measurePageLoad(ctx, *bin, *corpus, *pages, *rounds)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	writePageLoad(os.Stdout, r)
	return 0
}

// unproxiedPermissions are the manifest permissions the bench's third
// browser goes without. With any of webRequest, webRequestBlocking,
// declarativeNetRequest(WithHostAccess), declarativeWebRequest or webview
// loaded, Chromium routes every request of the profile through its
// extensions' proxying URLLoaderFactory, listeners or not
// (extensions/browser/api/web_request/web_request_api.cc:
// HasAnyWebRequestPermissions, MayHaveProxies); Tether holds webRequest
// (its service worker runs without it: no network records).
var unproxiedPermissions = []string{"webRequest"}

// writeExtensionWithout writes Tether's extension into dir, paired with the
// daemon on port, with the manifest's permissions minus drop.
func writeExtensionWithout(dir string, port int, drop []string) error {
	if err := launcher.WriteExtension(extension.Dist(), dir, launcher.ExtensionConfig{Port: port, Label: "Tether without webRequest"}); err != nil {
		return err
	}
	path := filepath.Join(dir, "manifest.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	perms, _ := m["permissions"].([]any)
	kept := perms[:0]
	for _, p := range perms {
		if s, _ := p.(string); !slices.Contains(drop, s) {
			kept = append(kept, p)
		}
	}
	if len(kept) != len(perms)-len(drop) {
		return fmt.Errorf("the extension's manifest lacks one of %v: the bench's unproxied browser would be the same as Tether's", drop)
	}
	m["permissions"] = kept
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// daemonPort reads the running daemon's port from its record in cfg.
func daemonPort(cfg string) (int, error) {
	rec, err := config.Paths{Dir: cfg}.ReadDaemonRecord()
	if err != nil {
		return 0, fmt.Errorf("read the daemon's record: %w", err)
	}
	return rec.Port, nil
}

// framesPage is a page with 20 iframes, for the per-frame cost.
func framesPage() string {
	var sb strings.Builder
	sb.WriteString("<!doctype html><title>20 iframes</title>")
	for i := range 20 {
		fmt.Fprintf(&sb, `<iframe srcdoc="<p>frame %d</p><script>let s = 0; for (let i = 0; i < 1000; i++) s += i;</script>"></iframe>`, i)
	}
	return sb.String()
}

func measurePageLoad(ctx context.Context, bin, corpus string, n, rounds int) (*pageLoadResult, error) {
	files, _ := filepath.Glob(filepath.Join(corpus, "*", "source.html"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no corpus pages at %s/*/source.html", corpus)
	}
	slices.Sort(files)
	if n > 0 && n < len(files) {
		files = files[:n]
	}
	mux := http.NewServeMux()
	mux.Handle("/corpus/", http.StripPrefix("/corpus/", http.FileServer(http.Dir(corpus))))
	mux.HandleFunc("/frames.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, framesPage())
	})
	var loads atomic.Int64
	mux.HandleFunc("/requests.html", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, requestsPage(fmt.Sprint(loads.Add(1))))
	})
	mux.HandleFunc("/px.svg", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/svg+xml")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = io.WriteString(w, `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4" fill="#888"/></svg>`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	urls := map[string]string{"20-iframes": srv.URL + "/frames.html", fmt.Sprintf("%d-requests", requestsPageCount): srv.URL + "/requests.html"}
	for _, f := range files {
		rel, _ := filepath.Rel(corpus, f)
		urls[filepath.Base(filepath.Dir(f))] = srv.URL + "/corpus/" + filepath.ToSlash(rel)
	}
	tmp, err := os.MkdirTemp("", "tether-pageload-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	// Tether: daemon, paired browser.
	cfg := filepath.Join(tmp, "config")
	env := append(os.Environ(), config.EnvConfigDir+"="+cfg)
	daemon := exec.Command(bin, "serve", "--port", "0", "--auto-approve-profiles")
	daemon.Env = env
	daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dlog, _ := daemon.StderrPipe()
	if err := daemon.Start(); err != nil {
		return nil, err
	}
	defer stopGroup(daemon)
	log := e2e.NewLogWatcher(dlog)
	if _, _, err := log.WaitFor(0, 20*time.Second, "tether daemon listening"); err != nil {
		return nil, err
	}
	from := log.Len()
	tdir := filepath.Join(tmp, "tether-chrome")
	targs := append([]string{"browser", "--headless", "--user-data-dir", tdir, "--"}, chromiumFlags...)
	tb := exec.Command(bin, append(targs, "--remote-debugging-port=0")...)
	tb.Env = env
	tb.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := tb.Start(); err != nil {
		return nil, err
	}
	defer stopGroup(tb)
	_, first, err := log.WaitFor(from, 60*time.Second, "extension connected")
	if err != nil {
		return nil, err
	}
	// Chromium without the extension, same flags.
	pdir := filepath.Join(tmp, "plain-chrome")
	pargs := append([]string{"--headless=new", "--disable-gpu", "--no-sandbox", "--user-data-dir=" + pdir, "--remote-debugging-port=0"}, chromiumFlags...)
	pb := exec.Command(chromiumPath, append(pargs, "about:blank")...)
	pb.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := pb.Start(); err != nil {
		return nil, err
	}
	defer stopGroup(pb)
	// Chromium with the extension minus webRequest, paired
	// with the same daemon, launched with the same flags as `tether browser`.
	port, err := daemonPort(cfg)
	if err != nil {
		return nil, err
	}
	udir := filepath.Join(tmp, "unproxied-chrome")
	uext := filepath.Join(tmp, "unproxied-extension")
	if err := writeExtensionWithout(uext, port, unproxiedPermissions); err != nil {
		return nil, err
	}
	ub := exec.Command(chromiumPath, launcher.Args(launcher.Options{UserDataDir: udir, ExtensionDir: uext, Headless: true, ExtraArgs: append(slices.Clone(chromiumFlags), "--remote-debugging-port=0")})...)
	ub.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := ub.Start(); err != nil {
		return nil, err
	}
	defer stopGroup(ub)
	if _, _, err := log.WaitFor(first+1, 60*time.Second, "extension connected"); err != nil {
		return nil, fmt.Errorf("the browser without %s: %w; the daemon's log:\n%s", strings.Join(unproxiedPermissions, " and "), err, log.String())
	}

	plainTab, err := devtoolsTab(ctx, pdir)
	if err != nil {
		return nil, err
	}
	unproxiedTab, err := devtoolsTab(ctx, udir)
	if err != nil {
		return nil, err
	}
	tetherTab, err := devtoolsTab(ctx, tdir)
	if err != nil {
		return nil, err
	}
	listeners, err := webRequestListeners(tetherTab)
	if err != nil {
		return nil, err
	}
	logf("webRequest listeners registered in the Tether browser, nothing shared: %s", listedOrNone(listeners))
	r := &pageLoadResult{Pages: len(urls), Rounds: rounds, Frames: map[string]int{}, Plain: map[string][]loadSample{}, Tether: map[string][]loadSample{}, Unproxied: map[string][]loadSample{}, Listeners: listeners}
	names := make([]string, 0, len(urls))
	for name := range urls {
		names = append(names, name)
	}
	slices.Sort(names)
	for round := range rounds {
		logf("page load, round %d of %d", round+1, rounds)
		for i, name := range names {
			// Interleaved, and which browser goes first rotates.
			browsers := []struct {
				tab  context.Context
				into map[string][]loadSample
			}{{plainTab, r.Plain}, {tetherTab, r.Tether}, {unproxiedTab, r.Unproxied}}
			for j := range browsers {
				b := browsers[(i+round+j)%len(browsers)]
				tab, into := b.tab, b.into
				s, frames, err := loadOnce(ctx, tab, urls[name])
				if err != nil {
					logf("%s: %v", name, err)
					continue
				}
				into[name] = append(into[name], s)
				r.Frames[name] = frames
			}
		}
	}
	return r, nil
}

// webRequestListeners returns the webRequestEvents that have a listener in
// the running service worker of the extension (chrome.webRequest.<event>
// .hasListeners(), evaluated over CDP in the worker's target) of the
// browser that tab belongs to.
func webRequestListeners(tab context.Context) ([]string, error) {
	targets, err := chromedp.Targets(tab)
	if err != nil {
		return nil, err
	}
	var id target.ID
	for _, ti := range targets {
		if ti.Type == "service_worker" && strings.HasPrefix(ti.URL, "chrome-extension://"+broker.DefaultExtensionID+"/") {
			id = ti.TargetID
		}
	}
	if id == "" {
		return nil, fmt.Errorf("no service worker of the extension runs in the Tether browser")
	}
	sw, cancel := chromedp.NewContext(tab, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	defer cancel()
	names, _ := json.Marshal(webRequestEvents)
	return chromedp.Run(sw, chromedp.Evaluate[[]string](string(names)+`.filter((e) => chrome.webRequest[e].hasListeners())`))
}

func listedOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// devtoolsTab opens a tab over the DevTools port of the browser whose
// profile is dir.
func devtoolsTab(ctx context.Context, dir string) (context.Context, error) {
	url, err := e2e.DevToolsURL(dir, 60*time.Second)
	if err != nil {
		return nil, err
	}
	alloc, _ := remote.NewAllocator(ctx, url)
	tab, _ := chromedp.NewContext(alloc)
	if _, err := chromedp.Run(tab, chromedp.Navigate("about:blank")); err != nil {
		return nil, err
	}
	if _, err := chromedp.Call(tab, performance.Enable, performance.EnableParams{}); err != nil {
		return nil, err
	}
	return tab, nil
}

// loadOnce loads url in a fresh document and reads its costs.
func loadOnce(ctx context.Context, tab context.Context, url string) (loadSample, int, error) {
	if _, err := chromedp.Run(tab, chromedp.Navigate("about:blank")); err != nil {
		return loadSample{}, 0, err
	}
	before, err := chromedp.Call(tab, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		return loadSample{}, 0, err
	}
	if _, err := chromedp.Run(tab, chromedp.Navigate(url)); err != nil {
		return loadSample{}, 0, err
	}
	after, err := chromedp.Call(tab, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		return loadSample{}, 0, err
	}
	load, err := chromedp.Run(tab, chromedp.Evaluate[float64](`performance.getEntriesByType('navigation')[0].loadEventEnd`))
	if err != nil {
		return loadSample{}, 0, err
	}
	frames, err := chromedp.Run(tab, chromedp.Evaluate[int](`window.frames.length + 1`))
	if err != nil {
		return loadSample{}, 0, err
	}
	metric := func(m performance.GetMetricsResult, name string) float64 {
		for _, x := range m.Metrics {
			if x.Name == name {
				return x.Value
			}
		}
		return 0
	}
	return loadSample{
		LoadMS:   load,
		ScriptMS: (metric(after, "ScriptDuration") - metric(before, "ScriptDuration")) * 1000,
		HeapMB:   metric(after, "JSHeapUsedSize") / 1e6,
	}, frames, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func pick(s []loadSample, f func(loadSample) float64) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = f(x)
	}
	return out
}

// loadMS is the median load time of samples.
func loadMS(samples []loadSample) float64 {
	return median(pick(samples, func(s loadSample) float64 { return s.LoadMS }))
}

// loadDiffs is, for each page of names loaded in both, the median load
// time in b minus that in a (ms).
func loadDiffs(names []string, a, b map[string][]loadSample) []float64 {
	var out []float64
	for _, n := range names {
		if len(a[n]) > 0 && len(b[n]) > 0 {
			out = append(out, loadMS(b[n])-loadMS(a[n]))
		}
	}
	return out
}

func writePageLoad(w io.Writer, r *pageLoadResult) {
	var loadRatio, scriptDiff, heapPerFrame []float64
	var within int
	names := make([]string, 0, len(r.Plain))
	for n := range r.Plain {
		if len(r.Tether[n]) > 0 {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	loadDiff := loadDiffs(names, r.Plain, r.Tether)
	unproxiedDiff := loadDiffs(names, r.Plain, r.Unproxied)
	permissionDiff := loadDiffs(names, r.Unproxied, r.Tether)
	for _, n := range names {
		p, t := r.Plain[n], r.Tether[n]
		pl, tl := loadMS(p), loadMS(t)
		if pl > 0 {
			loadRatio = append(loadRatio, tl/pl)
		}
		if tl-pl <= max(0.02*pl, 3) {
			within++
		}
		scriptDiff = append(scriptDiff, median(pick(t, func(s loadSample) float64 { return s.ScriptMS }))-median(pick(p, func(s loadSample) float64 { return s.ScriptMS })))
		frames := max(r.Frames[n], 1)
		heapPerFrame = append(heapPerFrame, (median(pick(t, func(s loadSample) float64 { return s.HeapMB }))-median(pick(p, func(s loadSample) float64 { return s.HeapMB })))/float64(frames))
	}
	q := func(v []float64, p float64) float64 {
		s := slices.Clone(v)
		slices.Sort(s)
		if len(s) == 0 {
			return 0
		}
		return s[int(p*float64(len(s)-1))]
	}
	fmt.Fprintf(w, "### Page-load cost in unshared tabs (%d pages, %d loads each, interleaved)\n\n", len(names), r.Rounds)
	fmt.Fprintf(w, "Chromium without the extension against Chromium with Tether's extension (`tether browser`), paired and connected to a running daemon, the tab not shared; and a third browser with Tether's extension minus the %s permission, launched with `tether browser`'s flags and paired with the same daemon. Holding webRequest makes Chromium route every request of the profile through its extensions' proxying URL loader factory whether or not a listener exists (extensions/browser/api/web_request/web_request_api.cc, MayHaveProxies), so the third browser separates that cost from the rest of Tether's. Per page, the median of its loads in each browser; the table gives the spread over pages (p10 / median / p90). Load time is the navigation's loadEventEnd; script time and JS heap come from CDP Performance.getMetrics (ScriptDuration, JSHeapUsedSize). The pages are the readability corpus's first pages plus one page with 20 iframes and one making %d image requests (no-store), for webRequest: the extension registers its listeners per shared tab (filtered by tabId in the browser process), so an unshared tab's requests reach none. webRequest listeners registered in the Tether browser's service worker, nothing shared (checked over CDP before measuring): %s.\n", strings.Join(unproxiedPermissions, " and "), requestsPageCount, listedOrNone(r.Listeners))
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| metric | p10 | median | p90 | target |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	fmt.Fprintf(w, "| load time, Tether − without (ms) | %.1f | %.1f | %.1f | median ≤ max(2 %%, 3 ms) |\n", q(loadDiff, 0.1), q(loadDiff, 0.5), q(loadDiff, 0.9))
	fmt.Fprintf(w, "| load time ratio, Tether / without | %.3f | %.3f | %.3f | |\n", q(loadRatio, 0.1), q(loadRatio, 0.5), q(loadRatio, 0.9))
	if len(unproxiedDiff) > 0 {
		fmt.Fprintf(w, "| load time, Tether without %s − without (ms) | %.1f | %.1f | %.1f | |\n", strings.Join(unproxiedPermissions, " and "), q(unproxiedDiff, 0.1), q(unproxiedDiff, 0.5), q(unproxiedDiff, 0.9))
		fmt.Fprintf(w, "| load time, Tether − Tether without %s (ms): the permission's cost | %.1f | %.1f | %.1f | |\n", strings.Join(unproxiedPermissions, " and "), q(permissionDiff, 0.1), q(permissionDiff, 0.5), q(permissionDiff, 0.9))
	}
	fmt.Fprintf(w, "| script time, Tether − without (ms) | %.2f | %.2f | %.2f | |\n", q(scriptDiff, 0.1), q(scriptDiff, 0.5), q(scriptDiff, 0.9))
	fmt.Fprintf(w, "| JS heap per frame, Tether − without (MB) | %.3f | %.3f | %.3f | ≤ 0.05 |\n", q(heapPerFrame, 0.1), q(heapPerFrame, 0.5), q(heapPerFrame, 0.9))
	fmt.Fprintf(w, "\nPages within max(2 %%, 3 ms): %d of %d.", within, len(names))
	if s, ok := r.Tether["20-iframes"]; ok && len(r.Plain["20-iframes"]) > 0 {
		fmt.Fprintf(w, " The 20-iframe page: load %.1f ms with Tether, %.1f ms without; heap %.2f MB with, %.2f MB without.",
			median(pick(s, func(x loadSample) float64 { return x.LoadMS })), median(pick(r.Plain["20-iframes"], func(x loadSample) float64 { return x.LoadMS })),
			median(pick(s, func(x loadSample) float64 { return x.HeapMB })), median(pick(r.Plain["20-iframes"], func(x loadSample) float64 { return x.HeapMB })))
	}
	many := fmt.Sprintf("%d-requests", requestsPageCount)
	if s, ok := r.Tether[many]; ok && len(r.Plain[many]) > 0 {
		fmt.Fprintf(w, " The %d-request page: load %.1f ms with Tether, %.1f ms without, %.1f ms with Tether minus %s; script %.2f ms with, %.2f ms without.",
			requestsPageCount, loadMS(s), loadMS(r.Plain[many]), loadMS(r.Unproxied[many]), strings.Join(unproxiedPermissions, " and "),
			median(pick(s, func(x loadSample) float64 { return x.ScriptMS })), median(pick(r.Plain[many], func(x loadSample) float64 { return x.ScriptMS })))
	}
	fmt.Fprintln(w)
}
