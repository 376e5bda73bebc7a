//go:build unix

package mcp

import (
	"os"
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

// A hard link has its own path but is the same file: one to Tether's token,
// outside the config dir or inside screenshots/, is refused, and so is a
// file in screenshots/ that is not a screenshot Tether saved.
func TestUploadRefusesHardLinksToConfigFiles(t *testing.T) {
	r := newUploadRig(t, 1<<20)
	token := filepath.Join(r.cfgDir, "token")
	if err := os.WriteFile(token, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(r.cfgDir), "innocent.txt")
	inShots := filepath.Join(r.cfgDir, "screenshots", "screenshot-20260101-000000.000.png")
	for _, link := range []string{outside, inShots} {
		if err := os.Link(token, link); err != nil {
			t.Skipf("link: %v", err)
		}
		if text, isErr := r.upload(t, link); !isErr || !strings.Contains(text, "same file as token") {
			t.Fatalf("hard link %s to the token: %q", link, text)
		}
	}
	notShot := filepath.Join(r.cfgDir, "screenshots", "notes.txt")
	if err := os.WriteFile(notShot, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if text, isErr := r.upload(t, notShot); !isErr || !strings.Contains(text, "not a screenshot Tether saved") {
		t.Fatalf("a file in screenshots/ that Tether did not save: %q", text)
	}
	shot := filepath.Join(r.cfgDir, "screenshots", "screenshot-20260101-000001.000-2.jpg")
	if err := os.WriteFile(shot, []byte("jpeg"), 0o600); err != nil {
		t.Fatal(err)
	}
	if text, isErr := r.upload(t, shot); isErr {
		t.Fatalf("a screenshot Tether saved is refused: %q", text)
	}
}
