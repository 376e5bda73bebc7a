//go:build linux

package native_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/desktop"
	"github.com/tether-browser/tether/test/fakeext"
	"github.com/tether-browser/tether/test/mcpclient"
	"github.com/tether-browser/tether/tray/native"
)

const wait = desktop.Wait

// The real binary under a private D-Bus session: its tray menu is read and
// clicked over com.canonical.dbusmenu, as a panel would.
func TestTrayOverDBus(t *testing.T) {
	if _, err := exec.LookPath("dbus-launch"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("dbus-launch is required in CI (apt-get install dbus-x11; make deps-test installs it)")
		}
		t.Skip("dbus-launch not found: install dbus-x11 to run the tray's end-to-end test")
	}
	bin := binary(t)
	busAddr := desktop.SessionBus(t)
	home, cfgDir := t.TempDir(), t.TempDir()
	env := userEnv(home, cfgDir, busAddr)
	p := startTether(t, bin, env)
	paths := config.Paths{Dir: cfgDir}

	tr := desktop.TrayOf(t, busAddr, p.cmd.Process.Pid)
	item, m, sigs := tr.Item, tr.Menu, tr.Signals
	top := m.Layout()
	for _, title := range []string{"No extension connected", native.TitleConnect, native.TitlePause, native.TitleLogin, native.TitleQuit} {
		top.Find(t, title)
	}
	if got := top.Find(t, native.TitleConnect).Children; len(got) != 10 {
		t.Fatalf("Connect to has %d items, want the 10 clients", len(got))
	}
	if c := desktop.IconColour(t, item); c != "grey" {
		t.Fatalf("icon with no extension is %s, want grey", c)
	}

	// An extension connects: it waits for pairing (approval icon), then is
	// approved from the CLI (connected icon).
	url := fmt.Sprintf("ws://127.0.0.1:%s/extension", p.port)
	type dial struct {
		e   *fakeext.Ext
		err error
	}
	dialed := make(chan dial, 1)
	go func() {
		e, err := fakeext.Dial(url, protocol.Hello{ProfileID: "7a7e5b1c-tray-test", Label: "Tray test", ExtVersion: "0.1.0"})
		dialed <- dial{e, err}
	}()
	desktop.WaitIcon(t, sigs, item, "amber")
	run(t, env, bin, "profiles", "approve", "7a7e5b1c")
	d := <-dialed
	if d.err != nil {
		t.Fatal(d.err)
	}
	defer d.e.Close()
	desktop.WaitIcon(t, sigs, item, "green")
	m.WaitFor(sigs, "the status line", func(n *desktop.Node) bool { return n.Has("1 profile · 0 shared tabs") })

	// A tool call the extension holds: the icon says the AI is acting.
	held, release := make(chan struct{}, 1), make(chan struct{})
	go d.e.Serve(func(protocol.Request) (any, *protocol.Error) {
		select {
		case held <- struct{}{}:
		default:
		}
		<-release
		return nil, &protocol.Error{Code: "internal", Message: "released by the test"}
	})
	called := make(chan error, 1)
	go func() {
		_, _, err := callToolErr(paths, p.port, "browser_navigate", map[string]any{"url": "http://127.0.0.1:9/"})
		called <- err
	}()
	<-held
	desktop.WaitIcon(t, sigs, item, "blue")
	close(release)
	if err := <-called; err != nil {
		t.Fatal(err)
	}
	desktop.WaitIcon(t, sigs, item, "green") // after the 1.5 s linger

	// Pause AI access: the check mark, the red icon, and a refused tool call.
	m.Click(top.Find(t, native.TitlePause).ID)
	p.waitLog(t, "AI access paused")
	desktop.WaitIcon(t, sigs, item, "red")
	m.WaitFor(sigs, "Pause AI access checked", func(n *desktop.Node) bool { return n.Find(t, native.TitlePause).Toggle() == 1 })
	text, isErr := callTool(t, paths, p.port, "browser_tabs")
	if !isErr || !strings.Contains(text, policy.PausedMessage) {
		t.Errorf("browser_tabs while paused: isError %v, %q; want the paused refusal", isErr, text)
	}

	// Connect to ▸ Claude Desktop writes its config file in the test HOME.
	m.Click(top.Find(t, native.TitleConnect).Find(t, "Claude Desktop").ID)
	p.waitLog(t, "client config changed from the tray")
	b, err := os.ReadFile(filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"tether"`) || !strings.Contains(string(b), `"mcp"`) {
		t.Errorf("claude_desktop_config.json:\n%s", b)
	}
	m.WaitFor(sigs, "Claude Desktop checked and the outcome shown", func(n *desktop.Node) bool {
		return n.Find(t, native.TitleConnect).Find(t, "Claude Desktop").Toggle() == 1 &&
			n.Has("Claude Desktop: connected")
	})

	// Start at login writes the XDG autostart entry, starting tether hidden.
	m.Click(top.Find(t, native.TitleLogin).ID)
	p.waitLog(t, "start at login set from the tray")
	desktop := filepath.Join(home, ".config", "autostart", "tether.desktop")
	b, err = os.ReadFile(desktop)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Exec=") || !strings.Contains(string(b), `"--hidden"`) || !strings.Contains(string(b), bin) {
		t.Errorf("%s:\n%s", desktop, b)
	}
	m.Click(top.Find(t, native.TitleLogin).ID)
	p.waitLog(t, "start at login set from the tray")
	if _, err := os.Stat(desktop); !os.IsNotExist(err) {
		t.Errorf("%s still there after unchecking: %v", desktop, err)
	}

	// Quit stops the process.
	m.Click(top.Find(t, native.TitleQuit).ID)
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("tether after Quit: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("tether did not exit after Quit")
	}
}

func binary(t *testing.T) string {
	if b := os.Getenv("TETHER_BIN"); b != "" {
		return b
	}
	out := filepath.Join(t.TempDir(), "tether")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = filepath.Join("..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// userEnv is a user with the given home and config dir, on the given bus,
// with no display.
func userEnv(home, cfg, bus string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "CODEX_HOME", "DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", config.EnvConfigDir, config.EnvPort:
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, config.EnvConfigDir+"="+cfg, config.EnvPort+"=0", "DBUS_SESSION_BUS_ADDRESS="+bus)
}

type process struct {
	cmd    *exec.Cmd
	port   string
	exited chan error
	mu     sync.Mutex
	lines  []string
	more   chan struct{} // closed and replaced at each new line
	seen   map[string]int
}

// startTether runs bare `tether` and returns once its tray is ready.
func startTether(t *testing.T, bin string, env []string) *process {
	cmd := exec.Command(bin)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, exited: make(chan error, 1), more: make(chan struct{}), seen: map[string]int{}}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
		p.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
		if t.Failed() {
			p.mu.Lock()
			t.Logf("tether's log:\n%s", strings.Join(p.lines, "\n"))
			p.mu.Unlock()
		}
	})
	line := p.waitLog(t, "tether daemon listening")
	m := regexp.MustCompile(`addr=127\.0\.0\.1:(\d+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no port in %q", line)
	}
	p.port = m[1]
	p.waitLog(t, "tray ready")
	return p
}

// waitLog waits for the next log line containing s (each call consumes one
// more occurrence) and returns it.
func (p *process) waitLog(t *testing.T, s string) string {
	t.Helper()
	deadline := time.After(wait)
	for {
		p.mu.Lock()
		n := 0
		for _, l := range p.lines {
			if strings.Contains(l, s) {
				if n == p.seen[s] {
					p.seen[s]++
					p.mu.Unlock()
					return l
				}
				n++
			}
		}
		more := p.more
		p.mu.Unlock()
		select {
		case <-more:
		case err := <-p.exited:
			p.exited <- err
			t.Fatalf("tether exited (%v) before logging %q", err, s)
		case <-deadline:
			t.Fatalf("tether did not log %q within %s", s, wait)
		}
	}
}

func run(t *testing.T, env []string, bin string, args ...string) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tether %v: %v\n%s", args, err, out)
	}
}

// callTool calls a tool without arguments over streamable HTTP with the token.
func callTool(t *testing.T, p config.Paths, port, name string) (string, bool) {
	t.Helper()
	text, isErr, err := callToolErr(p, port, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return text, isErr
}

func callToolErr(p config.Paths, port, name string, args map[string]any) (string, bool, error) {
	token, err := p.ReadToken()
	if err != nil {
		return "", false, err
	}
	c, err := client.NewStreamableHttpClient("http://127.0.0.1:"+port+"/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		return "", false, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		return "", false, err
	}
	if _, err := mcpclient.Initialize(ctx, c, "tray-e2e"); err != nil {
		return "", false, err
	}
	return mcpclient.Call(ctx, c, name, args, nil)
}
