//go:build linux

package native_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/desktop"
	"github.com/tether-browser/tether/test/e2e"
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
	bin := e2e.Binary(t)
	busAddr := desktop.SessionBus(t)
	home, cfgDir := t.TempDir(), t.TempDir()
	d := e2e.StartTether(t, bin, cfgDir, e2e.UserEnv(home, cfgDir, busAddr, ""))
	paths, port := d.Paths, strconv.Itoa(d.Record.Port)
	// after waits for a log line written after line from.
	after := func(from int, s string) {
		t.Helper()
		if _, _, err := d.Log.WaitFor(from, wait, s); err != nil {
			t.Fatal(err)
		}
	}

	tr := desktop.TrayOf(t, busAddr, d.PID())
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
	url := fmt.Sprintf("ws://127.0.0.1:%s/extension", port)
	type dial struct {
		e   *fakeext.Ext
		err error
	}
	dialed := make(chan dial, 1)
	codes := make(chan string, 1)
	go func() {
		e, err := fakeext.Dial(url, protocol.Hello{ProfileID: "7a7e5b1c-tray-test", Label: "Tray test", ExtVersion: "0.1.0"}, "",
			func(msg string) {
				if m := regexp.MustCompile(`tether profiles approve ([` + broker.CodeAlphabet + `]{6})`).FindStringSubmatch(msg); m != nil {
					codes <- m[1]
				}
			})
		dialed <- dial{e, err}
	}()
	desktop.WaitIcon(t, sigs, item, "amber")
	var code string
	select {
	case code = <-codes:
	case <-time.After(10 * time.Second):
		t.Fatal("no pairing code in the pairing message")
	}
	// The tray shows the code the browser's popup shows, next to its label.
	m.WaitFor(sigs, "the pairing code", func(n *desktop.Node) bool {
		return n.Has(`No extension connected · waiting for you: 1 profile to pair ("Tray test" code ` + code + `)`)
	})
	run(t, d.Env(), bin, "profiles", "approve", code)
	ext := <-dialed
	if ext.err != nil {
		t.Fatal(ext.err)
	}
	defer ext.e.Close()
	desktop.WaitIcon(t, sigs, item, "green")
	m.WaitFor(sigs, "the status line", func(n *desktop.Node) bool { return n.Has("1 profile · 0 shared tabs") })

	// A tool call the extension holds: the icon says the AI is acting.
	held, release := make(chan struct{}, 1), make(chan struct{})
	go ext.e.Serve(func(protocol.Request) (any, *protocol.Error) {
		select {
		case held <- struct{}{}:
		default:
		}
		<-release
		return nil, &protocol.Error{Code: "internal", Message: "released by the test"}
	})
	called := make(chan error, 1)
	go func() {
		_, _, err := callToolErr(paths, port, "browser_navigate", map[string]any{"url": "http://127.0.0.1:9/"})
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
	from := d.Log.Len()
	m.Click(top.Find(t, native.TitlePause).ID)
	after(from, "AI access paused")
	desktop.WaitIcon(t, sigs, item, "red")
	m.WaitFor(sigs, "Pause AI access checked", func(n *desktop.Node) bool { return n.Find(t, native.TitlePause).Toggle() == 1 })
	text, isErr := callTool(t, paths, port, "browser_tabs")
	if !isErr || !strings.Contains(text, policy.PausedMessage) {
		t.Errorf("browser_tabs while paused: isError %v, %q; want the paused refusal", isErr, text)
	}

	// Connect to ▸ Claude Desktop writes its config file in the test HOME.
	from = d.Log.Len()
	m.Click(top.Find(t, native.TitleConnect).Find(t, "Claude Desktop").ID)
	after(from, "client config changed from the tray")
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
	from = d.Log.Len()
	m.Click(top.Find(t, native.TitleLogin).ID)
	after(from, "start at login set from the tray")
	entry := filepath.Join(home, ".config", "autostart", "tether.desktop")
	b, err = os.ReadFile(entry)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Exec=") || !strings.Contains(string(b), `"--hidden"`) || !strings.Contains(string(b), bin) {
		t.Errorf("%s:\n%s", entry, b)
	}
	from = d.Log.Len()
	m.Click(top.Find(t, native.TitleLogin).ID)
	after(from, "start at login set from the tray")
	if _, err := os.Stat(entry); !os.IsNotExist(err) {
		t.Errorf("%s still there after unchecking: %v", entry, err)
	}

	// Quit stops the process.
	m.Click(top.Find(t, native.TitleQuit).ID)
	if err := d.WaitExit(wait); err != nil {
		t.Errorf("tether after Quit: %v", err)
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
