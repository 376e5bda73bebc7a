package mcp

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/client"

	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/mcpclient"
)

func TestUploadRefusalPerOS(t *testing.T) {
	cfg, shots := "/home/u/.config/tether", "/home/u/.config/tether/screenshots"
	for _, tc := range []struct {
		goos, given, real string
		refused           bool
		says              string
	}{
		{"linux", "/proc/self/environ", "/proc/4242/environ", true, "under /proc"},
		{"linux", "/sys/kernel/notes", "/sys/kernel/notes", true, "under /sys"},
		{"linux", "/dev/zero", "/dev/zero", true, "under /dev"},
		{"linux", "/tmp/link", "/home/u/.config/tether/token", true, "Tether's own config dir"},
		{"linux", "/home/u/.config/tether/profiles.json", "/home/u/.config/tether/profiles.json", true, "config dir"},
		{"linux", "/home/u/.config/tether", "/home/u/.config/tether", true, "config dir"},
		{"linux", "/home/u/.config/tether/screenshots/s.png", "/home/u/.config/tether/screenshots/s.png", false, ""},
		{"linux", "/home/u/.config/tether-other/x", "/home/u/.config/tether-other/x", false, ""},
		{"linux", "/home/u/cv.pdf", "/home/u/cv.pdf", false, ""},
		{"linux", "/procfs.txt", "/procfs.txt", false, ""},
		{"darwin", "/dev/disk0", "/dev/disk0", true, "under /dev"},
		{"darwin", "/HOME/U/.CONFIG/TETHER/token", "/HOME/U/.CONFIG/TETHER/token", true, "config dir"},
		{"darwin", "/proc/x", "/proc/x", false, ""}, // no /proc on macOS: an ordinary path
		{"windows", `\\.\PhysicalDrive0`, `\\.\PhysicalDrive0`, true, "device path"},
		{"windows", `\\?\C:\Windows\win.ini`, `\\?\C:\Windows\win.ini`, true, "device path"},
		{"windows", `//./COM1`, `//./COM1`, true, "device path"},
		{"windows", `C:\Users\u\NUL.txt`, `C:\Users\u\NUL.txt`, true, "device path"},
		{"windows", `C:\Users\u\com3`, `C:\Users\u\com3`, true, "device path"},
		{"windows", `C:\Users\u\console.txt`, `C:\Users\u\console.txt`, false, ""},
	} {
		cd, sd := cfg, shots
		if tc.goos == "windows" {
			cd, sd = `C:\Users\u\AppData\Roaming\tether`, `C:\Users\u\AppData\Roaming\tether\screenshots`
		}
		msg := uploadRefusal(tc.goos, tc.given, tc.real, cd, sd)
		if (msg != "") != tc.refused || !strings.Contains(msg, tc.says) {
			t.Errorf("%s %s → %s: %q; want refused=%v saying %q", tc.goos, tc.given, tc.real, msg, tc.refused, tc.says)
		}
	}
}

// uploadSpy is a Guard recording the arguments each call reaches it with.
type uploadSpy struct {
	mu   sync.Mutex
	args []map[string]any
}

func (g *uploadSpy) Check(_ context.Context, call ToolCall) (Verdict, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.args = append(g.args, call.Args)
	return Verdict{Allow: true}, nil
}

type uploadRig struct {
	c       *client.Client
	browser *fakeBrowser
	guard   *uploadSpy
	cfgDir  string
}

func newUploadRig(t *testing.T, maxBytes int64) *uploadRig {
	t.Helper()
	cfgDir := filepath.Join(t.TempDir(), "tether")
	if err := os.MkdirAll(filepath.Join(cfgDir, "screenshots"), 0o700); err != nil {
		t.Fatal(err)
	}
	r := &uploadRig{browser: &fakeBrowser{results: map[protocol.Method]any{}}, guard: &uploadSpy{}, cfgDir: cfgDir}
	c, err := client.NewInProcessClient(NewServer(r.browser, Config{
		Version: "test", Fence: "FENCE", Guard: r.guard, MaxUploadBytes: maxBytes,
		ConfigDir: cfgDir, ScreenshotDir: filepath.Join(cfgDir, "screenshots"),
	}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := mcpclient.Initialize(ctx, c, "test"); err != nil {
		t.Fatal(err)
	}
	r.c = c
	return r
}

func (r *uploadRig) upload(t *testing.T, paths ...string) (string, bool) {
	t.Helper()
	return callTool(t, r.c, "browser_file_upload", map[string]any{"ref": "e1", "paths": paths})
}

func TestUploadRefusals(t *testing.T) {
	r := newUploadRig(t, 1<<20)
	tokenFile := filepath.Join(r.cfgDir, "token")
	if err := os.WriteFile(tokenFile, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	link := filepath.Join(outside, "innocent.txt")
	if err := os.Symlink(tokenFile, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	big := filepath.Join(outside, "big.bin")
	if err := os.WriteFile(big, make([]byte, 1<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, says string
	}{
		{"config dir file", tokenFile, "inside Tether's own config dir"},
		{"symlink into the config dir", link, "resolves to " + realDir(tokenFile)},
		{"the config dir itself", r.cfgDir, "config dir"},
		{"a folder", outside, "not a regular file but a folder"},
		{"relative", "token", "not absolute"},
		{"missing", filepath.Join(outside, "nope.txt"), "cannot read"},
		{"over the limit, counted while reading", big, "more than 1 MiB"},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases,
			struct{ name, path, says string }{"/proc", "/proc/self/environ", "under /proc"},
			struct{ name, path, says string }{"/sys", "/sys/kernel/mm", "under /sys"},
			struct{ name, path, says string }{"/dev", "/dev/null", "under /dev"},
			struct{ name, path, says string }{"/dev via /proc link", "/proc/self/fd/0", "under /"},
		)
	}
	if runtime.GOOS == "darwin" {
		cases = append(cases, struct{ name, path, says string }{"/dev", "/dev/null", "under /dev"})
	}
	for _, tc := range cases {
		text, isErr := r.upload(t, tc.path)
		if !isErr || !strings.Contains(text, tc.says) {
			t.Errorf("%s (%s): %q; want an error saying %q", tc.name, tc.path, text, tc.says)
		}
	}
	if n := len(r.browser.calls); n != 0 {
		t.Fatalf("%d refused uploads reached the browser", n)
	}
}

// A screenshot Tether saved can be uploaded, and the guard (the approval
// prompt, the timeline) sees the resolved path, not the link.
func TestUploadResolvedPathAndScreenshots(t *testing.T) {
	r := newUploadRig(t, 1<<20)
	shot := filepath.Join(r.cfgDir, "screenshots", "screenshot-20260101-120000.000.png")
	if err := os.WriteFile(shot, []byte("png"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link.png")
	if err := os.Symlink(shot, link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	text, isErr := r.upload(t, link)
	if isErr {
		t.Fatalf("uploading a screenshot Tether saved: %q", text)
	}
	real := realDir(shot)
	r.guard.mu.Lock()
	got := r.guard.args[len(r.guard.args)-1]["paths"]
	r.guard.mu.Unlock()
	if ps, _ := got.([]any); len(ps) != 1 || ps[0] != real {
		t.Fatalf("the guard saw paths %v, want [%s]", got, real)
	}
	if len(r.browser.calls) != 1 || !strings.Contains(r.browser.calls[0].params, `"name":"screenshot-20260101-120000.000.png"`) || !strings.Contains(r.browser.calls[0].params, `"cG5n"`) {
		t.Fatalf("browser got %+v", r.browser.calls)
	}
}

func TestReadBoundedCountsWhileReading(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("12345"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, msg := readBounded(p, 5); msg != "" || string(b) != "12345" {
		t.Fatalf("at the limit: %q %q", b, msg)
	}
	if _, msg := readBounded(p, 4); msg != errTooBig {
		t.Fatalf("over the limit: %q", msg)
	}
}
