//go:build !windows

// Package realclients runs real MCP clients (the official TypeScript SDK,
// @modelcontextprotocol/sdk, under Node) against the config files that
// `tether connect` writes, as a user would: a temporary HOME, the real
// binary, a real daemon.
package realclients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/test/e2e"
)

// here is this folder (package.json, client.mjs).
func here(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller")
	}
	return filepath.Dir(file)
}

// requireNode skips without node and npm, except in CI, and installs the
// SDK from package-lock.json when node_modules lacks it.
func requireNode(t *testing.T) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is required in CI: %v", tool, err)
			}
			t.Skipf("%s not found: install nodejs and npm (apt-get install nodejs npm) to run the real-client tests", tool)
		}
	}
	dir := here(t)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
		return
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}

func binary(t *testing.T) string {
	if b := os.Getenv("TETHER_BIN"); b != "" {
		return b
	}
	out := filepath.Join(t.TempDir(), "tether")
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = filepath.Join(here(t), "..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// userEnv is the environment of a user whose home is home and whose Tether
// config dir is cfg: the variables that move config paths are dropped.
func userEnv(home, cfg string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "CODEX_HOME", "APPDATA", "LOCALAPPDATA", config.EnvConfigDir, config.EnvPort:
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, config.EnvConfigDir+"="+cfg, config.EnvPort+"=0")
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Dir = here(t)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", name, args, err, out, stderr.String())
	}
	return string(out)
}

// startDaemon runs `tether serve` and returns once it logs that it listens.
// Cleanup stops whichever daemon the config dir then records.
func startDaemon(t *testing.T, bin string, env []string, paths config.Paths) {
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "tether daemon listening") {
				close(listening)
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	t.Cleanup(func() {
		e2e.ShutdownDaemon(t, paths)
		cmd.Wait()
	})
	select {
	case <-listening:
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon did not start within 20s")
	}
}

type check struct {
	Check   string `json:"check"`
	Server  struct{ Name, Version string }
	Names   []string `json:"names"`
	IsError bool     `json:"isError"`
	Text    string   `json:"text"`
	Status  *int     `json:"status"`
	Message string   `json:"message"`
}

func checks(t *testing.T, out string) map[string]check {
	t.Helper()
	m := map[string]check{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var c check
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("client output %q: %v", line, err)
		}
		m[c.Check] = c
	}
	return m
}

func TestRealClients(t *testing.T) {
	requireNode(t)
	bin := binary(t)
	home := t.TempDir()
	paths := config.Paths{Dir: filepath.Join(t.TempDir(), "tether")}
	env := userEnv(home, paths.Dir)
	for _, d := range []string{".config/Claude", ".cursor"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	// TETHER_PORT=0: the daemon takes a free port, and `tether mcp` and
	// `tether connect --http` find it through the config dir.
	startDaemon(t, bin, env, paths)

	t.Run("stdio/claude-desktop", func(t *testing.T) {
		out := run(t, env, bin, "connect", "claude-desktop")
		file := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
		if !strings.Contains(out, "added Tether in "+file) {
			t.Fatalf("connect said:\n%s", out)
		}
		var cfg struct {
			MCPServers map[string]struct {
				Command string
				Args    []string
				Env     map[string]string
			}
		}
		b, _ := os.ReadFile(file)
		if err := json.Unmarshal(b, &cfg); err != nil {
			t.Fatalf("%s is not strict JSON: %v\n%s", file, err, b)
		}
		e := cfg.MCPServers["tether"]
		if !filepath.IsAbs(e.Command) || !slices.Equal(e.Args, []string{"mcp"}) || e.Env[config.EnvConfigDir] != paths.Dir {
			t.Fatalf("entry %+v", e)
		}
		raw := run(t, env, "node", "client.mjs", "stdio", file, "mcpServers")
		t.Log(raw)
		c := checks(t, raw)
		if c["initialize"].Server.Name != "tether" {
			t.Errorf("initialize: %+v", c["initialize"])
		}
		if !slices.Contains(c["tools"].Names, "browser_tabs") {
			t.Errorf("tools: %v", c["tools"].Names)
		}
		// No browser is connected: the tool answers with advice, not a hang.
		if bt := c["browser_tabs"]; !strings.Contains(bt.Text, "tether browser") {
			t.Errorf("browser_tabs: %+v", bt)
		}
	})

	t.Run("http/cursor", func(t *testing.T) {
		run(t, env, bin, "connect", "--http", "cursor")
		file := filepath.Join(home, ".cursor", "mcp.json")
		rec, err := paths.ReadDaemonRecord()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(file)
		token, _ := paths.ReadToken()
		if !strings.Contains(string(b), rec.URL()+"/mcp") || !strings.Contains(string(b), "Bearer "+token) {
			t.Fatalf("cursor entry lacks the daemon's URL or token:\n%s", b)
		}
		c := checks(t, run(t, env, "node", "client.mjs", "http", file, "mcpServers"))
		if c["initialize"].Server.Name != "tether" || !slices.Contains(c["tools"].Names, "browser_tabs") {
			t.Errorf("HTTP client: %+v", c)
		}
		if w := c["wrong-token"]; w.Status == nil || *w.Status != http.StatusUnauthorized {
			t.Errorf("wrong token: %+v, want 401", w)
		}

		// Rotation: the file gets the new token, the restarted daemon
		// accepts it, and the old token is refused.
		out := run(t, env, bin, "token", "rotate")
		if !strings.Contains(out, "updated Tether in "+file) || !strings.Contains(out, "restarted the daemon") {
			t.Fatalf("token rotate said:\n%s", out)
		}
		newToken, _ := paths.ReadToken()
		after, _ := os.ReadFile(file)
		if newToken == token || string(after) != strings.ReplaceAll(string(b), token, newToken) {
			t.Fatalf("after rotation:\n%s", after)
		}
		c = checks(t, run(t, env, "node", "client.mjs", "http", file, "mcpServers"))
		if c["initialize"].Server.Name != "tether" {
			t.Errorf("HTTP client after rotation: %+v", c)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rec.URL()+"/mcp", strings.NewReader(`{}`))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("old token after rotation: %s, want 401", resp.Status)
		}
	})
}
