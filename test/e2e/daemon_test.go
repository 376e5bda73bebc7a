//go:build !windows

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/config"
)

func health(t *testing.T, rec config.DaemonRecord) map[string]any {
	t.Helper()
	resp, err := http.Get(rec.URL() + "/health")
	if err != nil {
		t.Fatalf("/health: %v", err)
	}
	defer resp.Body.Close()
	var h map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

func versionOf(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func bridgeClient(t *testing.T, ctx context.Context, bin string, p config.Paths) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(bin, []string{config.EnvConfigDir + "=" + p.Dir, config.EnvPort + "=0"}, "mcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	initClient(t, ctx, c)
	return c
}

func TestMCPStartsTheDaemon(t *testing.T) {
	parallel(t)
	bin := Binary(t)
	p := config.Paths{Dir: filepath.Join(t.TempDir(), "config")}
	t.Cleanup(func() { ShutdownDaemon(t, p) })
	ctx := Context(t, time.Minute)
	c := bridgeClient(t, ctx, bin, p)
	tools, err := c.ListTools(ctx, mcpListTools())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_tabs"} {
		if !strings.Contains(strings.Join(names, " "), want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	rec, err := p.ReadDaemonRecord()
	if err != nil {
		t.Fatalf("no daemon record after `tether mcp`: %v", err)
	}
	if h := health(t, rec); h["version"] != versionOf(t, bin) {
		t.Fatalf("daemon version %v, want %s", h["version"], versionOf(t, bin))
	}
	info, err := os.Stat(p.Token())
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v; want 0600", err, info.Mode())
	}
	// With no browser connected, a tool call fails with advice, not a hang.
	text, isErr := call(t, ctx, c, "browser_snapshot", nil)
	if !isErr || !strings.Contains(text, "tether browser") {
		t.Fatalf("browser_snapshot with no browser: (isError=%v) %s", isErr, text)
	}
	text, _ = call(t, ctx, c, "browser_tabs", nil)
	if !strings.Contains(text, "No browser is connected") {
		t.Fatalf("browser_tabs with no browser: %s", text)
	}
}

func TestStaleDaemonIsReplaced(t *testing.T) {
	parallel(t)
	bin := Binary(t)
	old := BuildBinary(t, "-X github.com/tether-browser/tether/cli.version=0.0.1-stale")
	if versionOf(t, old) == versionOf(t, bin) {
		t.Fatal("test binaries have the same version")
	}
	d := StartDaemon(t, old)
	ctx := Context(t, time.Minute)
	bridgeClient(t, ctx, bin, d.Paths)
	rec, err := d.Paths.ReadDaemonRecord()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ShutdownDaemon(t, d.Paths) })
	if h := health(t, rec); h["version"] != versionOf(t, bin) {
		t.Fatalf("daemon version %v after `tether mcp` of %s", h["version"], versionOf(t, bin))
	}
	if rec.PID == d.cmd.Process.Pid {
		t.Fatal("the stale daemon is still the recorded one")
	}
	if _, _, err := d.Log.WaitFor(0, 10*time.Second, "shutdown requested"); err != nil {
		t.Fatal(err)
	}
}

func TestSecondDaemonSaysWhichIsRunning(t *testing.T) {
	parallel(t)
	bin := Binary(t)
	d := StartDaemon(t, bin, "--auto-approve-profiles")
	cmd := exec.Command(bin, "serve", "--port", "0")
	cmd.Env = d.Env()
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("a second daemon started")
	}
	if !strings.Contains(string(out), "already running") || !strings.Contains(string(out), "port "+strconv.Itoa(d.Record.Port)) {
		t.Fatalf("second daemon said: %s", out)
	}
}

func mcpListTools() mcp.ListToolsRequest { return mcp.ListToolsRequest{} }
