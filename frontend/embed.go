// Package frontend embeds the window's built web assets (frontend/dist,
// produced by `npm run build` in this folder; `make` does it), which the
// Wails window serves.
package frontend

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist returns the built frontend, rooted at the folder that holds
// index.html.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a literal embedded path; cannot fail
	}
	return sub
}
