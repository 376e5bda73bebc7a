//go:build !windows

package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/mcpclient"

	_ "modernc.org/sqlite" // reads the timeline's file while the daemon writes it
)

// counterPage is a page whose button's handler counts its runs on the test
// server: it reports each run with a synchronous request to /started, which
// the server may hold until the test releases it, so the click stays in
// flight (the page's main thread is busy in the handler) exactly as long as
// the test needs, without sleeps.
const counterPage = `<!doctype html><title>Counter</title>
<h1>Counter</h1>
<button onclick="hit()">Count</button>
<p id="n">Clicks: 0</p>
<script>
let clicks = 0;
function hit() {
  clicks++;
  document.getElementById('n').textContent = 'Clicks: ' + clicks;
  const x = new XMLHttpRequest();
  x.open('GET', '/started?n=' + clicks, false);
  try { x.send(); } catch (e) {}
}
</script>`

// counter serves counterPage and counts the handler's runs.
type counter struct {
	URL     string
	mu      sync.Mutex
	runs    int
	hold    chan struct{} // non-nil: /started waits until it is closed
	started chan int      // each run's number, as it starts
}

func newCounter(t *testing.T) *counter {
	c := &counter{started: make(chan int, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, counterPage)
		case "/slow":
			// A page whose response waits like /started does: its load
			// counts as a run.
			c.mu.Lock()
			c.runs++
			n, hold := c.runs, c.hold
			c.mu.Unlock()
			c.started <- n
			if hold != nil {
				select {
				case <-hold:
				case <-time.After(60 * time.Second):
				}
			}
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<!doctype html><title>Slow page</title><p>Arrived slowly.</p>")
		case "/started":
			c.mu.Lock()
			c.runs++
			n, hold := c.runs, c.hold
			c.mu.Unlock()
			c.started <- n
			if hold != nil {
				select {
				case <-hold:
				case <-time.After(60 * time.Second):
				}
			}
			w.WriteHeader(http.StatusNoContent)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() {
		c.release()
		srv.Close()
	})
	c.URL = srv.URL + "/"
	return c
}

// holdNext makes the next runs wait in /started until release.
func (c *counter) holdNext() {
	c.mu.Lock()
	c.hold = make(chan struct{})
	c.mu.Unlock()
}

func (c *counter) release() {
	c.mu.Lock()
	if c.hold != nil {
		close(c.hold)
		c.hold = nil
	}
	c.mu.Unlock()
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.runs
}

// waitStarted waits for the handler's next run to begin.
func (c *counter) waitStarted(t *testing.T) {
	t.Helper()
	select {
	case <-c.started:
	case <-time.After(60 * time.Second):
		t.Fatal("the click's page handler did not start within 60s")
	}
}

// portBridge is an MCP client speaking to a real `tether mcp` for d's
// config dir; a daemon the bridge itself starts uses d's port.
func portBridge(t *testing.T, ctx context.Context, d *Daemon) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(d.Bin, []string{config.EnvConfigDir + "=" + d.Paths.Dir, config.EnvPort + "=" + strconv.Itoa(d.Record.Port)}, "mcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initClient(t, ctx, c)
	if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	return c
}

// clickAsync starts browser_click on ref and returns its outcome's channel.
func clickAsync(ctx context.Context, c *client.Client, ref string) <-chan [2]string {
	out := make(chan [2]string, 1)
	go func() {
		text, isErr, err := mcpclient.Call(ctx, c, "browser_click", map[string]any{"ref": ref}, nil)
		switch {
		case err != nil:
			out <- [2]string{"rpc-error", err.Error()}
		case isErr:
			out <- [2]string{"tool-error", text}
		default:
			out <- [2]string{"ok", text}
		}
	}()
	return out
}

// TestKilledDaemonMidClickActsOnce: the daemon is killed (SIGKILL) while a
// click runs in the page, through a real `tether mcp`. The agent is told
// the outcome is unknown (or gets the true result), the bridge does not
// send the click again, and after the daemon is back the page's handler
// has run exactly once.
func TestKilledDaemonMidClickActsOnce(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	page := newCounter(t)
	StartBrowser(t, d)
	ctx := Context(t, 3*time.Minute)
	c := portBridge(t, ctx, d)
	snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": page.URL})
	button := ref(t, snap, "button", "Count")

	page.holdNext()
	result := clickAsync(ctx, c, button)
	page.waitStarted(t) // the click is in the page's handler now
	// Its row, stored as it started, is in the timeline's file (the
	// writer commits within its linger, 10 ms).
	db, err := sql.Open("sqlite", "file:"+d.Paths.Timeline()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for running := 0; running == 0; {
		err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM calls WHERE tool = 'browser_click' AND outcome = 'running'`).Scan(&running)
		if running > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the click's started row never reached the timeline (last query: %v)", err)
		case <-time.After(5 * time.Millisecond): // the file has no event to wait on
		}
	}
	db.Close()
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	got := <-result
	page.release()
	t.Logf("click after kill -9: %s: %s", got[0], got[1])
	if !(got[0] == "tool-error" && strings.Contains(got[1], "outcome unknown") && strings.Contains(got[1], "snapshot")) && got[0] != "ok" {
		t.Fatalf("the agent got %s %q; want 'outcome unknown … take a snapshot' or the true result", got[0], got[1])
	}

	// The daemon comes back on the same port; the extension reconnects;
	// the same bridge goes on, and nothing clicked again.
	d2 := StartDaemonAt(t, d.Bin, d.Paths.Dir, d.Record.Port, "--auto-approve-profiles")
	if _, _, err := d2.Log.WaitFor(0, 60*time.Second, "extension connected"); err != nil {
		t.Fatal(err)
	}
	after := mustCall(t, ctx, c, "browser_snapshot", nil)
	if !strings.Contains(after, "Clicks: 1") || page.count() != 1 {
		t.Fatalf("the handler ran %d times (want 1); snapshot:\n%s", page.count(), after)
	}
	if strings.Contains(d2.Log.String(), "Navigation rejected") {
		t.Fatalf("the new daemon's log shows a rejected navigation:\n%s", d2.Log.String())
	}
	// The timeline keeps the click the killed daemon never ended: interrupted.
	if out := tetherCLI(t, d2, "timeline", "--outcome", "interrupted"); !strings.Contains(out, "browser_click") || !strings.Contains(out, "may have acted") {
		t.Fatalf("tether timeline --outcome interrupted after the kill:\n%s", out)
	}
}

// counterOverHTTP starts a daemon and a browser, opens the counter page
// through an HTTP MCP client, and returns the client with the context
// (bounded by within), the page and its button's ref.
func counterOverHTTP(t *testing.T, within time.Duration) (context.Context, *client.Client, *counter, string) {
	t.Helper()
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	page := newCounter(t)
	StartBrowser(t, d)
	ctx := Context(t, within)
	c := httpClient(t, ctx, d, d.Token)
	snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": page.URL})
	return ctx, c, page, ref(t, snap, "button", "Count")
}

// TestRepeatedIdempotencyKeyDoesNotActAgain: an HTTP client sends the same
// click twice with one _meta idempotency key; the real extension acts once
// and answers the repeat with the first result.
func TestRepeatedIdempotencyKeyDoesNotActAgain(t *testing.T) {
	parallel(t)
	ctx, c, page, button := counterOverHTTP(t, 3*time.Minute)
	meta := &mcp.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: "e2e-click-1"}}

	first, isErr, err := mcpclient.Call(ctx, c, "browser_click", map[string]any{"ref": button}, meta)
	if err != nil || isErr {
		t.Fatalf("first click: %v %s", err, first)
	}
	if page.count() != 1 || !strings.Contains(first, "Clicks: 1") {
		t.Fatalf("after the first click: %d runs; result:\n%s", page.count(), first)
	}
	again, isErr, err := mcpclient.Call(ctx, c, "browser_click", map[string]any{"ref": button}, meta)
	if err != nil || isErr {
		t.Fatalf("repeated click: %v %s", err, again)
	}
	if page.count() != 1 || again != first {
		t.Fatalf("the repeat ran the handler (%d runs) or answered otherwise:\nfirst:\n%s\nrepeat:\n%s", page.count(), first, again)
	}
	// The same key for other arguments is refused without acting.
	other, isErr, _ := mcpclient.Call(ctx, c, "browser_click", map[string]any{"ref": "e999"}, meta)
	if !isErr || page.count() != 1 {
		t.Fatalf("the key reused with other arguments: %d runs, answer %q", page.count(), other)
	}
	// A new key acts.
	mustCall(t, ctx, c, "browser_click", map[string]any{"ref": button})
	if page.count() != 2 {
		t.Fatalf("a click without the key: %d runs, want 2", page.count())
	}
}

// TestRepeatAfterTheExtensionDroppedTheKeyDoesNotActAgain: the extension
// keeps the last 500 keys; after 505 other keyed calls (reads take room
// too) a repeat of a click, within the 10 minutes a key lasts, must still
// not click again: the daemon tells the extension that it sent that step
// before (Request.SentBefore), and the extension answers that the outcome
// is unknown without acting. (A break-it pass clicked twice this way.)
func TestRepeatAfterTheExtensionDroppedTheKeyDoesNotActAgain(t *testing.T) {
	parallel(t)
	ctx, c, page, button := counterOverHTTP(t, 4*time.Minute)
	meta := &mcp.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: "e2e-evicted-click"}}
	if first, isErr, err := mcpclient.Call(ctx, c, "browser_click", map[string]any{"ref": button}, meta); err != nil || isErr || page.count() != 1 {
		t.Fatalf("first click: %d runs, %v %s", page.count(), err, first)
	}
	for i := range 505 {
		filler := &mcp.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: fmt.Sprintf("e2e-filler-%d", i)}}
		if out, isErr, err := mcpclient.Call(ctx, c, "browser_find", map[string]any{"text": "Clicks"}, filler); err != nil || isErr {
			t.Fatalf("filler find %d: %v %s", i, err, out)
		}
	}
	again, isErr, err := mcpclient.Call(ctx, c, "browser_click", map[string]any{"ref": button}, meta)
	if err != nil {
		t.Fatal(err)
	}
	if page.count() != 1 {
		t.Fatalf("the repeat clicked again (%d runs); it answered:\n%s", page.count(), again)
	}
	if !isErr || !strings.Contains(again, "not run again") || !strings.Contains(again, "browser_snapshot") {
		t.Fatalf("the repeat answered (error %v):\n%s\nwant: not run again, with a snapshot to see", isErr, again)
	}
}

// TestSameIdempotencyKeyFromTwoApps: two HTTP apps each count with their
// own keys and both send key "1" for a click on the same button of a
// counter page, each in a tab of its own. Keys are an app's own: both
// clicks run, and the second app does not get the first one's answer.
func TestSameIdempotencyKeyFromTwoApps(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	page := newCounter(t)
	StartBrowser(t, d)
	ctx := Context(t, 3*time.Minute)
	meta := &mcp.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: "1"}}
	var answers []string
	for i, name := range []string{"app-a", "app-b"} {
		c := appHTTP(t, ctx, d, name)
		opened := mustCall(t, ctx, c, "browser_tabs", map[string]any{"action": "new", "url": page.URL})
		openedTab(t, opened)
		snap := mustCall(t, ctx, c, "browser_snapshot", nil)
		button := ref(t, snap, "button", "Count")
		out, isErr, err := mcpclient.Call(ctx, c, "browser_click", map[string]any{"ref": button}, meta)
		if err != nil || isErr {
			t.Fatalf("%s's click with key 1: %v %s", name, err, out)
		}
		if page.count() != i+1 {
			t.Fatalf("after %s's click with key 1 the handler ran %d times, want %d; answer:\n%s", name, page.count(), i+1, out)
		}
		answers = append(answers, out)
	}
	if !strings.Contains(answers[1], "Clicks: 1") || strings.Contains(answers[1], "already ran") {
		t.Fatalf("the second app's click was answered as a repeat:\n%s", answers[1])
	}
}

// TestTokenRotateLetsTheClickFinish: `tether token rotate` while a click is
// in the page's handler; the daemon drains before it stops, so the agent
// gets the click's true result (not "retry once it reconnects"), and the
// bridge goes on with the new daemon and token.
func TestTokenRotateLetsTheClickFinish(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	t.Cleanup(func() { ShutdownDaemon(t, d.Paths) }) // the one rotate starts
	page := newCounter(t)
	StartBrowser(t, d)
	ctx := Context(t, 4*time.Minute)
	c := portBridge(t, ctx, d)
	snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": page.URL})
	button := ref(t, snap, "button", "Count")

	oldControl, err := d.Paths.ReadControlToken()
	if err != nil {
		t.Fatal(err)
	}
	page.holdNext()
	from := d.Log.Len()
	result := clickAsync(ctx, c, button)
	page.waitStarted(t)
	rotate := exec.CommandContext(ctx, d.Bin, "token", "rotate")
	rotate.Env = UserEnv(filepath.Join(t.TempDir(), "home"), d.Paths.Dir, "", "")
	rotated := make(chan string, 1)
	go func() {
		out, err := rotate.CombinedOutput()
		rotated <- fmt.Sprintf("%s(err %v)", out, err)
	}()
	if _, _, err := d.Log.WaitFor(from, 60*time.Second, "draining: waiting for in-flight MCP calls"); err != nil {
		t.Fatal(err)
	}
	page.release()
	got := <-result
	t.Logf("click during rotate: %s: %s", got[0], got[1])
	if strings.Contains(got[1], "retry once it reconnects") || strings.Contains(got[1], "outcome unknown") || got[0] == "rpc-error" {
		t.Fatalf("the click that ran was reported as %s %q; want its true result", got[0], got[1])
	}
	if got[0] == "ok" && !strings.Contains(got[1], "Clicks: 1") {
		t.Fatalf("click result lacks the page's new state:\n%s", got[1])
	}
	out := <-rotated
	t.Logf("tether token rotate:\n%s", out)
	if !strings.Contains(out, "restarted the daemon") {
		t.Fatalf("rotate did not restart the daemon:\n%s", out)
	}
	after := mustCall(t, ctx, c, "browser_snapshot", nil)
	if !strings.Contains(after, "Clicks: 1") || page.count() != 1 {
		t.Fatalf("the handler ran %d times (want 1); snapshot:\n%s", page.count(), after)
	}
	// The control token was rotated too: the restarted daemon refuses the
	// old one and takes the new one, which the local API's client reads.
	rec, err := d.Paths.ReadDaemonRecord()
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, rec.URL()+apitype.PathState, nil)
	req.Header.Set("Authorization", "Bearer "+oldControl)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("the old control token after rotate: %v %v; want 401", resp, err)
	}
	if _, err := localclient.New(d.Paths).State(ctx); err != nil {
		t.Fatalf("the new control token: %v", err)
	}
}

// TestKilledDaemonMidNavigateActsOnce: the daemon is killed while
// browser_navigate waits for a slow page. The bridge does not send the
// navigation again (its replay used to fail with "Navigation rejected"):
// the agent is told the outcome is unknown, and the page loaded once.
func TestKilledDaemonMidNavigateActsOnce(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	page := newCounter(t)
	StartBrowser(t, d)
	ctx := Context(t, 3*time.Minute)
	c := portBridge(t, ctx, d)
	mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": page.URL})

	page.holdNext()
	result := make(chan [2]string, 1)
	go func() {
		text, isErr, err := mcpclient.Call(ctx, c, "browser_navigate", map[string]any{"url": page.URL + "slow"}, nil)
		result <- [2]string{fmt.Sprint(isErr, err), text}
	}()
	page.waitStarted(t) // the browser is loading the page now
	if err := d.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	got := <-result
	page.release()
	t.Logf("navigate after kill -9: %s: %s", got[0], got[1])
	if got[0] != "true <nil>" || !strings.Contains(got[1], "outcome unknown") {
		t.Fatalf("the agent got %s %q; want a tool error 'outcome unknown'", got[0], got[1])
	}
	d2 := StartDaemonAt(t, d.Bin, d.Paths.Dir, d.Record.Port, "--auto-approve-profiles")
	if _, _, err := d2.Log.WaitFor(0, 60*time.Second, "extension connected"); err != nil {
		t.Fatal(err)
	}
	after := mustCall(t, ctx, c, "browser_wait_for", map[string]any{"text": "Arrived slowly."})
	if page.count() != 1 || strings.Contains(after, "Navigation rejected") {
		t.Fatalf("the slow page was requested %d times (want 1); after:\n%s", page.count(), after)
	}
}

// TestIdempotencyKeyBelongsToOneCall: an HTTP client clicks with a key,
// repeats the click (answered from the record), then reuses the key for
// browser_navigate, browser_navigate_back, browser_read_url,
// browser_reload and a click with other arguments: each is refused and
// nothing acts (the page's counter and its state are unchanged). Then the
// same after a daemon restart, with keys of clicks made before it, one key
// per tool so that the new daemon has never seen any of them: the real
// extension alone refuses them.
func TestIdempotencyKeyBelongsToOneCall(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	page := newCounter(t)
	StartBrowser(t, d)
	ctx := Context(t, 4*time.Minute)
	c := httpClient(t, ctx, d, d.Token)
	snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": page.URL})
	button := ref(t, snap, "button", "Count")
	withKey := func(key string) *mcp.Meta {
		return &mcp.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: key}}
	}
	others := []struct {
		tool string
		args map[string]any
	}{
		{"browser_navigate", map[string]any{"url": page.URL + "slow"}},
		{"browser_navigate_back", nil},
		{"browser_read_url", map[string]any{"url": page.URL + "slow"}},
		{"browser_reload", nil},
		{"browser_click", map[string]any{"ref": "e999"}},
	}

	// reuse calls the other tools, each with keyFor(tool), and checks that
	// each is refused (by the extension when byExtension) and that nothing
	// acted: runs stays the page's count, and the page still shows want (no
	// navigation, back or reload happened).
	reuse := func(c *client.Client, keyFor func(tool string) string, runs int, want string, byExtension bool) {
		t.Helper()
		for _, tc := range others {
			text, isErr, err := mcpclient.Call(ctx, c, tc.tool, tc.args, withKey(keyFor(tc.tool)))
			if err != nil {
				t.Fatalf("%s: %v", tc.tool, err)
			}
			t.Logf("%s with a click's key: %s", tc.tool, text)
			if !isErr || !strings.Contains(text, "already used") || !strings.Contains(text, "new key for each call") {
				t.Fatalf("%s with a click's key was not refused: error %v, %q", tc.tool, isErr, text)
			}
			if byExtension && !strings.Contains(text, "nothing was done") {
				t.Fatalf("%s: refused by the daemon, not the extension: %q", tc.tool, text)
			}
			if page.count() != runs {
				t.Fatalf("%s with a click's key acted: %d runs, want %d", tc.tool, page.count(), runs)
			}
		}
		after := mustCall(t, ctx, c, "browser_snapshot", nil)
		if !strings.Contains(after, want) || !strings.Contains(after, page.URL) {
			t.Fatalf("the page changed (want %q at %s):\n%s", want, page.URL, after)
		}
	}
	// click clicks the button with key, times times; the first acts.
	click := func(c *client.Client, key string, times, runs int) {
		t.Helper()
		var first string
		for i := 0; i < times; i++ {
			text, isErr, err := mcpclient.Call(ctx, c, "browser_click", map[string]any{"ref": button}, withKey(key))
			if err != nil || isErr {
				t.Fatalf("click %d with %q: %v %s", i+1, key, err, text)
			}
			if i == 0 {
				first = text
			} else if text != first {
				t.Fatalf("the repeated click answered otherwise:\nfirst:\n%s\nrepeat:\n%s", first, text)
			}
			if page.count() != runs {
				t.Fatalf("click %d with %q: %d runs, want %d", i+1, key, page.count(), runs)
			}
		}
	}

	click(c, "e2e-one-call", 2, 1)
	reuse(c, func(string) string { return "e2e-one-call" }, 1, "Clicks: 1", false)

	// Before a restart, one click per key; after it only the extension
	// remembers them.
	runs := 1
	for _, tc := range others {
		runs++
		click(c, "e2e-before-restart-"+tc.tool, 1, runs)
	}
	click(c, "e2e-repeat-after-restart", 1, runs+1)
	runs++
	d2 := d.Restart(t)
	if _, _, err := d2.Log.WaitFor(0, 60*time.Second, "extension connected"); err != nil {
		t.Fatal(err)
	}
	c2 := httpClient(t, ctx, d2, d2.Token)
	click(c2, "e2e-repeat-after-restart", 1, runs) // the extension answers from its record
	reuse(c2, func(tool string) string { return "e2e-before-restart-" + tool }, runs, fmt.Sprintf("Clicks: %d", runs), true)
}
