package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLargeSnapshotComesWhole: an uncapped snapshot larger than
// protocol.PackSnapshotOver travels packed (content script → service
// worker → offscreen document → daemon, gzip in base64) and reaches the
// agent whole and exact, non-ASCII text included; so does a click's.
func TestLargeSnapshotComesWhole(t *testing.T) {
	// Not parallel: a huge page (see main_test.go).
	RequireChromium(t)
	cfgDir := filepath.Join(t.TempDir(), "config")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "settings.json"), []byte(`{"snapshotMaxChars": 10000000}`), 0o600); err != nil {
		t.Fatal(err)
	}
	const rows = 3000
	var page strings.Builder
	page.WriteString(`<!doctype html><meta charset="utf-8"><title>Rows</title><p id="status">idle</p><table>`)
	for i := range rows {
		fmt.Fprintf(&page, `<tr><td><a href="#r%d">Öffne Zeile %d ✓</a></td><td><button onclick="document.getElementById('status').textContent='clicked %d'">Delete %d</button></td><td><input aria-label="Note %d"></td></tr>`, i, i, i, i, i)
	}
	page.WriteString(`</table>`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page.String()))
	}))
	defer srv.Close()
	d := StartDaemonAt(t, Binary(t), cfgDir, 0, "--auto-approve-profiles")
	StartBrowser(t, d)
	ctx := Context(t, 3*time.Minute)
	c := stdioClient(t, ctx, d)
	if text, isErr := call(t, ctx, c, "browser_navigate", map[string]any{"url": srv.URL}); isErr {
		t.Fatal(text)
	}
	text, isErr := call(t, ctx, c, "browser_snapshot", map[string]any{})
	if isErr {
		t.Fatal(text)
	}
	if len(text) < 128<<10 {
		t.Fatalf("snapshot is %d bytes; the test needs one over 128 KiB", len(text))
	}
	for _, want := range []string{`link "Öffne Zeile 0 ✓"`, fmt.Sprintf(`link "Öffne Zeile %d ✓"`, rows-1), fmt.Sprintf(`button "Delete %d"`, rows-1), fmt.Sprintf(`textbox "Note %d"`, rows-1)} {
		if !strings.Contains(text, want) {
			t.Errorf("snapshot lacks %s", want)
		}
	}
	if n := strings.Count(text, "[ref="); n < 3*rows {
		t.Errorf("snapshot has %d refs, want at least %d", n, 3*rows)
	}
	if strings.Contains(text, "\uFFFD") || strings.Contains(text, "left out") {
		t.Errorf("snapshot is mangled or cut:\n%.400s", text[len(text)-400:])
	}
	// A click's result carries the change (a diff or the whole page, packed).
	r := ref(t, text, "button", fmt.Sprintf("Delete %d", rows-2))
	out, isErr := call(t, ctx, c, "browser_click", map[string]any{"ref": r})
	if isErr || !strings.Contains(out, fmt.Sprintf("clicked %d", rows-2)) {
		t.Fatalf("click result lacks the change (error %v):\n%.600s", isErr, out)
	}
}
