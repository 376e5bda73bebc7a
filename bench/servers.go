package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/chromedp/chromedp/remote"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/test/e2e"
	"github.com/tether-browser/tether/test/mcpclient"
)

// Peer versions, pinned: they are benchmark peers, installed at run time
// into a temporary folder, never dependencies of Tether.
const (
	playwrightMCP = "@playwright/mcp@0.0.83"
	devtoolsMCP   = "chrome-devtools-mcp@1.11.0"
	chromiumPath  = "/usr/bin/chromium"
	// navTimeout is every server's navigation timeout (Tether's is fixed at 30 s).
	navTimeout = 30 * time.Second
)

// chromiumFlags go to every browser in the bench: headless Chromium with the
// network kept quiet, and saved pages' external hosts failing fast.
var chromiumFlags = []string{"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--no-first-run", "--disable-gpu", e2e.HostResolverRules, "--no-sandbox"}

// call is one tool call.
type call struct {
	tool string
	args map[string]any
}

// server is how the bench drives one MCP server: its session and the calls
// that mean navigate, snapshot, no-op and click for it.
type server struct {
	name     string
	s        *session
	navigate func(url string) call
	snapshot call
	noop     call
	// click clicks ref and ends with a fresh snapshot, in as many calls as
	// the server needs (the last call's text holds the snapshot).
	click func(ref string) []call
	// ref finds the ref of the element with this role and name in a snapshot.
	ref func(snapshot, role, name string) string
	// dialog, if set, answers an open alert/confirm/prompt: a page that
	// opens one blocks the server's snapshots until it is answered (Tether
	// answers dialogs by itself and reports them).
	dialog *call
	// stop, if set, ends what the server started besides its session.
	stop func()
}

func bracketRef(snapshot, role, name string) string {
	re := regexp.MustCompile(`- ` + regexp.QuoteMeta(role) + ` "` + regexp.QuoteMeta(name) + `"[^\n]*\[ref=([^\]]+)\]`)
	if m := re.FindStringSubmatch(snapshot); m != nil {
		return m[1]
	}
	return ""
}

// tether is the real thing, as the end-to-end tests run it: bin/tether
// serve in a fresh config dir, Chromium with the extension through `tether
// browser --headless`, and an MCP client over stdio through `tether mcp`.
type tether struct {
	server
	daemon  *exec.Cmd
	browser *exec.Cmd
	log     *e2e.LogWatcher
	cfg     config.Paths
	// profileDir is the browser's profile folder (its DevToolsActivePort).
	profileDir string
}

// noopHTTP times Tether's no-op over streamable HTTP with the token, as an
// AI app that speaks HTTP does: the same call without the stdio bridge.
func noopHTTP(ctx context.Context, t *tether, n int) []time.Duration {
	rec, err := t.cfg.ReadDaemonRecord()
	if err != nil {
		return nil
	}
	token, err := t.cfg.ReadToken()
	if err != nil {
		return nil
	}
	c, err := client.NewStreamableHttpClient(rec.URL()+daemon.PathMCP,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		return nil
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return nil
	}
	if _, err := mcpclient.Initialize(ctx, c, "tether-bench"); err != nil {
		return nil
	}
	s := &session{name: "Tether (HTTP)", c: c}
	var out []time.Duration
	for i := range n + 5 {
		_, d, err := s.call(ctx, t.noop.tool, t.noop.args)
		if err != nil {
			return nil
		}
		if i >= 5 {
			out = append(out, d)
		}
	}
	return out
}

// startTether starts Tether with its snapshots uncut (snapshotMaxChars 10 000 000),
// as the peers return them and as the fidelity test measures them.
func startTether(ctx context.Context, bin, tmp string) (*tether, error) {
	return startTetherCapped(ctx, bin, tmp, 10_000_000)
}

// startTetherCapped starts Tether with snapshotMaxChars set to maxChars (0:
// the default cap, 40 000 characters), its config and profile under tmp.
func startTetherCapped(ctx context.Context, bin, tmp string, maxChars int) (*tether, error) {
	cfg := filepath.Join(tmp, "tether-config")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		return nil, err
	}
	settings := "{}"
	if maxChars > 0 {
		settings = fmt.Sprintf(`{"snapshotMaxChars": %d}`, maxChars)
	}
	if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(settings), 0o600); err != nil {
		return nil, err
	}
	env := append(os.Environ(), config.EnvConfigDir+"="+cfg)
	t := &tether{cfg: config.Paths{Dir: cfg}}
	t.name = "Tether"
	t.daemon = exec.Command(bin, "serve", "--port", "0", "--auto-approve-profiles")
	t.daemon.Env = env
	t.daemon.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := t.daemon.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := t.daemon.Start(); err != nil {
		return nil, err
	}
	t.log = e2e.NewLogWatcher(stderr)
	t.stop = func() {
		for _, c := range []*exec.Cmd{t.browser, t.daemon} {
			if c != nil && c.Process != nil {
				_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
				done := make(chan struct{})
				go func() { _ = c.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
				}
			}
		}
	}
	fail := func(err error) (*tether, error) {
		if t.s != nil {
			t.s.Close()
		}
		t.stop()
		return nil, fmt.Errorf("tether: %w\ndaemon log:\n%s", err, t.log.String())
	}
	if _, _, err := t.log.WaitFor(0, 20*time.Second, "tether daemon listening"); err != nil {
		return fail(err)
	}
	from := t.log.Len()
	// A DevTools port for the bench's stand-in user, who answers the
	// dialogs a page opens before Tether's hooks are in (acceptEarlyDialogs).
	args := append([]string{"browser", "--headless", "--user-data-dir", filepath.Join(tmp, "tether-chrome"), "--"}, chromiumFlags...)
	t.browser = exec.Command(bin, append(args, "--remote-debugging-port=0")...)
	t.browser.Env = env
	t.browser.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := t.browser.Start(); err != nil {
		return fail(err)
	}
	if _, _, err := t.log.WaitFor(from, 60*time.Second, "extension connected"); err != nil {
		return fail(err)
	}
	if t.s, err = startSession(ctx, "Tether", tmp, []string{config.EnvConfigDir + "=" + cfg}, bin, "mcp"); err != nil {
		return fail(err)
	}
	t.navigate = func(url string) call { return call{"browser_navigate", map[string]any{"url": url}} }
	t.snapshot = call{"browser_snapshot", nil}
	t.noop = call{"browser_tabs", map[string]any{"action": "list"}}
	t.click = func(ref string) []call { return []call{{"browser_click", map[string]any{"ref": ref}}} }
	t.ref = bracketRef
	t.profileDir = filepath.Join(tmp, "tether-chrome")
	return t, nil
}

// acceptEarlyDialogs opens Tether's first tab on url and, as the user would,
// accepts every dialog the browser shows in it: a page that calls alert()
// from its first inline scripts does so before Tether's hooks are in (they
// are injected when the page commits), and Tether leaves that dialog to the
// user. Peers are not helped: Playwright MCP answers dialogs itself, Chrome
// DevTools MCP reports them.
func acceptEarlyDialogs(ctx context.Context, t *tether, url string) error {
	if _, _, err := t.s.call(ctx, "browser_navigate", map[string]any{"url": url}); err != nil {
		return err
	}
	ws, err := e2e.DevToolsURL(t.profileDir, 30*time.Second)
	if err != nil {
		return err
	}
	alloc, _ := remote.NewAllocator(ctx, ws)
	return e2e.AcceptDialogs(ctx, alloc, url)
}

// peersUnder installs both peers with npm into tmp/peers and returns that
// folder; "" when want is false (nothing installed).
func peersUnder(ctx context.Context, tmp string, want bool) (string, error) {
	if !want {
		return "", nil
	}
	dir := filepath.Join(tmp, "peers")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	logf("npm install %s %s", playwrightMCP, devtoolsMCP)
	if err := installPeers(ctx, dir); err != nil {
		return "", err
	}
	return dir, nil
}

// installPeers installs both peers with npm into dir.
func installPeers(ctx context.Context, dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"tether-bench-peers","private":true}`), 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--loglevel=error", playwrightMCP, devtoolsMCP)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install %s %s: %w\n%s", playwrightMCP, devtoolsMCP, err, out)
	}
	return nil
}

// startPlaywright runs Playwright MCP on /usr/bin/chromium; the Chromium
// flags it has no option for go through its config file's launch options.
func startPlaywright(ctx context.Context, peers, tmp string) (*server, error) {
	work := filepath.Join(tmp, "playwright")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	cfg, _ := json.Marshal(map[string]any{"browser": map[string]any{"browserName": "chromium",
		"launchOptions": map[string]any{"args": chromiumFlags}}})
	cfgFile := filepath.Join(work, "config.json")
	if err := os.WriteFile(cfgFile, cfg, 0o644); err != nil {
		return nil, err
	}
	s, err := startSession(ctx, "Playwright MCP", work, nil, filepath.Join(peers, "node_modules", ".bin", "playwright-mcp"),
		"--browser", "chromium", "--executable-path", chromiumPath, "--headless", "--isolated", "--no-sandbox",
		"--config", cfgFile, "--timeout-navigation", strconv.Itoa(int(navTimeout.Milliseconds())), "--output-dir", filepath.Join(work, "out"))
	if err != nil {
		return nil, err
	}
	return &server{
		name:     "Playwright MCP",
		s:        s,
		navigate: func(url string) call { return call{"browser_navigate", map[string]any{"url": url}} },
		snapshot: call{"browser_snapshot", map[string]any{}},
		noop:     call{"browser_tabs", map[string]any{"action": "list"}},
		// Its click answers with a link to a snapshot file, so a fresh
		// snapshot takes a second call.
		click: func(ref string) []call {
			return []call{{"browser_click", map[string]any{"target": ref, "element": "the button"}}, {"browser_snapshot", map[string]any{}}}
		},
		ref:    bracketRef,
		dialog: &call{"browser_handle_dialog", map[string]any{"accept": true}},
	}, nil
}

// startDevtools runs Chrome DevTools MCP on /usr/bin/chromium.
func startDevtools(ctx context.Context, peers, tmp string) (*server, error) {
	work := filepath.Join(tmp, "devtools")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	args := []string{"--headless", "--isolated", "--executablePath", chromiumPath, "--no-usage-statistics", "--no-performance-crux"}
	for _, f := range chromiumFlags {
		args = append(args, "--chromeArg="+f)
	}
	s, err := startSession(ctx, "Chrome DevTools MCP", work, []string{"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS=1"},
		filepath.Join(peers, "node_modules", ".bin", "chrome-devtools-mcp"), args...)
	if err != nil {
		return nil, err
	}
	// Page-scoped tools need the page's id: the selected page of list_pages.
	text, _, err := s.call(ctx, "list_pages", map[string]any{})
	if err != nil {
		s.Close()
		return nil, err
	}
	m := regexp.MustCompile(`(?m)^(\d+): .*\[selected\]`).FindStringSubmatch(text)
	if m == nil {
		s.Close()
		return nil, fmt.Errorf("chrome devtools mcp: no selected page in %q", text)
	}
	page, _ := strconv.Atoi(m[1])
	uidRe := func(role, name string) *regexp.Regexp {
		return regexp.MustCompile(`uid=(\S+) ` + regexp.QuoteMeta(role) + ` "` + regexp.QuoteMeta(name) + `"`)
	}
	return &server{
		name: "Chrome DevTools MCP",
		s:    s,
		navigate: func(url string) call {
			return call{"navigate_page", map[string]any{"pageId": page, "type": "url", "url": url, "timeout": navTimeout.Milliseconds()}}
		},
		snapshot: call{"take_snapshot", map[string]any{"pageId": page}},
		dialog:   &call{"handle_dialog", map[string]any{"pageId": page, "action": "accept"}},
		noop:     call{"list_pages", map[string]any{}},
		click: func(ref string) []call {
			return []call{{"click", map[string]any{"pageId": page, "uid": ref, "includeSnapshot": true}}}
		},
		ref: func(snapshot, role, name string) string {
			if m := uidRe(role, name).FindStringSubmatch(snapshot); m != nil {
				return m[1]
			}
			return ""
		},
	}, nil
}
