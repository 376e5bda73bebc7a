//go:build !windows

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// secret is typed into a password field; it must never appear in any result,
// log or stored record.
const secret = "hunter2-Tether-secret"

// TestEveryTool drives every tool of the default set, plus browser_evaluate
// (enabled for this run) and the MCP resources, through a real MCP client,
// on fixture pages whose own handlers prove each action ran; then it greps
// every result, log file and stored record for the typed password.
func TestEveryTool(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow", "--enable-tools=browser_evaluate")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	StartBrowser(t, d)
	ctx := Context(t, 5*time.Minute)
	c := stdioClient(t, ctx, d)
	var results []string
	run := func(tool string, args map[string]any, want ...string) string {
		t.Helper()
		text := mustCall(t, ctx, c, tool, args)
		results = append(results, text)
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s(%v) lacks %q:\n%s", tool, args, w, text)
			}
		}
		return text
	}
	page := fixtures.URL + "/tools.html"

	snap := run("browser_navigate", map[string]any{"url": page}, `heading "Tool bench" [level=1]`)
	run("browser_snapshot", map[string]any{"depth": 1}, "main")
	run("browser_find", map[string]any{"role": "button", "text": "log in"}, `button "Log in"`)
	// By role alone: the page's pass stops past the limit (50), so a few buttons are all counted.
	run("browser_find", map[string]any{"role": "button"}, `button "Log in"`, " match(es)")
	run("browser_read", map[string]any{"mode": "full"}, "# Tool bench", "[Second page]("+fixtures.URL+"/page2.html)")
	run("browser_read", nil, "exercises every browser tool")

	run("browser_type", map[string]any{"ref": ref(t, snap, "textbox", "User"), "text": "ada"})
	typed := run("browser_type", map[string]any{"ref": ref(t, snap, "textbox", "Password"), "text": secret, "submit": true})
	if !strings.Contains(typed, "Logged in as ada with a 21-character password") {
		t.Errorf("the form's own handler did not see the typed values:\n%s", typed)
	}
	// Logged by the form's handler, once the hooks are in (a message the
	// page logs while it first loads may come before them).
	run("browser_console_messages", nil, "logged in as ada", "[warn] a warning from the page")
	run("browser_select_option", map[string]any{"ref": ref(t, snap, "combobox", "Color"), "values": []string{"Blue"}}, "Color: blue")
	hoverRef := regexpRef(t, snap, "Hover me")
	run("browser_hover", map[string]any{"ref": hoverRef}, "Hovered!")
	run("browser_click", map[string]any{"ref": ref(t, snap, "button", "Later")})
	run("browser_wait_for", map[string]any{"text": "Arrived later"}, "Arrived later")
	run("browser_scroll", map[string]any{"to": "bottom"}, "Now at top")
	run("browser_click", map[string]any{"ref": ref(t, snap, "textbox", "User")})
	run("browser_press_key", map[string]any{"key": "Control+A"})
	run("browser_press_key", map[string]any{"key": "z"}, `textbox "User"`, ": z")

	// Dialogs: unarmed, a confirm is dismissed at once and reported; armed,
	// it is accepted.
	run("browser_click", map[string]any{"ref": ref(t, snap, "button", "Ask")}, "Cancelled", "Proceed with the test?", "dismissed by default")
	run("browser_handle_dialog", map[string]any{"accept": true}, "will accept")
	run("browser_click", map[string]any{"ref": ref(t, snap, "button", "Ask")}, "Confirmed", "accepted as armed")

	run("browser_evaluate", map[string]any{"expression": "document.title + ' ' + (1 + 2)"}, `"Tool bench 3"`)

	// The agent's tab opened in the background: a screenshot asks to bring it forward.
	if out, isErr := call(t, ctx, c, "browser_take_screenshot", nil); !isErr || !strings.Contains(out, "bring_to_front: true") {
		t.Fatalf("a screenshot of the background tab: error=%v %s", isErr, out)
	}
	shot, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "browser_take_screenshot", Arguments: map[string]any{"bring_to_front": true}}})
	if err != nil || shot.IsError {
		t.Fatalf("screenshot: %v %+v", err, shot)
	}
	var png []byte
	for _, content := range shot.Content {
		if img, ok := content.(mcp.ImageContent); ok {
			png, _ = base64.StdEncoding.DecodeString(img.Data)
		}
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("screenshot is not a PNG image content (%d bytes)", len(png))
	}

	run("browser_click", map[string]any{"ref": ref(t, snap, "link", "Second page")}, "Title: Second page")
	run("browser_navigate_back", nil, "Title: Tool bench")
	run("browser_navigate_forward", nil, "Title: Second page")
	run("browser_reload", nil, "Title: Second page")

	opened := run("browser_tabs", map[string]any{"action": "new", "url": page}, "Opened tab")
	tab := tabNumber(t, mustCall(t, ctx, c, "browser_tabs", nil), "tools.html")
	_ = opened
	run("browser_tabs", map[string]any{"action": "select", "tab": tab}, "Selected tab")
	run("browser_tabs", map[string]any{"action": "close", "tab": tab}, "Closed tab")
	run("browser_read_url", map[string]any{"url": fixtures.URL + "/page2.html"}, "You arrived.")
	if list := mustCall(t, ctx, c, "browser_tabs", nil); strings.Contains(list, "page2.html") && strings.Count(list, "page2.html") > 1 {
		t.Errorf("browser_read_url left its tab open:\n%s", list)
	}

	// Resources, read through the real client.
	res, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil || len(res.Resources) != 3 {
		t.Fatalf("resources: %v %+v", err, res)
	}
	for _, r := range res.Resources {
		rr, err := c.ReadResource(ctx, mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: r.URI}})
		if err != nil || len(rr.Contents) == 0 {
			t.Fatalf("read %s: %v", r.URI, err)
		}
		text := rr.Contents[0].(mcp.TextResourceContents).Text
		results = append(results, text)
		if !strings.Contains(text, "Second page") {
			t.Errorf("%s: %s", r.URI, text)
		}
	}

	assertSecretNowhere(t, c, ctx, d, results)
}

// regexpRef finds the ref of the snapshot line whose text contains text.
func regexpRef(t *testing.T, snapshot, text string) string {
	t.Helper()
	for _, line := range strings.Split(snapshot, "\n") {
		if strings.Contains(line, text) {
			if i := strings.Index(line, "[ref="); i >= 0 {
				return line[i+5 : i+strings.Index(line[i:], "]")]
			}
		}
	}
	t.Fatalf("no ref on a line with %q in:\n%s", text, snapshot)
	return ""
}

// assertSecretNowhere greps every tool result, the timeline export, and
// every file in the config dir (logs, timeline database, settings) for the
// typed password.
func assertSecretNowhere(t *testing.T, c *client.Client, ctx context.Context, d *Daemon, results []string) {
	t.Helper()
	for _, r := range results {
		if strings.Contains(r, secret) {
			t.Errorf("a tool result holds the typed password:\n%s", r)
		}
	}
	_ = filepath.WalkDir(d.Paths.Dir, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err == nil && bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the typed password", path)
		}
		return nil
	})
	if bytes.Contains([]byte(d.Log.String()), []byte(secret)) {
		t.Error("the daemon's stderr holds the typed password")
	}
}
