package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"image/jpeg"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/protocol"
)

// ScreenshotArgs are browser_take_screenshot's arguments.
type ScreenshotArgs struct {
	Target
	FullPage     bool   `json:"full_page,omitempty" jsonschema:"Whole page"`
	Ref          string `json:"ref,omitempty" jsonschema:"One element"`
	Format       string `json:"format,omitempty" jsonschema:"png or jpeg"`
	BringToFront bool   `json:"bring_to_front,omitempty" jsonschema:"May bring a background tab forward"`
	ToFile       bool   `json:"to_file,omitempty" jsonschema:"As a file path"`
}

// maxImageBytes caps an image returned inline (base64 grows it by a third).
const maxImageBytes = 1 << 20

func (h *handlers) screenshotTool() Tool {
	return Tool{
		Def: mcpgo.NewTool("browser_take_screenshot",
			mcpgo.WithDescription("Capture the visible tab, whole page or an element (untrusted)."),
			mcpgo.WithInputSchema[ScreenshotArgs](),
			noEmptyRequired(),
			readOnly(),
		),
		Class:   policy.Read,
		handler: mcpgo.NewTypedToolHandler(h.screenshot),
	}
}

func (h *handlers) screenshot(ctx context.Context, _ mcpgo.CallToolRequest, args ScreenshotArgs) (*mcpgo.CallToolResult, error) {
	switch args.Format {
	case "":
		args.Format = "png"
	case "png", "jpeg":
	default:
		return mcpgo.NewToolResultError(`format is "png" or "jpeg"`), nil
	}
	var res protocol.ScreenshotResult
	params := &protocol.ScreenshotParams{TabParams: protocol.TabParams{Tab: args.Tab}, FullPage: args.FullPage, Ref: args.Ref,
		Format: args.Format, BringToFront: args.BringToFront, MaxBytes: maxImageBytes}
	timeout := h.cfg.ActionTimeout
	if args.FullPage {
		timeout *= 2 // captures are rate-limited to about two a second
	}
	if err := h.browser.Call(ctx, args.Profile, protocol.MethodScreenshot, params, &res, timeout); err != nil {
		return browserError("browser_take_screenshot", err), nil
	}
	img, err := base64.StdEncoding.DecodeString(res.DataBase64)
	if err != nil {
		return mcpgo.NewToolResultError("browser_take_screenshot failed: the extension sent an image that is not base64"), nil
	}
	w, hgt, err := checkImage(img, res.Mime)
	if err != nil {
		return mcpgo.NewToolResultError("browser_take_screenshot failed: " + err.Error()), nil
	}
	if args.ToFile || h.cfg.NoImages || len(img) > maxImageBytes {
		path, err := h.saveScreenshot(img, res.Mime)
		if err != nil {
			return mcpgo.NewToolResultError("browser_take_screenshot failed: " + err.Error()), nil
		}
		return mcpgo.NewToolResultText(fmt.Sprintf("Tab %d: %d×%d %s saved to %s (%d bytes).%s", res.Tab, w, hgt, res.Mime, path, len(img), geometryText(res.Geometry))), nil
	}
	return &mcpgo.CallToolResult{Content: []mcpgo.Content{
		mcpgo.NewTextContent(fmt.Sprintf("Tab %d: %d×%d %s.%s The image shows untrusted page content.", res.Tab, w, hgt, res.Mime, geometryText(res.Geometry))),
		mcpgo.NewImageContent(res.DataBase64, res.Mime),
	}}, nil
}

// geometryText states, briefly, how the image maps to the CSS pixels that
// browser_click, browser_hover and browser_drag take as x/y.
func geometryText(g *protocol.ScreenshotGeometry) string {
	if g == nil || g.Scale <= 0 {
		return ""
	}
	text := fmt.Sprintf(" Viewport %g×%g CSS px, device pixel ratio %g, scale %.4g image px per CSS px", g.ViewportWidth, g.ViewportHeight, g.DPR, g.Scale)
	switch {
	case g.FullPage:
		text += " (whole page: x/y = image px ÷ scale, with full_page: true)."
	case g.OriginX != 0 || g.OriginY != 0:
		text += fmt.Sprintf(" (element: viewport x = %g + image x ÷ scale, y = %g + image y ÷ scale).", g.OriginX, g.OriginY)
	default:
		text += " (viewport x/y = image px ÷ scale)."
	}
	return text
}

var pngSignature = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}

// checkImage verifies the PNG signature and IHDR chunk (PNG spec, sections
// 5.2 and 11.2.2), or the JPEG SOI marker and frame header, and returns the
// image's width and height in pixels.
func checkImage(b []byte, mimeType string) (int, int, error) {
	switch mimeType {
	case "image/png":
		if len(b) < 33 || !bytes.Equal(b[:8], pngSignature) || string(b[12:16]) != "IHDR" || binary.BigEndian.Uint32(b[8:12]) != 13 {
			return 0, 0, fmt.Errorf("the capture is not a valid PNG")
		}
		w, h := binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24])
		if w == 0 || h == 0 || w > 1<<15 || h > 1<<16 {
			return 0, 0, fmt.Errorf("the PNG has an implausible size %d×%d", w, h)
		}
		return int(w), int(h), nil
	case "image/jpeg":
		if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
			return 0, 0, fmt.Errorf("the capture is not a valid JPEG")
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(b)) // reads up to the SOF marker, which holds the size
		if err != nil {
			return 0, 0, fmt.Errorf("the capture is not a valid JPEG: %v", err)
		}
		if cfg.Width == 0 || cfg.Height == 0 || cfg.Width > 1<<15 || cfg.Height > 1<<16 {
			return 0, 0, fmt.Errorf("the JPEG has an implausible size %d×%d", cfg.Width, cfg.Height)
		}
		return cfg.Width, cfg.Height, nil
	}
	return 0, 0, fmt.Errorf("unexpected image type %q", mimeType)
}

// Screenshots written as files (screenshots/ in the config dir) are pruned
// each time one is written: files older than ScreenshotMaxAge go, and of
// the rest only the newest ScreenshotMaxFiles stay. A screenshot thus
// stays available to the AI (to read, or to upload with
// browser_file_upload) for a day unless 100 newer ones were taken since.
// Only Tether's own files (screenshot-*.png, screenshot-*.jpg) are touched.
const (
	ScreenshotMaxAge   = 24 * time.Hour
	ScreenshotMaxFiles = 100
)

// saveScreenshot writes img to a new file in the screenshot dir (mode
// 0600), prunes the dir (see ScreenshotMaxAge) and returns the file's path.
func (h *handlers) saveScreenshot(img []byte, mimeType string) (string, error) {
	dir := h.cfg.ScreenshotDir
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	ext := ".png"
	if mimeType == "image/jpeg" {
		ext = ".jpg"
	}
	// A new file each time, even for two captures in the same millisecond.
	stem := filepath.Join(dir, "screenshot-"+time.Now().UTC().Format("20060102-150405.000"))
	var path string
	var f *os.File
	for i := 1; ; i++ {
		path = stem + ext
		if i > 1 {
			path = fmt.Sprintf("%s-%d%s", stem, i, ext)
		}
		var err error
		if f, err = os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
			break
		} else if !os.IsExist(err) || i >= 100 {
			return "", err
		}
	}
	_, err := f.Write(img)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return "", err
	}
	PruneScreenshots(dir, time.Now(), ScreenshotMaxAge, ScreenshotMaxFiles)
	return path, nil
}

// PruneScreenshots removes from dir Tether's screenshot files
// (screenshot-*.png and screenshot-*.jpg, regular files only) whose
// modification time is more than maxAge before now, then the oldest of the
// rest beyond the newest maxFiles. Other files are left alone. Errors
// (a file already gone, a dir that cannot be read) are ignored: pruning is
// best effort and runs again at the next save. It returns how many files
// it removed.
func PruneScreenshots(dir string, now time.Time, maxAge time.Duration, maxFiles int) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	type shot struct {
		path string
		mod  time.Time
	}
	var keep []shot
	removed := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, "screenshot-") ||
			(!strings.HasSuffix(name, ".png") && !strings.HasSuffix(name, ".jpg")) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		p := filepath.Join(dir, name)
		if now.Sub(info.ModTime()) > maxAge {
			if os.Remove(p) == nil {
				removed++
			}
			continue
		}
		keep = append(keep, shot{p, info.ModTime()})
	}
	if len(keep) <= maxFiles {
		return removed
	}
	sort.Slice(keep, func(i, j int) bool {
		if !keep[i].mod.Equal(keep[j].mod) {
			return keep[i].mod.After(keep[j].mod)
		}
		return keep[i].path > keep[j].path // same second: the name holds milliseconds
	})
	for _, s := range keep[maxFiles:] {
		if os.Remove(s.path) == nil {
			removed++
		}
	}
	return removed
}
