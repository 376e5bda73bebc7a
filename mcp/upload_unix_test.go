//go:build unix

package mcp

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A named pipe would block a read forever: it is refused before opening.
func TestUploadRefusesAPipe(t *testing.T) {
	r := newUploadRig(t, 1<<20)
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if text, isErr := r.upload(t, fifo); !isErr || !strings.Contains(text, "not a regular file but a named pipe") {
		t.Fatalf("%q", text)
	}
}
