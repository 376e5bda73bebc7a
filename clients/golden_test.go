package clients

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Golden tests: for every client, on every OS, each case's input file goes
// through Connect and the resulting bytes must equal
// testdata/golden/<os>/<client>/<case>.golden. UPDATE=1 rewrites them
// (review the diff).

var oses = []string{"linux", "darwin", "windows"}

// exeFor is the tether binary path the goldens are written with, per OS.
func exeFor(goos string) string {
	if goos == "windows" {
		return `C:\Users\ana\AppData\Local\Programs\Tether\tether.exe`
	}
	return "/opt/tether/bin/tether"
}

// testHost is a Host rooted in a temp dir, with the env vars each OS has.
func testHost(t *testing.T, goos string) Host {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{}
	if goos == "windows" {
		env["APPDATA"] = filepath.Join(home, "AppData", "Roaming")
		env["LOCALAPPDATA"] = filepath.Join(home, "AppData", "Local")
	}
	tick := time.Date(2026, 11, 29, 13, 0, 0, 0, time.UTC)
	return Host{
		OS: goos, Home: home,
		Getenv: func(k string) string { return env[k] },
		Now:    func() time.Time { tick = tick.Add(time.Second); return tick },
	}
}

// jsonCases are the inputs for JSON clients; KEY is the client's servers key.
// nil means the file does not exist.
var jsonCases = []struct {
	name string
	in   *string
}{
	{"missing", nil},
	{"empty", ptr("")},
	{"others", ptr(`{
  "globalShortcut": "Ctrl+Space",
  "KEY": {
    "github": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_TOKEN": "ghp_x"}
    },
    "files": {"command": "/usr/bin/mcp-files", "args": []}
  },
  "zeta": [1, 2.50, true, null]
}
`)},
	{"jsonc", ptr(`// My settings: hand-edited, please keep the comments.
{
	"theme": "One Dark", // inline comment
	/* a block
	   comment */
	"KEY": {
		"github": {"command": "npx", "args": ["-y", "server-github",],}, // trailing commas
		// "old": {"command": "gone"},
	},
	"fontSize": 14,
}
`)},
	{"bom", ptr("\ufeff{\r\n    \"KEY\": {\r\n        \"a\": {\"command\": \"a\"}\r\n    }\r\n}\r\n")},
	{"empty-servers", ptr(`{"KEY": {}, "other": 1}`)},
	{"moved", ptr(`{
  "KEY": {
    "tether": {
      "command": "/old/place/tether",
      "args": ["mcp"],
      "disabled": false,
      "autoApprove": ["browser_snapshot"]
    },
    "b": {"command": "b"}
  }
}
`)},
}

var tomlCases = []struct {
	name string
	in   *string
}{
	{"missing", nil},
	{"empty", ptr("")},
	{"others", ptr(`model = "gpt-5-codex"
approval_policy = "on-request"

[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_TOKEN = "ghp_x" }

[profiles.fast]
model = "gpt-5-mini"
`)},
	{"comments", ptr(`# Codex settings, hand-edited
model = "o3"   # the default model

# servers
[mcp_servers.docs]
url = "https://docs.example/mcp"   # remote
startup_timeout_sec = 20

# end of file
`)},
	{"bom", ptr("\ufeffmodel = \"o3\"\r\n\r\n[mcp_servers.a]\r\ncommand = \"a\"\r\n")},
	{"moved", ptr(`[mcp_servers.tether]
command = "/old/place/tether"
args = [
  "mcp",
]
tool_timeout_sec = 120 # mine

[mcp_servers.b]
command = "b"
`)},
}

func ptr(s string) *string { return &s }

func goldenPath(goos, client, name string) string {
	return filepath.Join("testdata", "golden", goos, client, name+".golden")
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if os.Getenv("UPDATE") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden %s (run with UPDATE=1 and review): %v", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// writeInput puts in at every target of c (or nothing when in is nil) and
// returns the target list.
func writeInput(t *testing.T, h Host, c Client, in *string) []string {
	t.Helper()
	for _, l := range c.locations(h) {
		if err := os.MkdirAll(l.dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files, installed := h.targets(c)
	if !installed {
		t.Fatalf("%s not installed after creating its folders", c.ID)
	}
	if in != nil {
		for _, f := range files {
			if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, []byte(*in), 0o640); err != nil {
				t.Fatal(err)
			}
		}
	}
	return files
}

func casesFor(c Client) []struct {
	name string
	in   *string
} {
	if c.format == formatTOML {
		return tomlCases
	}
	out := make([]struct {
		name string
		in   *string
	}, len(jsonCases))
	for i, jc := range jsonCases {
		out[i] = jc
		if jc.in != nil {
			out[i].in = ptr(strings.ReplaceAll(*jc.in, "KEY", c.key))
		}
	}
	return out
}

func TestGoldenConnect(t *testing.T) {
	for _, goos := range oses {
		for _, c := range All() {
			for _, tc := range casesFor(c) {
				t.Run(goos+"/"+c.ID+"/"+tc.name, func(t *testing.T) {
					h := testHost(t, goos)
					if goos == "windows" && c.ID == "claude-desktop" {
						// The MSIX build is installed: both files are written.
						os.MkdirAll(filepath.Join(h.localAppData(), "Packages", "Claude_pzs8sxrjxfjjc"), 0o755)
					}
					files := writeInput(t, h, c, tc.in)
					o, err := h.Connect(c.ID, Options{Executable: exeFor(goos)})
					if err != nil {
						t.Fatal(err)
					}
					if len(o.Files) != len(files) || !o.Changed {
						t.Fatalf("outcome %+v, want a change in %v", o, files)
					}
					if o.NeedsRestart != c.NeedsRestart {
						t.Errorf("NeedsRestart = %v, want %v", o.NeedsRestart, c.NeedsRestart)
					}
					got, err := os.ReadFile(files[0])
					if err != nil {
						t.Fatal(err)
					}
					checkGolden(t, goldenPath(goos, c.ID, tc.name), got)
					for _, f := range files[1:] {
						if b, _ := os.ReadFile(f); !bytes.Equal(b, got) {
							t.Errorf("%s differs from %s", f, files[0])
						}
					}
					wantChange := Added
					if tc.name == "moved" {
						wantChange = Updated
					}
					if o.Files[0].Change != wantChange {
						t.Errorf("change %s, want %s", o.Files[0].Change, wantChange)
					}
					// Mode kept, backup made for an existing file.
					fi, _ := os.Stat(files[0])
					if tc.in != nil {
						if fi.Mode().Perm() != 0o640 {
							t.Errorf("mode %v, want 0640 kept", fi.Mode().Perm())
						}
						bk, err := os.ReadFile(o.Files[0].Backup)
						if err != nil || string(bk) != *tc.in {
							t.Errorf("backup %q: %v, want the previous bytes", o.Files[0].Backup, err)
						}
					} else if fi.Mode().Perm() != 0o600 {
						t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
					}

					// Already connected: nothing changes, not even a backup.
					o2, err := h.Connect(c.ID, Options{Executable: exeFor(goos)})
					if err != nil || o2.Changed || o2.Files[0].Change != Unchanged || o2.Files[0].Backup != "" {
						t.Fatalf("second connect: %+v, %v; want unchanged", o2, err)
					}
					if again, _ := os.ReadFile(files[0]); !bytes.Equal(again, got) {
						t.Fatalf("second connect changed the bytes")
					}
					st := statusOf(h, c.ID)
					if !st.Connected || st.Files[0].Mode != ModeStdio || st.Files[0].Command != exeFor(goos) {
						t.Errorf("status after connect: %+v", st)
					}

					// Disconnect removes only our entry: an input without
					// our entry comes back byte for byte.
					d, err := h.Disconnect(c.ID)
					if err != nil || !d.Changed {
						t.Fatalf("disconnect: %+v, %v", d, err)
					}
					after, _ := os.ReadFile(files[0])
					switch tc.name {
					case "missing", "empty", "moved":
						checkGolden(t, goldenPath(goos, c.ID, tc.name+".disconnected"), after)
					default:
						if string(after) != *tc.in {
							t.Errorf("connect then disconnect changed the file:\n--- got\n%s\n--- input\n%s", after, *tc.in)
						}
					}
					if statusOf(h, c.ID).Connected {
						t.Error("still connected after disconnect")
					}
				})
			}
		}
	}
}

func statusOf(h Host, id string) Status {
	for _, s := range h.List() {
		if s.Client.ID == id {
			return s
		}
	}
	panic(id)
}

// TestGoldenHTTP: the HTTP entry of every client that supports it, into a
// file with other servers; the stdio-only ones refuse and leave the file.
func TestGoldenHTTP(t *testing.T) {
	for _, c := range All() {
		t.Run(c.ID, func(t *testing.T) {
			h := testHost(t, "linux")
			var in *string
			for _, tc := range casesFor(c) {
				if tc.name == "others" {
					in = tc.in
				}
			}
			files := writeInput(t, h, c, in)
			o, err := h.Connect(c.ID, Options{HTTP: true, URL: "http://127.0.0.1:47615/mcp", Token: "0123abcd"})
			got, _ := os.ReadFile(files[0])
			if !c.HTTP {
				if !errors.Is(err, ErrNoHTTP) || o.Changed || string(got) != *in {
					t.Fatalf("stdio-only client: err %v, outcome %+v; want ErrNoHTTP and no change", err, o)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, goldenPath("linux", c.ID, "http"), got)
			st := statusOf(h, c.ID)
			if st.Files[0].Mode != ModeHTTP || st.Files[0].URL != "http://127.0.0.1:47615/mcp" {
				t.Errorf("status %+v", st.Files[0])
			}
			// Rotation rewrites the header and nothing else.
			outs, err := h.RotateToken("ffff9999")
			if err != nil || len(outs) != 1 || !outs[0].Changed {
				t.Fatalf("rotate: %+v, %v", outs, err)
			}
			rotated, _ := os.ReadFile(files[0])
			if want := strings.ReplaceAll(string(got), "0123abcd", "ffff9999"); string(rotated) != want {
				t.Errorf("after rotation:\n%s\nwant\n%s", rotated, want)
			}
			// Switching back to stdio drops the HTTP keys.
			if _, err := h.Connect(c.ID, Options{Executable: "/opt/tether/bin/tether"}); err != nil {
				t.Fatal(err)
			}
			st = statusOf(h, c.ID)
			if st.Files[0].Mode != ModeStdio || st.Files[0].URL != "" {
				t.Errorf("after switching to stdio: %+v", st.Files[0])
			}
		})
	}
}

// TestRotateTouchesOnlyOurHTTPEntries: a stdio entry and another server's
// loopback URL stay as they were.
func TestRotateTouchesOnlyOurHTTPEntries(t *testing.T) {
	h := testHost(t, "linux")
	c, _ := Lookup("cursor")
	in := `{"mcpServers": {"other": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer keep"}}}}`
	files := writeInput(t, h, c, &in)
	code, _ := Lookup("claude-code")
	writeInput(t, h, code, nil)
	if _, err := h.Connect("claude-code", Options{Executable: "/opt/t"}); err != nil {
		t.Fatal(err)
	}
	codeBefore, _ := os.ReadFile(filepath.Join(h.Home, ".claude.json"))
	outs, err := h.RotateToken("new")
	if err != nil || len(outs) != 0 {
		t.Fatalf("rotate with no Tether HTTP entry: %+v, %v", outs, err)
	}
	if b, _ := os.ReadFile(files[0]); string(b) != in {
		t.Errorf("another server's entry changed: %s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(h.Home, ".claude.json")); !bytes.Equal(b, codeBefore) {
		t.Errorf("a stdio entry changed: %s", b)
	}
}

// TestPaths: every client's config files per OS, relative to the home dir,
// before anything is installed and with every folder present. Golden:
// testdata/golden/paths.golden.
func TestPaths(t *testing.T) {
	var b strings.Builder
	for _, goos := range oses {
		for _, installed := range []bool{false, true} {
			h := testHost(t, goos)
			for _, c := range All() {
				if installed {
					for _, l := range c.locations(h) {
						os.MkdirAll(l.dir, 0o755)
					}
					if c.ID == "claude-desktop" && goos == "windows" {
						os.MkdirAll(filepath.Join(h.localAppData(), "Packages", "Claude_pzs8sxrjxfjjc"), 0o755)
					}
				}
			}
			for _, c := range All() {
				files, inst := h.targets(c)
				var rel []string
				for _, f := range files {
					r, _ := filepath.Rel(h.Home, f)
					rel = append(rel, "~/"+filepath.ToSlash(r))
				}
				setup := "bare"
				if installed {
					setup = "dirs"
				}
				fmt.Fprintf(&b, "%-7s %s %-14s installed=%-5v %s\n", goos, setup, c.ID, inst, strings.Join(rel, " + "))
			}
		}
	}
	checkGolden(t, filepath.Join("testdata", "golden", "paths.golden"), []byte(b.String()))
}

func TestEnvOverrides(t *testing.T) {
	h := testHost(t, "linux")
	codex := filepath.Join(h.Home, "codexhome")
	xdg := filepath.Join(h.Home, "xdg")
	h.Getenv = func(k string) string {
		return map[string]string{"CODEX_HOME": codex, "XDG_CONFIG_HOME": xdg}[k]
	}
	for id, want := range map[string]string{
		"codex":          filepath.Join(codex, "config.toml"),
		"zed":            filepath.Join(xdg, "zed", "settings.json"),
		"vscode":         filepath.Join(xdg, "Code", "User", "mcp.json"),
		"claude-desktop": filepath.Join(xdg, "Claude", "claude_desktop_config.json"),
	} {
		c, _ := Lookup(id)
		if files, _ := h.targets(c); len(files) != 1 || files[0] != want {
			t.Errorf("%s: %v, want %s", id, files, want)
		}
	}
}

// TestClinePrefersTheExistingFile: with only the old globalStorage file
// present, Cline's entry goes there.
func TestClinePrefersTheExistingFile(t *testing.T) {
	h := testHost(t, "darwin")
	c, _ := Lookup("cline")
	old := c.locations(h)[1].file
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte(`{"mcpServers": {}}`), 0o644)
	o, err := h.Connect("cline", Options{Executable: "/opt/t"})
	if err != nil || len(o.Files) != 1 || o.Files[0].Path != old {
		t.Fatalf("%+v, %v; want %s", o, err, old)
	}
}

// TestRefusesUnparsableFiles: a file that does not parse is left byte-
// identical, and the error names the file, line and column.
func TestRefusesUnparsableFiles(t *testing.T) {
	cases := []struct {
		client, in, where string
	}{
		{"claude-desktop", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"\n  }\n", ":5:1:"},
		{"cursor", "{\n  \"mcpServers\": {,}\n}\n", ":2:18:"},
		{"vscode", "\ufeff{\"servers\": [}", ":1:14:"},
		{"codex", "model = \"o3\"\n[mcp_servers.a\ncommand = 1\n", ":2:"},
		{"zed", "[1, 2]", "top level is not a JSON object"},
		{"gemini", `{"mcpServers": []}`, `"mcpServers" is not an object`},
		{"lmstudio", `{"mcpServers": {"tether": {}, "tether": {}}}`, `appears twice`},
		{"codex", "mcp_servers = { tether = { command = \"x\" } }\n", "without a [mcp_servers.tether] header"},
	}
	for _, tc := range cases {
		t.Run(tc.client, func(t *testing.T) {
			h := testHost(t, "linux")
			c, _ := Lookup(tc.client)
			files := writeInput(t, h, c, &tc.in)
			for _, op := range []func() (Outcome, error){
				func() (Outcome, error) { return h.Connect(tc.client, Options{Executable: "/opt/t"}) },
				func() (Outcome, error) { return h.Disconnect(tc.client) },
			} {
				o, err := op()
				if err == nil && strings.Contains(tc.where, "not an object") && !o.Changed {
					continue // Disconnect: such a file has no entry of ours
				}
				if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), files[0]) || !strings.Contains(err.Error(), tc.where) {
					t.Errorf("err %v; want ErrRefused naming %s and %q", err, files[0], tc.where)
				}
				if b, _ := os.ReadFile(files[0]); string(b) != tc.in {
					t.Errorf("file changed: %q", b)
				}
			}
			entries, _ := os.ReadDir(filepath.Dir(files[0]))
			if len(entries) != 1 {
				t.Errorf("leftover files next to it: %v", entries)
			}
		})
	}
}

func TestBackupsAreBounded(t *testing.T) {
	h := testHost(t, "linux")
	h.MaxBackups = 3
	c, _ := Lookup("cursor")
	files := writeInput(t, h, c, ptr(`{"mcpServers": {}}`))
	var made []string
	for i := range 6 {
		o, err := h.Connect("cursor", Options{Executable: fmt.Sprintf("/opt/v%d/tether", i)})
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, o.Files[0].Backup)
	}
	var have []string
	entries, _ := os.ReadDir(filepath.Dir(files[0]))
	for _, e := range entries {
		if strings.Contains(e.Name(), backupSuffix) {
			have = append(have, filepath.Join(filepath.Dir(files[0]), e.Name()))
		}
	}
	sort.Strings(have)
	if want := made[3:]; strings.Join(have, ",") != strings.Join(want, ",") {
		t.Fatalf("backups %v, want the newest 3 %v", have, want)
	}
	// The newest backup holds the file as it was before the last change.
	b, _ := os.ReadFile(made[5])
	if !strings.Contains(string(b), "/opt/v4/tether") {
		t.Errorf("newest backup: %s", b)
	}
}

func TestSymlinkedConfigKeepsTheLink(t *testing.T) {
	h := testHost(t, "linux")
	c, _ := Lookup("cursor")
	writeInput(t, h, c, nil)
	real := filepath.Join(h.Home, "dotfiles", "mcp.json")
	os.MkdirAll(filepath.Dir(real), 0o755)
	os.WriteFile(real, []byte(`{"mcpServers": {}}`), 0o644)
	link := filepath.Join(h.Home, ".cursor", "mcp.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Connect("cursor", Options{Executable: "/opt/t"}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the symlink was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), `"tether"`) {
		t.Errorf("target not edited: %s", b)
	}
}

func TestUnknownClientAndRelativeCommand(t *testing.T) {
	h := testHost(t, "linux")
	if _, err := h.Connect("notepad", Options{Executable: "/opt/t"}); !errors.Is(err, ErrUnknownClient) || !strings.Contains(err.Error(), "claude-desktop") {
		t.Errorf("unknown client: %v", err)
	}
	if _, err := h.Connect("cursor", Options{Executable: "tether"}); err == nil {
		t.Error("a relative command was accepted")
	}
	if _, err := h.Connect("cursor", Options{Executable: `C:\t\tether.exe`}); err == nil {
		t.Error("a Windows path was accepted on linux")
	}
	w := testHost(t, "windows")
	if _, err := w.Connect("cursor", Options{Executable: `C:\t\tether.exe`}); err != nil {
		t.Errorf("a Windows path on windows: %v", err)
	}
}
