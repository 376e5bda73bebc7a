package mcp

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/mcpclient"
)

func encoded(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	var err error
	if format == "jpeg" {
		err = jpeg.Encode(&buf, img, nil)
	} else {
		err = png.Encode(&buf, img)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A screenshot saved to a file reports its real size, JPEG included (it
// said 0×0), and lands in the screenshot dir.
func TestScreenshotToFileReportsSize(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []struct{ format, mime string }{{"png", "image/png"}, {"jpeg", "image/jpeg"}} {
		fb := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodScreenshot: protocol.ScreenshotResult{
			Tab: 1, Mime: f.mime, DataBase64: base64.StdEncoding.EncodeToString(encoded(t, f.format, 321, 123)), Width: 321, Height: 123,
		}}}
		c, err := client.NewInProcessClient(NewServer(fb, Config{Version: "test", ScreenshotDir: dir}))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := mcpclient.Initialize(t.Context(), c, "test"); err != nil {
			t.Fatal(err)
		}
		text, isErr := callTool(t, c, "browser_take_screenshot", map[string]any{"format": f.format, "to_file": true})
		c.Close()
		if isErr || !strings.Contains(text, "321×123 "+f.mime+" saved to "+dir) {
			t.Errorf("%s: (isError=%v) %q; want 321×123 saved under %s", f.format, isErr, text, dir)
		}
	}
}

func TestCheckImageJPEG(t *testing.T) {
	w, h, err := checkImage(encoded(t, "jpeg", 17, 9), "image/jpeg")
	if err != nil || w != 17 || h != 9 {
		t.Fatalf("got %d×%d, %v; want 17×9", w, h, err)
	}
	if _, _, err := checkImage([]byte{0xFF, 0xD8, 0xFF, 0xD9}, "image/jpeg"); err == nil || !strings.Contains(err.Error(), "not a valid JPEG") {
		t.Fatalf("a JPEG without a frame header: %v; want not a valid JPEG", err)
	}
}

// PruneScreenshots removes Tether's screenshots older than the age limit,
// then the oldest beyond the count, and never another file.
func TestPruneScreenshots(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	write := func(name string, age time.Duration) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	write("screenshot-old.png", 25*time.Hour)
	write("screenshot-old.jpg", 48*time.Hour)
	write("notes.txt", 100*time.Hour)          // not Tether's
	write("screenshot-old.gif", 100*time.Hour) // not Tether's
	if err := os.Mkdir(filepath.Join(dir, "screenshot-dir.png"), 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		write(fmt.Sprintf("screenshot-%d.png", i), time.Duration(i)*time.Minute) // 0 is the newest
	}
	if n := PruneScreenshots(dir, now, 24*time.Hour, 3); n != 4 {
		t.Errorf("removed %d; want 4 (two too old, two beyond the newest 3)", n)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	sort.Strings(left)
	want := []string{"notes.txt", "screenshot-0.png", "screenshot-1.png", "screenshot-2.png", "screenshot-dir.png", "screenshot-old.gif"}
	if strings.Join(left, " ") != strings.Join(want, " ") {
		t.Errorf("left %v; want %v", left, want)
	}
	if n := PruneScreenshots(filepath.Join(dir, "missing"), now, time.Hour, 1); n != 0 {
		t.Errorf("a missing dir: removed %d", n)
	}
}

// Two captures saved in the same millisecond get two files.
func TestSaveScreenshotNeverOverwrites(t *testing.T) {
	h := &handlers{cfg: Config{ScreenshotDir: t.TempDir()}}
	seen := map[string]bool{}
	for range 5 {
		p, err := h.saveScreenshot([]byte("x"), "image/png")
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("%s written twice", p)
		}
		seen[p] = true
	}
}

// Every screenshot states its viewport, device pixel ratio and image-to-CSS
// scale, and how image pixels become the x/y that pointer tools take.
func TestScreenshotStatesGeometry(t *testing.T) {
	for _, tc := range []struct {
		g    protocol.ScreenshotGeometry
		want string
	}{
		{protocol.ScreenshotGeometry{ViewportWidth: 800, ViewportHeight: 600, DPR: 2, Scale: 1.5}, "Viewport 800×600 CSS px, device pixel ratio 2, scale 1.5 image px per CSS px (viewport x/y = image px ÷ scale)."},
		{protocol.ScreenshotGeometry{ViewportWidth: 800, ViewportHeight: 600, DPR: 1, Scale: 1, FullPage: true}, "(whole page: x/y = image px ÷ scale, with full_page: true)."},
		{protocol.ScreenshotGeometry{ViewportWidth: 800, ViewportHeight: 600, DPR: 1, Scale: 1, OriginX: 10, OriginY: 20}, "viewport x = 10 + image x ÷ scale, y = 20 + image y ÷ scale"},
	} {
		g := tc.g
		fb := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodScreenshot: protocol.ScreenshotResult{
			Tab: 1, Mime: "image/png", DataBase64: base64.StdEncoding.EncodeToString(encoded(t, "png", 30, 20)), Width: 30, Height: 20, Geometry: &g,
		}}}
		text, isErr := callTool(t, newClient(t, fb), "browser_take_screenshot", map[string]any{})
		if isErr || !strings.Contains(text, tc.want) {
			t.Errorf("(isError=%v) %q; want %q", isErr, text, tc.want)
		}
	}
}
