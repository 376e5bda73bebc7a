package mcp

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/tether-browser/tether/policy"
)

func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		tool, action string
		want         policy.Class
	}{
		{"browser_snapshot", "", policy.Read},
		{"browser_take_screenshot", "", policy.Read},
		{"browser_navigate", "", policy.Navigate},
		{"browser_read_url", "", policy.Navigate},
		{"browser_click", "", policy.Interact},
		{"browser_type", "", policy.Interact},
		{"browser_file_upload", "", policy.Sensitive},
		{"browser_evaluate", "", policy.Sensitive},
		{"browser_tabs", "", policy.Read},
		{"browser_tabs", "list", policy.Read},
		{"browser_tabs", "new", policy.Navigate},
		{"browser_tabs", "close", policy.Interact},
		{"browser_tabs", "select", policy.Interact},
		{"browser_some_future_tool", "", policy.Sensitive},
	} {
		if got := Classify(tt.tool, tt.action); got != tt.want {
			t.Errorf("Classify(%q, %q) = %s, want %s", tt.tool, tt.action, got, tt.want)
		}
	}
}

// TestEveryToolHasItsFacts: every tool states a class the policy knows (a
// tool without one would need confirmation: fail closed), its annotations
// agree with it (read-only exactly when every call reads), and what it
// redacts or keeps whole are arguments of its schema.
func TestEveryToolHasItsFacts(t *testing.T) {
	seen := map[string]bool{}
	for _, tl := range Tools() {
		name := tl.Name()
		if seen[name] {
			t.Errorf("%s is defined twice", name)
		}
		seen[name] = true
		if !slices.Contains(policy.Classes, tl.Class) {
			t.Errorf("%s: class %q is not one of %v", name, tl.Class, policy.Classes)
		}
		reads := tl.Class == policy.Read && len(tl.ActionClasses) == 0
		for action, c := range tl.ActionClasses {
			if !slices.Contains(policy.Classes, c) {
				t.Errorf("%s action %q: class %q is not one of %v", name, action, c, policy.Classes)
			}
		}
		ro := tl.Def.Annotations.ReadOnlyHint
		if ro == nil || *ro != reads {
			t.Errorf("%s: readOnlyHint %v, but its calls are %s (by action: %v)", name, ro, tl.Class, tl.ActionClasses)
		}
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(tl.Def.RawInputSchema, &schema); err != nil || len(schema.Properties) == 0 {
			t.Errorf("%s: input schema: %v, %d properties", name, err, len(schema.Properties))
		}
		for _, arg := range slices.Concat(tl.Redacted, tl.Whole, tl.Plain) {
			if _, ok := schema.Properties[arg]; !ok {
				t.Errorf("%s: its timeline rules name %q, which is not an argument", name, arg)
			}
		}
	}
}

func TestLoadsURL(t *testing.T) {
	for _, tt := range []struct {
		tool string
		args map[string]any
		want string // "" when the call does not navigate
	}{
		{"browser_navigate", map[string]any{"url": "https://a.example/"}, "https://a.example/"},
		{"browser_read_url", map[string]any{"url": "https://b.example/"}, "https://b.example/"},
		{"browser_tabs", map[string]any{"action": "new", "url": "https://c.example/"}, "https://c.example/"},
		{"browser_tabs", map[string]any{"action": "new"}, "about:blank"},
		{"browser_tabs", map[string]any{"url": "https://c.example/"}, ""},
		{"browser_tabs", map[string]any{"action": "close", "tab": 2.0}, ""},
		{"browser_click", map[string]any{"ref": "e1", "url": "https://d.example/"}, ""},
		{"browser_navigate_back", nil, ""},
		{"browser_bogus", map[string]any{"url": "https://e.example/"}, ""},
	} {
		got, ok := LoadsURL(tt.tool, tt.args)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("LoadsURL(%s, %v) = %q, %v; want %q", tt.tool, tt.args, got, ok, tt.want)
		}
	}
}

// TestOffByDefault: the default tools/list is every tool not off by
// default, and only browser_evaluate is off.
func TestOffByDefault(t *testing.T) {
	var want, off []string
	for _, tl := range Tools() {
		if tl.OffByDefault {
			off = append(off, tl.Name())
		} else {
			want = append(want, tl.Name())
		}
	}
	var got []string
	for _, tl := range listTools(t) {
		got = append(got, tl.Name)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("tools/list = %v, want %v", got, want)
	}
	if !slices.Equal(off, []string{"browser_evaluate"}) {
		t.Errorf("off by default: %v", off)
	}
}
