package protocol

import (
	"bytes"
	"os"
	"testing"
)

// TestSchemaIsCurrent fails when extension/src/protocol.schema.json no longer
// matches the Go types. The extension's vitest suite in turn fails when
// protocol.gen.ts no longer matches the schema.
func TestSchemaIsCurrent(t *testing.T) {
	t.Chdir("..")
	got, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	const path = "extension/src/protocol.schema.json"
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v (run `make generate`)", path, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run `make generate` and commit the result", path)
	}
}
