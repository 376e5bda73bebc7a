//go:build !windows

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/test/mcpclient"
)

// soakDuration is how long TestSoak drives the browsers: 3 minutes, or
// $TETHER_SOAK (a Go duration) for a shorter run while developing.
func soakDuration(t *testing.T) time.Duration {
	if v := os.Getenv("TETHER_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("TETHER_SOAK=%q: %v", v, err)
		}
		return d
	}
	return 3 * time.Minute
}

// hungAfter is how long one tool call may take before the soak counts it
// as hung: longer than any tool's own timeout plus a reconnect.
const hungAfter = 90 * time.Second

// soakStats counts one profile's calls by outcome.
type soakStats struct {
	calls, ok, failed, hung int
	// clicksOK counts clicks that reported success; clicksMaybe clicks that
	// failed in a way that leaves open whether the page got them.
	clicksOK, clicksMaybe int
	// navOK holds the n of every navigation that reported success; navMaybe
	// those that failed.
	navOK, navMaybe []int
	// navAt is when each navigation was sent.
	navAt  map[int]time.Time
	errors map[string]int
}

// errorKind reduces an error text to its first words, for the summary.
func errorKind(text string) string {
	text = regexp.MustCompile(`\d+`).ReplaceAllString(text, "N")
	if len(text) > 120 {
		text = text[:120]
	}
	return text
}

// TestSoak drives two real profiles with random tool calls for three
// minutes (TETHER_SOAK) while their service workers are stopped every 15 s,
// the daemon is killed once (`tether mcp` starts a new one, as it does for
// an AI app) and one browser is restarted once. It expects no hung call, no
// action run twice (each page counts its clicks and loads in localStorage),
// and the state files intact.
func TestSoak(t *testing.T) {
	parallelLong(t)
	RequireChromium(t)
	bin := Binary(t)
	dur := soakDuration(t)
	port := freePort(t)
	d := StartDaemonAt(t, bin, t.TempDir()+"/config", port, "--auto-approve-profiles")
	paths := d.Paths
	t.Cleanup(func() { ShutdownDaemon(t, paths) }) // the daemon `tether mcp` starts
	counts := &soakCounts{clicks: map[string]int{}, loads: map[string]map[string]int{}}
	fixtures := httptest.NewServer(counts.handler(http.FileServer(http.Dir("testdata"))))
	defer fixtures.Close()

	browsers := map[string]*Browser{
		"work": StartBrowser(t, d, BrowserOptions{Label: "Work"}),
		"home": StartBrowser(t, d, BrowserOptions{Label: "Home"}),
	}
	var bmu sync.Mutex
	browser := func(p string) *Browser { bmu.Lock(); defer bmu.Unlock(); return browsers[p] }

	ctx := Context(t, dur+5*time.Minute)
	// A real `tether mcp` bridge with the daemon's port, which it starts
	// again itself when the daemon is gone (no tray: no display, no bus).
	c, err := client.NewStdioMCPClient(bin, []string{
		config.EnvConfigDir + "=" + paths.Dir, fmt.Sprintf("%s=%d", config.EnvPort, port),
		"DISPLAY=", "WAYLAND_DISPLAY=", "DBUS_SESSION_BUS_ADDRESS=",
	}, "mcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initClient(t, ctx, c)

	seed := rand.Uint64()
	t.Logf("soak for %s, seed %d", dur, seed)
	start := time.Now()
	end := start.Add(dur)
	stats := map[string]*soakStats{}
	var wg sync.WaitGroup
	for i, profile := range []string{"work", "home"} {
		st := &soakStats{errors: map[string]int{}, navAt: map[int]time.Time{}}
		stats[profile] = st
		wg.Add(1)
		go func() {
			defer wg.Done()
			soakWorker(ctx, t, c, profile, fixtures.URL, rand.New(rand.NewPCG(seed, uint64(i))), end, st)
		}()
	}

	// Faults, on a schedule relative to the run: a service-worker stop every
	// 15 s (alternating profiles), the daemon killed at 1/3, the home browser
	// restarted at 2/3.
	type fault struct {
		at   time.Duration
		name string
		do   func()
	}
	var faults []fault
	for at, i := 15*time.Second, 0; at < dur; at, i = at+15*time.Second, i+1 {
		p := []string{"work", "home"}[i%2]
		faults = append(faults, fault{at, "stop the service worker of " + p, func() { stopWorkers(t, browser(p)) }})
	}
	faults = append(faults,
		fault{dur / 3, "kill -9 the daemon", func() {
			if err := d.cmd.Process.Kill(); err != nil {
				t.Errorf("kill the daemon: %v", err)
			}
		}},
		fault{2 * dur / 3, "restart the home browser", func() {
			old := browser("home")
			old.Stop(t)
			nb := StartBrowser(t, d, BrowserOptions{Label: "Home", UserDataDir: old.UserDataDir, WaitFor: "-"})
			bmu.Lock()
			browsers["home"] = nb
			bmu.Unlock()
		}})
	for len(faults) > 0 {
		next := 0
		for i, f := range faults {
			if f.at < faults[next].at {
				next = i
			}
		}
		f := faults[next]
		faults = append(faults[:next], faults[next+1:]...)
		select {
		case <-time.After(time.Until(start.Add(f.at))):
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		}
		t.Logf("%5.1fs: %s", time.Since(start).Seconds(), f.name)
		f.do()
	}
	wg.Wait()

	// Count what reached each page.
	total := soakStats{}
	duplicated := 0
	for _, profile := range []string{"work", "home"} {
		st := stats[profile]
		state := counts.of(profile)
		t.Logf("%s: %d calls (%d ok, %d failed, %d hung); clicks: page counted %d, %d reported done, %d outcome open; navigations: %d loads, %d reported done, %d failed",
			profile, st.calls, st.ok, st.failed, st.hung, state.Clicks, st.clicksOK, st.clicksMaybe, len(state.Loads), len(st.navOK), len(st.navMaybe))
		for kind, n := range st.errors {
			t.Logf("%s: %d× %s", profile, n, kind)
		}
		if state.Clicks > st.clicksOK+st.clicksMaybe {
			duplicated += state.Clicks - st.clicksOK - st.clicksMaybe
			t.Errorf("%s: the page counted %d clicks but only %d click calls may have acted: a click ran twice", profile, state.Clicks, st.clicksOK+st.clicksMaybe)
		}
		if state.Clicks < st.clicksOK {
			t.Errorf("%s: %d clicks reported done but the page counted %d", profile, st.clicksOK, state.Clicks)
		}
		for n, loads := range state.Loads {
			if loads > 1 {
				duplicated += loads - 1
				var at time.Time
				if i, err := strconv.Atoi(n); err == nil {
					at = st.navAt[i]
				}
				t.Errorf("%s: navigation n=%s (sent at %.1fs) loaded %d times", profile, n, at.Sub(start).Seconds(), loads)
			}
		}
		for _, n := range st.navOK {
			if state.Loads[fmt.Sprint(n)] != 1 {
				t.Errorf("%s: navigation n=%d reported done but loaded %d times", profile, n, state.Loads[fmt.Sprint(n)])
			}
		}
		total.calls += st.calls
		total.hung += st.hung
	}
	if total.hung > 0 {
		t.Errorf("%d calls hung (no answer within %s)", total.hung, hungAfter)
	}
	t.Logf("SOAK: %d calls over 2 profiles in %s; %d hung; %d duplicated actions", total.calls, dur, total.hung, duplicated)

	// The state files are intact: the CLI reads them and finds both profiles.
	out := tetherCLI(t, d, "profiles")
	for _, want := range []string{"work", "home"} {
		if !strings.Contains(out, want) {
			t.Errorf("tether profiles after the soak lacks %s:\n%s", want, out)
		}
	}
	if raw, err := os.ReadFile(paths.Profiles()); err != nil || !json.Valid(raw) {
		t.Errorf("profiles.json after the soak: %v\n%s", err, raw)
	}
	if out := tetherCLI(t, d, "timeline", "--limit", "3"); strings.TrimSpace(out) == "" {
		t.Error("tether timeline after the soak printed nothing")
	}
}

// soakWorker makes random calls on profile until end: reads (snapshot,
// tabs, find), clicks on the page's Add button and navigations to the soak
// page with a unique n, one at a time.
func soakWorker(ctx context.Context, t *testing.T, c *client.Client, profile, base string, rng *rand.Rand, end time.Time, st *soakStats) {
	addRef := ""
	nav := 0
	for time.Now().Before(end) && ctx.Err() == nil {
		var tool string
		args := map[string]any{"profile": profile}
		r := rng.IntN(100)
		switch {
		case addRef == "" || r < 15:
			nav++
			tool, args["url"] = "browser_navigate", fmt.Sprintf("%s/soak.html?profile=%s&n=%d", base, profile, nav)
			st.navAt[nav] = time.Now()
		case r < 50:
			tool, args["ref"] = "browser_click", addRef
		case r < 75:
			tool = "browser_snapshot"
		case r < 88:
			tool = "browser_tabs"
		default:
			tool, args["text"] = "browser_find", "Clicks"
		}
		cctx, cancel := context.WithTimeout(ctx, hungAfter)
		text, isErr, err := mcpclient.Call(cctx, c, tool, args, nil)
		hung := errors.Is(cctx.Err(), context.DeadlineExceeded)
		cancel()
		st.calls++
		switch {
		case hung:
			st.hung++
			t.Errorf("%s %v hung", tool, args)
		case err != nil || isErr:
			st.failed++
			if err != nil {
				text = err.Error()
			}
			st.errors[tool+": "+errorKind(text)]++
			if strings.Contains(text, "dialog_open") {
				// The soak page opens no dialog: say in full what claimed one.
				t.Errorf("%s %v: a page without dialogs reported as blocked: %s", tool, args, text)
			}
		default:
			st.ok++
		}
		ok := !hung && err == nil && !isErr
		switch tool {
		case "browser_click":
			if ok {
				st.clicksOK++
			} else {
				st.clicksMaybe++
			}
		case "browser_navigate":
			if ok {
				st.navOK = append(st.navOK, nav)
			} else {
				st.navMaybe = append(st.navMaybe, nav)
			}
		}
		if ok {
			if m := regexp.MustCompile(`button "Add"[^\n]*\[ref=([^\]]+)\]`).FindStringSubmatch(text); m != nil {
				addRef = m[1]
			}
		} else if tool != "browser_tabs" {
			addRef = "" // the page may have changed: navigate again
		}
	}
}

// soakCounts is what the soak pages did, as their server saw it: the
// clicks each profile's page posted, and how often each soak.html?n= loaded.
type soakCounts struct {
	mu     sync.Mutex
	clicks map[string]int
	loads  map[string]map[string]int // profile → n → loads
}

// soakState is one profile's counts.
type soakState struct {
	Clicks int
	Loads  map[string]int
}

// handler counts POST /soak/click?profile= and GET /soak.html?profile=&n=,
// and serves files with next.
func (c *soakCounts) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		profile := q.Get("profile")
		switch {
		case r.URL.Path == "/soak/click" && r.Method == http.MethodPost:
			c.mu.Lock()
			c.clicks[profile]++
			c.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		case r.URL.Path == "/soak.html" && q.Has("n"):
			c.mu.Lock()
			if c.loads[profile] == nil {
				c.loads[profile] = map[string]int{}
			}
			c.loads[profile][q.Get("n")]++
			c.mu.Unlock()
		}
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

func (c *soakCounts) of(profile string) soakState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return soakState{Clicks: c.clicks[profile], Loads: maps.Clone(c.loads[profile])}
}

// stopWorkers stops every service worker of b, through a blank tab the
// harness opens (unshared, so Tether never sees it).
func stopWorkers(t *testing.T, b *Browser) {
	alloc := b.DevTools(t)
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Errorf("open a tab to stop the service worker: %v", err)
		return
	}
	StopServiceWorkers(t, ctx)
}

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
