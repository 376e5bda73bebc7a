// Command dist packages a release build into dist/ (`make dist` runs it):
//
//	go run ./build/dist -version 0.3.0 -bin bin/dist -ext extension/dist -out dist deb zip
//
// deb writes tether_<version>_amd64.deb with nfpm: bin/dist's tether and
// tether-desktop in /usr/bin, the desktop entry, hicolor icons, the
// AppStream metainfo, copyright and changelog (build/dist/pkg). Its Depends
// are computed from the binaries with dpkg-shlibdeps (dpkg-dev), never
// written by hand. zip writes tether-extension-<version>.zip for the Chrome
// Web Store: the built extension with the manifest's "key" removed (the
// store signs the extension with its own identity), otherwise byte for byte.
// The Windows installer is not built here: makensis does it from
// build/dist/tether.nsi (see the Makefile).
//
// It fails, naming the cause, when an input is missing, dpkg-shlibdeps
// fails or finds no dependency, or the manifest has no "key" to strip.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	version := flag.String("version", "", "release version, x.y.z")
	bin := flag.String("bin", "bin/dist", "folder with the Linux tether and tether-desktop")
	ext := flag.String("ext", "extension/dist", "the built extension (holds manifest.json)")
	pkg := flag.String("pkg", "build/dist/pkg", "the package's fixed files (desktop entry, icons, metainfo, copyright, changelog)")
	out := flag.String("out", "dist", "output folder")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: dist -version X.Y.Z [flags] deb|zip...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *version == "" || flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fail(err)
	}
	for _, what := range flag.Args() {
		var (
			path string
			err  error
		)
		switch what {
		case "deb":
			path, err = buildDeb(*version, *bin, *pkg, *out)
		case "zip":
			path, err = buildExtensionZip(*version, *ext, *out)
		default:
			err = fmt.Errorf("unknown artefact %q (deb or zip)", what)
		}
		if err != nil {
			fail(err)
		}
		fmt.Println("wrote", path)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "dist:", err)
	os.Exit(1)
}
