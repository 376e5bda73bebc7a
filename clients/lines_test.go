package clients

import (
	"os"
	"strings"
	"testing"
)

// After a removal, a client that watches its config (Zed, Cline) needs
// nothing; any other is told to restart or reload.
func TestDisconnectLinesSayWhetherToReload(t *testing.T) {
	for id, want := range map[string]string{
		"zed":    "next: nothing to do: Zed notices the change and drops Tether by itself",
		"cline":  "next: nothing to do: Cline notices the change",
		"cursor": "next: restart or reload Cursor so that it drops Tether",
	} {
		c, ok := Lookup(id)
		if !ok {
			t.Fatalf("no client %q", id)
		}
		o := Outcome{Client: c, Changed: true, Files: []FileResult{{Path: "/x/settings.json", Change: Removed}}}
		if got := strings.Join(o.Lines(false), "\n"); !strings.Contains(got, want) {
			t.Errorf("%s: lines %q, want %q", id, got, want)
		}
	}
}

// A stdio entry names the config dir and the port only when they are not
// the defaults, in JSON (Cursor) and TOML (Codex) configs alike.
func TestStdioEntryNamesAPortThatIsNotTheDefault(t *testing.T) {
	for _, id := range []string{"cursor", "codex"} {
		h := testHost(t, "linux")
		o, err := h.Connect(id, Options{Executable: "/opt/tether/bin/tether", ConfigDir: "/home/ana/tether-work", Port: 48000})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		b, err := os.ReadFile(o.Files[0].Path)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"TETHER_PORT", "48000", "TETHER_CONFIG_DIR", "/home/ana/tether-work"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("%s: entry lacks %s:\n%s", id, want, b)
			}
		}
		h = testHost(t, "linux")
		o, err = h.Connect(id, Options{Executable: "/opt/tether/bin/tether"})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if b, _ := os.ReadFile(o.Files[0].Path); strings.Contains(string(b), "TETHER_") {
			t.Errorf("%s: a default entry names an env var:\n%s", id, b)
		}
	}
}
