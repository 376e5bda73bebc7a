//go:build !windows

package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
)

// caseFile is one bug-report case from ../shared/cases (see its README).
type caseFile struct {
	Action []caseStep `json:"action"`
	Expect []struct {
		Selector string `json:"selector"`
		Text     string `json:"text"`
	} `json:"expect"`
}

type caseStep struct {
	Tool     string `json:"tool"`
	Target   string `json:"target"`
	Value    string `json:"value"`
	Key      string `json:"key"`
	Source   string `json:"source"`
	Ref      string `json:"ref"`
	Accept   bool   `json:"accept"`
	Message  string `json:"message"`
	Optional bool   `json:"optional"`
	Files    []struct {
		Name    string `json:"name"`
		Type    string `json:"type"`
		Content string `json:"content"`
	} `json:"files"`
}

func casesDir(t *testing.T) string {
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "cases"))
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no cases at %s (../shared is absent); skipping the bug-report cases", dir)
	}
	return dir
}

var (
	targetRe = regexp.MustCompile(`^(\w+) '([^']*)'`)
	quotedRe = regexp.MustCompile(`'([^']*)'`)
	lineRe   = regexp.MustCompile(`- (\w+) "((?:[^"\\]|\\.)*)"[^\n]*?\[ref=([^\]]+)\]`)
)

// resolve finds a target like `button 'Save'` (maybe followed by a
// qualifier naming a row, a frame or a column) as an agent would: with
// browser_find by role and name, then the qualifier against each match's
// line and context.
func resolve(t *testing.T, ctx context.Context, c *client.Client, target string) string {
	t.Helper()
	m := targetRe.FindStringSubmatch(target)
	if m == nil {
		t.Fatalf("cannot parse target %q", target)
	}
	role, name := m[1], m[2]
	qualifiers := quotedRe.FindAllStringSubmatch(target[len(m[0]):], -1)
	if strings.Contains(target, " in the row for ") && len(qualifiers) > 0 {
		// One of thousands of identical buttons: find the row by its
		// distinctive text, then look inside that row only.
		key := qualifiers[len(qualifiers)-1][1]
		found := mustCall(t, ctx, c, "browser_find", map[string]any{"text": key})
		rm := regexp.MustCompile(`under row .*\[ref=([^\]]+)\]`).FindStringSubmatch(found)
		if rm == nil {
			t.Fatalf("no row for %q in:\n%s", key, found)
		}
		row := mustCall(t, ctx, c, "browser_snapshot", map[string]any{"ref": rm[1]})
		return ref(t, row, role, name)
	}
	args := map[string]any{"text": name}
	if ariaRoles[role] {
		args["role"] = role
	}
	out := mustCall(t, ctx, c, "browser_find", args)
	var best string
	for _, line := range strings.Split(out, "\n") {
		lm := lineRe.FindStringSubmatch(line)
		if lm == nil || (ariaRoles[role] && lm[1] != role) || strings.TrimSpace(lm[2]) != name {
			continue
		}
		ok := true
		for _, q := range qualifiers {
			if strings.Contains(target, "row") && !strings.Contains(line, q[1]) {
				ok = false
			}
		}
		if ok {
			if best != "" && best != lm[3] {
				t.Logf("target %q matches more than one element; taking the first", target)
				break
			}
			best = lm[3]
		}
	}
	if best == "" {
		// Not a named element of its own (e.g. a draggable card): the text's line.
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, name) {
				if r := regexp.MustCompile(`\[ref=([^\]]+)\]`).FindStringSubmatch(line); r != nil {
					return r[1]
				}
			}
		}
		t.Fatalf("no element for %q in:\n%s", target, out)
	}
	return best
}

var ariaRoles = map[string]bool{"button": true, "link": true, "textbox": true, "checkbox": true, "combobox": true,
	"spinbutton": true, "region": true, "radio": true, "searchbox": true, "listbox": true, "option": true}

// runStep performs one case step and returns the tool's text.
func runStep(t *testing.T, ctx context.Context, c *client.Client, s caseStep, firstSnapshot string) string {
	t.Helper()
	switch s.Tool {
	case "snapshot":
		return mustCall(t, ctx, c, "browser_snapshot", nil)
	case "click":
		if s.Ref != "" && firstSnapshot != "" {
			// The case wants the ref from the first snapshot, taken before
			// a re-render: it must fail as stale, never act on another
			// element; the agent then snapshots again.
			m := targetRe.FindStringSubmatch(s.Target)
			old := ref(t, firstSnapshot, m[1], m[2])
			text, isErr := call(t, ctx, c, "browser_click", map[string]any{"ref": old})
			if !isErr {
				return text // still the same element: fine
			}
			if !strings.Contains(text, "stale_ref") {
				t.Fatalf("old ref %s: %s", old, text)
			}
		}
		return mustCall(t, ctx, c, "browser_click", map[string]any{"ref": resolve(t, ctx, c, s.Target)})
	case "fill", "type":
		return mustCall(t, ctx, c, "browser_type", map[string]any{"ref": resolve(t, ctx, c, s.Target), "text": s.Value})
	case "type_text":
		var out string
		for _, r := range s.Value {
			out = mustCall(t, ctx, c, "browser_press_key", map[string]any{"key": string(r)})
		}
		return out
	case "press_key":
		return mustCall(t, ctx, c, "browser_press_key", map[string]any{"key": strings.ReplaceAll(s.Key, "ControlOrMeta", "Control")})
	case "select_option":
		return mustCall(t, ctx, c, "browser_select_option", map[string]any{"ref": resolve(t, ctx, c, s.Target), "values": []string{s.Value}})
	case "hover":
		return mustCall(t, ctx, c, "browser_hover", map[string]any{"ref": resolve(t, ctx, c, s.Target)})
	case "drag":
		return mustCall(t, ctx, c, "browser_drag", map[string]any{"from_ref": resolve(t, ctx, c, s.Source), "to_ref": resolve(t, ctx, c, s.Target)})
	case "upload_file":
		var paths []string
		dir := t.TempDir()
		for _, f := range s.Files {
			p := filepath.Join(dir, f.Name)
			if err := os.WriteFile(p, []byte(f.Content), 0o600); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
		}
		return mustCall(t, ctx, c, "browser_file_upload", map[string]any{"ref": resolve(t, ctx, c, s.Target), "paths": paths})
	case "screenshot":
		return mustCall(t, ctx, c, "browser_take_screenshot", map[string]any{"bring_to_front": true})
	}
	t.Fatalf("unknown case tool %q", s.Tool)
	return ""
}

// TestBugReportCases runs every case in ../shared/cases through the real
// MCP client, daemon, extension and Chromium. Dialog answers are armed
// before the action that opens the dialogs, as browser_handle_dialog's
// description tells agents to do; each reported dialog's text is checked.
func TestBugReportCases(t *testing.T) {
	// Not parallel: a huge page (see main_test.go).
	RequireChromium(t)
	dir := casesDir(t)
	bin := Binary(t)
	// Sensitive actions (file upload) need confirmation; there is no window
	// here, so the test allows them as a trusted server would.
	d := StartDaemon(t, bin, "--auto-approve-profiles", "--unattended=allow")
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	b := StartBrowser(t, d)
	alloc := b.DevTools(t)
	ctx := Context(t, 10*time.Minute)
	c := stdioClient(t, ctx, d)

	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var cf caseFile
			if err := json.Unmarshal(raw, &cf); err != nil {
				t.Fatal(err)
			}
			page := srv.URL + "/" + name + ".html"
			mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": page})
			var first string
			var dialogs []caseStep
			for i, s := range cf.Action {
				if s.Tool == "handle_dialog" {
					continue // armed before the action they follow
				}
				dialogs = dialogs[:0]
				for _, next := range cf.Action[i+1:] {
					if next.Tool != "handle_dialog" {
						break
					}
					dialogs = append(dialogs, next)
				}
				for j, dl := range dialogs {
					if j > 0 && dl.Accept == dialogs[0].Accept {
						continue
					}
					mustCall(t, ctx, c, "browser_handle_dialog", map[string]any{"accept": dl.Accept, "times": len(dialogs)})
				}
				out := runStep(t, ctx, c, s, first)
				if s.Tool == "snapshot" && first == "" {
					first = out
				}
				for _, dl := range dialogs {
					if dl.Message != "" && !strings.Contains(out, strings.ReplaceAll(dl.Message, `"`, `\"`)) && !strings.Contains(out, dl.Message) {
						t.Errorf("the result of %s does not report the dialog %q:\n%s", s.Tool, dl.Message, out)
					}
				}
			}
			for _, e := range cf.Expect {
				if got := PageText(t, alloc, name+".html", e.Selector); got != e.Text {
					t.Errorf("%s: textContent %q, want %q", e.Selector, got, e.Text)
				}
			}
		})
	}
}
