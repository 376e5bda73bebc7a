package protocol

import (
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
)

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

// The extension's READ_METHODS (idempotency.ts: methods that keep no step
// and run again on a repeat) are exactly the methods that do not act here
// (Method.Mutates false).
func TestExtensionReadMethodsMatchMutates(t *testing.T) {
	src, err := os.ReadFile("../extension/src/background/idempotency.ts")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`READ_METHODS[^=]*= new Set\(\[([^\]]*)\]\)`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no READ_METHODS set in idempotency.ts")
	}
	var ext []string
	for _, q := range regexp.MustCompile(`'([a-z_]+)'`).FindAllSubmatch(m[1], -1) {
		ext = append(ext, string(q[1]))
	}
	f, _ := reflect.TypeOf(Request{}).FieldByName("Method")
	var reads []string
	for _, part := range strings.Split(f.Tag.Get("jsonschema"), ",") {
		if name, ok := strings.CutPrefix(part, "enum="); ok && !Method(name).Mutates() {
			reads = append(reads, name)
		}
	}
	sort.Strings(ext)
	sort.Strings(reads)
	if strings.Join(ext, ",") != strings.Join(reads, ",") || len(reads) == 0 {
		t.Fatalf("extension READ_METHODS %v, methods that do not act %v", ext, reads)
	}
}

// WireKey: the agent's key behind its scope's 12 hex characters and a dot;
// a key too long for that is sent as its digest; no key, no wire key.
func TestWireKey(t *testing.T) {
	a := IdempotentCall{Key: "k-1", Scope: "\x00app-a"}
	b := IdempotentCall{Key: "k-1", Scope: "\x00app-b"}
	if a.WireKey() == b.WireKey() || !regexp.MustCompile(`^[0-9a-f]{12}\.k-1$`).MatchString(a.WireKey()) {
		t.Fatalf("wire keys %q and %q: want <12 hex>.k-1, different per scope", a.WireKey(), b.WireKey())
	}
	if a.WireKey() != (IdempotentCall{Key: "k-1", Scope: "\x00app-a", Tool: "x"}).WireKey() {
		t.Fatal("the wire key depends on more than the key and the scope")
	}
	long := IdempotentCall{Key: strings.Repeat("x", MaxIdempotencyKeyLen), Scope: "s"}
	if w := long.WireKey(); len(w) > MaxIdempotencyKeyLen || !ValidIdempotencyKey(w) || !strings.Contains(w, ".#") {
		t.Fatalf("wire key of a %d-byte key: %q", len(long.Key), w)
	}
	if (IdempotentCall{Scope: "s"}).WireKey() != "" {
		t.Fatal("a call without a key has a wire key")
	}
}
