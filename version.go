package main

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
)

// version is the release version; the Makefile may override it with
// -ldflags "-X main.version=…".
var version = "0.1.0"

// versionString is version plus a build id: the first 12 hex digits of the
// SHA-256 of the running executable. Two different builds therefore never
// report the same version, so `tether mcp` never keeps talking to a stale
// daemon after a rebuild.
var versionString = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return version
	}
	f, err := os.Open(exe)
	if err != nil {
		return version
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return version
	}
	return version + "+" + hex.EncodeToString(h.Sum(nil))[:12]
})
