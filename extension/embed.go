// Package extension embeds the built Manifest V3 extension (extension/dist,
// produced by `npm run build` in this folder; `make` does it) so that
// `tether browser` and the window can write it out.
package extension

import (
	"embed"
	"io/fs"
)

//go:embed all:dist
var dist embed.FS

// Dist returns the built extension's files, rooted at the folder that holds
// manifest.json.
func Dist() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // "dist" is a literal embedded path; cannot fail
	}
	return sub
}
