package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// version is the release version; the Makefile may override it with
// -ldflags "-X github.com/tether-browser/tether/cli.version=…".
var version = "0.3.0"

// versionString is version plus a build id: the first 12 hex digits of the
// SHA-256 of the lean executable of this build (tether; see build_split.go):
// the running one, or, from tether-desktop, the tether next to it. Two
// different builds therefore never report the same version, so `tether mcp`
// never keeps talking to a stale daemon after a rebuild; tether and
// tether-desktop of one build agree, and so does a copy of tether elsewhere
// (an AI app configured with another path must not replace the daemon).
var versionString = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return version
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	if filepath.Base(exe) == desktopName {
		if lean := filepath.Join(filepath.Dir(exe), leanName); regularFile(lean) {
			exe = lean
		}
	}
	h := sha256.New()
	if err := hashFile(h, exe); err != nil {
		return version
	}
	return version + "+" + hex.EncodeToString(h.Sum(nil))[:12]
})

func regularFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(h, f)
	return err
}
