// Command genicons draws the tray's state icons (tray/icons/*.png and *.ico)
// with image/png, so that they are reproducible: `go generate ./tray`.
//
// Each state has its own shape as well as its own colour, so that the states
// stay apart for colour-blind users and in monochrome panels:
//
//	disconnected  grey ring, hollow
//	connected     green disc
//	acting        blue disc with a white "play" triangle
//	approval      amber disc with a white "!"
//	paused        red disc with two white pause bars
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
)

// size is the icon's side in pixels; panels scale it down.
const size = 64

// samples per pixel side, for anti-aliasing.
const ss = 4

// shape reports whether the point (x, y), in units where the icon spans
// [-1, 1] on both axes, is painted, and with which colour.
type shape func(x, y float64) (color.NRGBA, bool)

var (
	white = color.NRGBA{0xff, 0xff, 0xff, 0xff}
	grey  = color.NRGBA{0x8a, 0x8f, 0x98, 0xff}
	green = color.NRGBA{0x1f, 0xa8, 0x5a, 0xff}
	blue  = color.NRGBA{0x1d, 0x6f, 0xe0, 0xff}
	amber = color.NRGBA{0xf0, 0x9a, 0x0b, 0xff}
	red   = color.NRGBA{0xd8, 0x32, 0x32, 0xff}
)

const radius = 0.9

func disc(c color.NRGBA, inner shape) shape {
	return func(x, y float64) (color.NRGBA, bool) {
		if math.Hypot(x, y) > radius {
			return color.NRGBA{}, false
		}
		if inner != nil {
			if ic, ok := inner(x, y); ok {
				return ic, true
			}
		}
		return c, true
	}
}

func ring(c color.NRGBA, width float64) shape {
	return func(x, y float64) (color.NRGBA, bool) {
		r := math.Hypot(x, y)
		return c, r <= radius && r >= radius-width
	}
}

func rect(x0, y0, x1, y1 float64) shape {
	return func(x, y float64) (color.NRGBA, bool) {
		return white, x >= x0 && x <= x1 && y >= y0 && y <= y1
	}
}

func union(shapes ...shape) shape {
	return func(x, y float64) (color.NRGBA, bool) {
		for _, s := range shapes {
			if c, ok := s(x, y); ok {
				return c, true
			}
		}
		return color.NRGBA{}, false
	}
}

// play is a triangle pointing right, centred a little right of the middle.
func play(x, y float64) (color.NRGBA, bool) {
	const left, right, half = -0.3, 0.45, 0.42
	if x < left || x > right {
		return color.NRGBA{}, false
	}
	h := half * (right - x) / (right - left)
	return white, math.Abs(y) <= h
}

func dot(cx, cy, r float64) shape {
	return func(x, y float64) (color.NRGBA, bool) {
		return white, math.Hypot(x-cx, y-cy) <= r
	}
}

var icons = []struct {
	name  string
	shape shape
}{
	{"disconnected", ring(grey, 0.28)},
	{"connected", disc(green, nil)},
	{"acting", disc(blue, play)},
	{"approval", disc(amber, union(rect(-0.1, -0.55, 0.1, 0.18), dot(0, 0.42, 0.12)))},
	{"paused", disc(red, union(rect(-0.35, -0.42, -0.1, 0.42), rect(0.1, -0.42, 0.35, 0.42)))},
}

// draw renders s with ss×ss supersampling.
func draw(s shape) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			var r, g, b, a float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					x := (float64(px)+(float64(sx)+0.5)/ss)/size*2 - 1
					y := (float64(py)+(float64(sy)+0.5)/ss)/size*2 - 1
					if c, ok := s(x, y); ok {
						r += float64(c.R)
						g += float64(c.G)
						b += float64(c.B)
						a++
					}
				}
			}
			if a == 0 {
				continue
			}
			img.SetNRGBA(px, py, color.NRGBA{
				R: uint8(r / a), G: uint8(g / a), B: uint8(b / a),
				A: uint8(math.Round(255 * a / (ss * ss))),
			})
		}
	}
	return img
}

// ico wraps a PNG in an ICO container (one image, PNG-compressed, which
// Windows reads since Vista): what systray wants on Windows.
func ico(pngData []byte) []byte {
	var buf bytes.Buffer
	le := binary.LittleEndian
	_ = binary.Write(&buf, le, [3]uint16{0, 1, 1}) // reserved, type icon, one image
	dim := byte(size)
	if size >= 256 {
		dim = 0
	}
	buf.Write([]byte{dim, dim, 0, 0})                                   // width, height, palette, reserved
	_ = binary.Write(&buf, le, [2]uint16{1, 32})                        // planes, bits per pixel
	_ = binary.Write(&buf, le, [2]uint32{uint32(len(pngData)), 6 + 16}) // size, offset
	buf.Write(pngData)
	return buf.Bytes()
}

func main() {
	dir := "icons"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	for _, ic := range icons {
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestCompression}
		if err := enc.Encode(&buf, draw(ic.shape)); err != nil {
			fmt.Fprintln(os.Stderr, "genicons:", err)
			os.Exit(1)
		}
		for name, data := range map[string][]byte{ic.name + ".png": buf.Bytes(), ic.name + ".ico": ico(buf.Bytes())} {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "genicons:", err)
				os.Exit(1)
			}
		}
	}
}
