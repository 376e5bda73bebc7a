package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// version is the release version; the Makefile may override it with
// -ldflags "-X main.version=…".
var version = "0.1.0"

// versionString is version plus a build id: the first 12 hex digits of the
// SHA-256 of the running executable and of its sibling build (tether and
// tether-desktop, when both lie in one folder; see build_split.go), in
// name order. Two different builds therefore never report the same
// version, so `tether mcp` never keeps talking to a stale daemon after a
// rebuild, while tether and tether-desktop of one build agree.
var versionString = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return version
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	files := []string{exe}
	for _, name := range []string{leanName, desktopName} {
		if sib := filepath.Join(filepath.Dir(exe), name); sib != exe {
			if fi, err := os.Stat(sib); err == nil && fi.Mode().IsRegular() && filepath.Base(exe) != name {
				files = append(files, sib)
			}
		}
	}
	if len(files) > 1 && filepath.Base(exe) != leanName && filepath.Base(exe) != desktopName {
		files = files[:1] // a renamed binary (a test's old build) stands alone
	}
	slices.SortFunc(files, func(a, b string) int { return strings.Compare(filepath.Base(a), filepath.Base(b)) })
	h := sha256.New()
	for _, f := range files {
		if err := hashFile(h, f); err != nil {
			return version
		}
	}
	return version + "+" + hex.EncodeToString(h.Sum(nil))[:12]
})

func hashFile(h io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(h, f)
	return err
}
