package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStripKey(t *testing.T) {
	in := `{
  "manifest_version": 3,
  "version": "1.2.3",
  "key": "MIIB",
  "permissions": ["tabs"]
}
`
	out, err := stripKey([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if _, ok := m["key"]; ok || m["version"] != "1.2.3" || len(m) != 3 {
		t.Errorf("stripped manifest %s", out)
	}
	if want := strings.Replace(in, "  \"key\": \"MIIB\",\n", "", 1); string(out) != want {
		t.Errorf("the rest of the text changed:\n%s\nwant\n%s", out, want)
	}
	if _, err := stripKey([]byte(`{"version": "1.2.3"}`)); err == nil || !strings.Contains(err.Error(), `no "key"`) {
		t.Errorf("no key: %v", err)
	}
}
