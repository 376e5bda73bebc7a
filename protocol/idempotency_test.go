package protocol

import "testing"

// A call's fingerprint depends on its arguments' values, not on their order
// or on nil versus no arguments.
func TestCallFingerprint(t *testing.T) {
	a := CallFingerprint(map[string]any{"url": "https://a/", "tab": 2.0, "o": map[string]any{"x": 1.0, "y": true}})
	b := CallFingerprint(map[string]any{"o": map[string]any{"y": true, "x": 1.0}, "tab": 2.0, "url": "https://a/"})
	if a != b || len(a) != 64 {
		t.Fatalf("%q != %q", a, b)
	}
	if CallFingerprint(nil) != CallFingerprint(map[string]any{}) {
		t.Fatal("nil and {} differ")
	}
	if a == CallFingerprint(map[string]any{"url": "https://b/", "tab": 2.0, "o": map[string]any{"x": 1.0, "y": true}}) {
		t.Fatal("other arguments, same fingerprint")
	}
}
