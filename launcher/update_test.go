package launcher

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// TestUpdateExtensionAddsAMissingPairingKey: a folder written before the
// pairing key existed gets the daemon's key when it is rewritten; one that
// has a key keeps its tether.json byte for byte.
func TestUpdateExtensionAddsAMissingPairingKey(t *testing.T) {
	ext := fstest.MapFS{"manifest.json": {Data: []byte(`{"version":"9.9.9"}`)}}
	key := strings.Repeat("c3", 32)
	for _, tc := range []struct {
		name    string
		written ExtensionConfig
		want    string
	}{
		{"written before the key", ExtensionConfig{Port: 4242, Label: "Work"}, key},
		{"with a key", ExtensionConfig{Port: 4242, Label: "Work", PairingKey: strings.Repeat("d4", 32)}, strings.Repeat("d4", 32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ext")
			if err := WriteExtension(ext, dir, tc.written); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(filepath.Join(dir, ConfigName))
			if err := UpdateExtension(ext, dir, key); err != nil {
				t.Fatal(err)
			}
			after, _ := os.ReadFile(filepath.Join(dir, ConfigName))
			var got ExtensionConfig
			if err := json.Unmarshal(after, &got); err != nil {
				t.Fatalf("tether.json after the update: %v\n%s", err, after)
			}
			if got.PairingKey != tc.want || got.Port != 4242 || got.Label != "Work" {
				t.Fatalf("tether.json after the update: %+v, want key %s with port and label kept", got, tc.want)
			}
			if tc.written.PairingKey != "" && string(after) != string(before) {
				t.Fatalf("tether.json with a key changed:\n%s\n%s", before, after)
			}
		})
	}
}
