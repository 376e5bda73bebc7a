package launcher

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

func TestEnableDeveloperMode(t *testing.T) {
	read := func(dir string) map[string]any {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "Default", "Preferences"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	devMode := func(m map[string]any) any {
		ext, _ := m["extensions"].(map[string]any)
		ui, _ := ext["ui"].(map[string]any)
		return ui["developer_mode"]
	}

	fresh := t.TempDir()
	if err := EnableDeveloperMode(fresh); err != nil {
		t.Fatal(err)
	}
	if devMode(read(fresh)) != true {
		t.Fatalf("a new profile: %v", read(fresh))
	}

	existing := t.TempDir()
	_ = os.MkdirAll(filepath.Join(existing, "Default"), 0o700)
	_ = os.WriteFile(filepath.Join(existing, "Default", "Preferences"), []byte(`{"browser":{"x":1},"extensions":{"ui":{"developer_mode":false},"settings":{"a":{}}}}`), 0o600)
	if err := EnableDeveloperMode(existing); err != nil {
		t.Fatal(err)
	}
	m := read(existing)
	if devMode(m) != true || m["browser"].(map[string]any)["x"] != float64(1) || m["extensions"].(map[string]any)["settings"] == nil {
		t.Fatalf("other settings were lost: %v", m)
	}

	broken := t.TempDir()
	_ = os.MkdirAll(filepath.Join(broken, "Default"), 0o700)
	_ = os.WriteFile(filepath.Join(broken, "Default", "Preferences"), []byte(`not json`), 0o600)
	if err := EnableDeveloperMode(broken); err == nil {
		t.Fatal("a file that is not JSON was rewritten")
	}
	if b, _ := os.ReadFile(filepath.Join(broken, "Default", "Preferences")); string(b) != "not json" {
		t.Fatalf("it changed: %q", b)
	}
}
