package app

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The window's bindings (frontend/wailsjs) are generated from App by
// `make bindings` and committed; this regenerates them in a temporary
// folder and fails when the committed copy is stale.
func TestBindingsAreFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bindings generator")
	}
	tmp := t.TempDir()
	gen := filepath.Join(tmp, "gen")
	build := exec.Command("go", "build", "-tags", "bindings", "-o", gen, "./build/bindings")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the generator: %v\n%s", err, out)
	}
	wailsJSON, err := os.ReadFile("../wails.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "wails.json"), wailsJSON, 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(gen)
	run.Dir = tmp
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("generate: %v\n%s", err, out)
	}
	fresh := readTree(t, filepath.Join(tmp, "frontend", "wailsjs"))
	committed := readTree(t, filepath.Join("..", "frontend", "wailsjs"))
	for name, b := range fresh {
		if c, ok := committed[name]; !ok || !bytes.Equal(c, b) {
			t.Errorf("frontend/wailsjs/%s is stale or missing: run `make bindings` and commit it", name)
		}
	}
	for name := range committed {
		if _, ok := fresh[name]; !ok {
			t.Errorf("frontend/wailsjs/%s is no longer generated: run `make bindings` and commit the removal", name)
		}
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
