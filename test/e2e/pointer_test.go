//go:build !windows

package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Pointer actions (issue 14): double-click, right-click, and clicks, a drag
// and a click into a cross-origin frame at coordinates read off a
// screenshot, each proven by the fixture page's own handlers. The frame is
// served from localhost while the page is on 127.0.0.1: another site, so an
// out-of-process frame.
func TestPointerActions(t *testing.T) {
	parallel(t)
	ctx, c := crossSiteFixture(t, "pointer.html", "pointer-frame.html")
	snap := snapshotWith(t, ctx, c, "Frame button")

	t.Run("two clicks select, a double-click opens", func(t *testing.T) {
		file := ref(t, snap, "option", "report.pdf")
		for i := range 2 {
			out := mustCall(t, ctx, c, "browser_click", map[string]any{"ref": file})
			// The second click changes nothing the first did not.
			changed := strings.Contains(out, "file: selected report.pdf") || i == 1 && strings.Contains(out, "the page has not changed")
			if !changed || strings.Contains(out, "opened") {
				t.Fatalf("single click %d:\n%s", i+1, out)
			}
		}
		out := mustCall(t, ctx, c, "browser_click", map[string]any{"ref": file, "double": true})
		if !strings.HasPrefix(out, "Double-clicked "+file) {
			t.Errorf("summary: %.80s", out)
		}
		// The two single clicks before logged mousedown1 mouseup1 click1 twice.
		want := "file: opened report.pdf after mousedown1 mouseup1 click1 mousedown1 mouseup1 click1 mousedown1 mouseup1 click1 mousedown2 mouseup2 click2 dblclick2"
		if !strings.Contains(out, want) {
			t.Fatalf("the double-click:\n%s\nwant %q", out, want)
		}
	})

	t.Run("right-click opens the custom menu, its item runs", func(t *testing.T) {
		out := mustCall(t, ctx, c, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Invoice 42"), "button": "right"})
		if !strings.Contains(out, "invoice: menu opened by button 2") {
			t.Fatalf("the right-click:\n%s", out)
		}
		out = mustCall(t, ctx, c, "browser_click", map[string]any{"ref": ref(t, out, "menuitem", "Delete invoice")})
		if !strings.Contains(out, "invoice: deleted invoice 42") {
			t.Fatalf("the menu item:\n%s", out)
		}
	})

	// The cross-origin frame is its own renderer: it may paint after the
	// page does (on a loaded machine, after the first screenshot).
	frameBlue := func(r, g, b uint8) bool { return r < 10 && g > 160 && g < 190 && b > 225 }
	shot := screenshot(t, ctx, c)
	for deadline := time.Now().Add(10 * time.Second); !shot.has(frameBlue) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		shot = screenshot(t, ctx, c)
	}

	t.Run("a seat chosen at coordinates from the screenshot", func(t *testing.T) {
		x, y := shot.center(t, "red seat", func(r, g, b uint8) bool { return r > 200 && g < 40 && b < 40 })
		out := mustCall(t, ctx, c, "browser_click", map[string]any{"x": x, "y": y})
		if !strings.Contains(out, "seat: chosen B4") {
			t.Fatalf("clicking (%g, %g):\n%s", x, y, out)
		}
	})

	t.Run("a signature drawn by a drag between coordinates", func(t *testing.T) {
		box := shot.box(t, "signature pad", func(r, g, b uint8) bool { return r > 245 && g > 230 && g < 255 && b > 140 && b < 180 })
		y := (box[1] + box[3]) / 2
		out := mustCall(t, ctx, c, "browser_drag", map[string]any{"x": box[0] + 20, "y": y, "to_x": box[2] - 20, "to_y": y})
		m := regexp.MustCompile(`signature: (\d+) points from (\d+),(\d+) to (\d+),(\d+)`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("the drag:\n%s", out)
		}
		points, _ := strconv.Atoi(m[1])
		x0, _ := strconv.Atoi(m[2])
		x1, _ := strconv.Atoi(m[4])
		if points < 8 || x0 > 30 || x1 < 270 {
			t.Fatalf("the stroke went from x %d to %d in %d points; want about 20 to 280 in 8 or more", x0, x1, points)
		}
	})

	t.Run("a click at coordinates lands in the cross-origin frame", func(t *testing.T) {
		x, y := shot.center(t, "frame", frameBlue)
		out := mustCall(t, ctx, c, "browser_click", map[string]any{"x": x, "y": y})
		if !regexp.MustCompile(`frame: button clicked at 1[45]\d,[56]\d`).MatchString(out) {
			t.Fatalf("clicking (%g, %g):\n%s", x, y, out)
		}
	})

	// Chrome renders nothing in a background tab, but hit testing still works:
	// a click at coordinates lands without bringing the tab forward, and only
	// the screenshot (which needs the tab visible) asks to.
	t.Run("in a background tab: the seat is clicked in place, the screenshot asks first", func(t *testing.T) {
		tab := tabNumber(t, mustCall(t, ctx, c, "browser_tabs", nil), "Pointer bench")
		if out := mustCall(t, ctx, c, "browser_reload", map[string]any{"tab": tab}); !strings.Contains(out, "seat: none") {
			t.Fatalf("the reload did not reset the page:\n%s", out)
		}
		shot := screenshot(t, ctx, c) // the layout changed with the page's texts
		mustCall(t, ctx, c, "browser_tabs", map[string]any{"action": "new", "url": "about:blank"})
		front := tabNumber(t, mustCall(t, ctx, c, "browser_tabs", nil), "about:blank")
		mustCall(t, ctx, c, "browser_tabs", map[string]any{"action": "select", "tab": front})

		x, y := shot.center(t, "red seat", func(r, g, b uint8) bool { return r > 200 && g < 40 && b < 40 })
		out := mustCall(t, ctx, c, "browser_click", map[string]any{"tab": tab, "x": x, "y": y})
		if !strings.Contains(out, "seat: chosen B4") || !strings.Contains(out, "Visibility: hidden") {
			t.Fatalf("clicking (%g, %g) in the background tab:\n%s", x, y, out)
		}
		out, isErr := call(t, ctx, c, "browser_take_screenshot", map[string]any{"tab": tab})
		if !isErr || !strings.Contains(out, "bring_to_front: true") {
			t.Fatalf("a screenshot of the background tab without bring_to_front: error=%v\n%s", isErr, out)
		}
		screenshotOf(t, ctx, c, map[string]any{"tab": tab, "bring_to_front": true})
	})
}

// TestPointerActionsFullPage: a point of a full-page screenshot, far below
// the fold, is clicked with full_page (Tether scrolls there first).
func TestPointerActionsFullPage(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	StartBrowser(t, d)
	ctx := Context(t, 2*time.Minute)
	c := stdioClient(t, ctx, d)
	mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": fixtures.URL + "/pointer.html"})
	shot := screenshotOf(t, ctx, c, map[string]any{"full_page": true})
	x, y := shot.center(t, "far target", func(r, g, b uint8) bool { return r > 180 && r < 210 && g < 20 && b > 180 && b < 210 })
	if y < 1000 {
		t.Fatalf("the far target is at page y %g; the fixture puts it below the fold", y)
	}
	out := mustCall(t, ctx, c, "browser_click", map[string]any{"x": x, "y": y, "full_page": true})
	m := regexp.MustCompile(`far: clicked at page y (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("clicking page point (%g, %g):\n%s", x, y, out)
	}
	if got, _ := strconv.ParseFloat(m[1], 64); got < y-3 || got > y+3 {
		t.Fatalf("clicked at page y %g; want %g", got, y)
	}
}

// shotImage is a screenshot and its image-to-CSS mapping, read from the
// result text as an agent would.
type shotImage struct {
	img   image.Image
	scale float64
}

func screenshot(t *testing.T, ctx context.Context, c *client.Client) shotImage {
	t.Helper()
	return screenshotOf(t, ctx, c, map[string]any{})
}

// screenshotOf takes a screenshot with args (full_page: the whole page),
// bringing the tab to the front when args do not say (the agent's tabs
// open in the background), and reads its scale from the result text.
func screenshotOf(t *testing.T, ctx context.Context, c *client.Client, args map[string]any) shotImage {
	t.Helper()
	if _, ok := args["bring_to_front"]; !ok {
		args["bring_to_front"] = true
	}
	fullPage := args["full_page"] == true
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "browser_take_screenshot", Arguments: args}})
	if err != nil || res.IsError {
		t.Fatalf("screenshot: %v %+v", err, res)
	}
	var text string
	var data []byte
	for _, content := range res.Content {
		switch v := content.(type) {
		case mcp.TextContent:
			text += v.Text
		case mcp.ImageContent:
			data, _ = base64.StdEncoding.DecodeString(v.Data)
		}
	}
	how := `\(viewport x/y = image px ÷ scale\)`
	if fullPage {
		how = `\(whole page: x/y = image px ÷ scale, with full_page: true\)`
	}
	m := regexp.MustCompile(`Viewport (\d+)×(\d+) CSS px, device pixel ratio ([\d.]+), scale ([\d.]+) image px per CSS px ` + how).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the screenshot does not state its viewport, ratio and scale: %q", text)
	}
	scale, _ := strconv.ParseFloat(m[4], 64)
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot image: %v", err)
	}
	if w, _ := strconv.Atoi(m[1]); scale <= 0 || img.Bounds().Dx() != int(float64(w)*scale+0.5) {
		t.Fatalf("image %d px wide for a viewport %s CSS px wide at scale %g", img.Bounds().Dx(), m[1], scale)
	}
	return shotImage{img, scale}
}

// box is the bounding box, in viewport CSS pixels, of the pixels that
// match: left, top, right, bottom.
func (s shotImage) box(t *testing.T, what string, match func(r, g, b uint8) bool) [4]float64 {
	t.Helper()
	box, ok := s.bounds(match)
	if !ok {
		t.Fatalf("no %s in the screenshot", what)
	}
	return box
}

// has reports whether any pixel of the screenshot matches.
func (s shotImage) has(match func(r, g, b uint8) bool) bool {
	_, ok := s.bounds(match)
	return ok
}

// bounds is box without the failure: false when no pixel matches.
func (s shotImage) bounds(match func(r, g, b uint8) bool) ([4]float64, bool) {
	b := s.img.Bounds()
	minX, minY, maxX, maxY := b.Max.X, b.Max.Y, -1, -1
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := s.img.At(x, y).RGBA()
			if match(uint8(r>>8), uint8(g>>8), uint8(bl>>8)) {
				minX, minY, maxX, maxY = min(minX, x), min(minY, y), max(maxX, x), max(maxY, y)
			}
		}
	}
	if maxX < 0 {
		return [4]float64{}, false
	}
	return [4]float64{float64(minX) / s.scale, float64(minY) / s.scale, float64(maxX+1) / s.scale, float64(maxY+1) / s.scale}, true
}

// center is the middle of box, in viewport CSS pixels.
func (s shotImage) center(t *testing.T, what string, match func(r, g, b uint8) bool) (float64, float64) {
	t.Helper()
	b := s.box(t, what, match)
	return (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
}
