package launcher

import (
	"os"
	"runtime"
	"testing"
)

// TestArgsNoSandboxOnce: as root on Linux, Chromium needs --no-sandbox;
// Args adds it once, whether or not the caller passed it too.
func TestArgsNoSandboxOnce(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("--no-sandbox is added only as root on Linux")
	}
	for _, extra := range [][]string{nil, {"--no-sandbox"}} {
		n := 0
		for _, a := range Args(Options{UserDataDir: "/tmp/p", ExtensionDir: "/tmp/e", ExtraArgs: extra}) {
			if a == "--no-sandbox" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("extra args %q: --no-sandbox %d times, want once", extra, n)
		}
	}
}
