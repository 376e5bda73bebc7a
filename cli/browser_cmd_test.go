package cli

import (
	"context"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/tether-browser/tether/config"
)

// `tether browser` without --headless and without a display says what to
// do before it writes anything (it left an extension folder behind).
func TestBrowserWithoutDisplayWritesNothing(t *testing.T) {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		t.Skip("a window needs no DISPLAY on " + runtime.GOOS)
	}
	dir := t.TempDir()
	t.Setenv(config.EnvConfigDir, dir)
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	err := runBrowser(context.Background(), []string{"--port", "47999"})
	if err == nil || !strings.Contains(err.Error(), "--headless") {
		t.Fatalf("err %v, want one naming --headless", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("the config dir holds %d entries (first %q), want none", len(entries), entries[0].Name())
	}
}
