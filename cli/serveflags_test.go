package cli

import (
	"flag"
	"slices"
	"strings"
	"testing"
)

// serveFlags keeps every flag `tether serve` ran with but the port, one
// entry per value of a repeatable flag, so `tether token rotate` restarts
// the daemon the same way (it dropped --enable-tools).
func TestServeFlags(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.Int("port", 0, "")
	var allow stringList
	fs.Var(&allow, "allow-extension", "")
	fs.Bool("auto-approve-profiles", false, "")
	fs.String("enable-tools", "", "")
	fs.String("unattended", "deny", "")
	if err := fs.Parse([]string{"--port", "5000", "--allow-extension", "a", "--allow-extension=b", "--enable-tools=browser_evaluate", "--auto-approve-profiles"}); err != nil {
		t.Fatal(err)
	}
	got := serveFlags(fs)
	want := []string{"--allow-extension=a", "--allow-extension=b", "--auto-approve-profiles=true", "--enable-tools=browser_evaluate"}
	if !slices.Equal(got, want) {
		t.Fatalf("serveFlags = %q, want %q", got, want)
	}
}

// --listen takes a loopback address only; another interface is refused
// with a pointer to the reverse proxy setup (docs/remote.md).
func TestListenPort(t *testing.T) {
	for _, tc := range []struct {
		addr, err string
		port      int
	}{
		{"127.0.0.1:8765", "", 8765},
		{"localhost:0", "", 0},
		{"0.0.0.0:8765", "docs/remote.md", 0},
		{":8765", "docs/remote.md", 0},
		{"192.0.2.1:8765", "docs/remote.md", 0},
		{"[::]:8765", "docs/remote.md", 0},
		{"[::ffff:0.0.0.0]:8765", "docs/remote.md", 0},
		{"0:8765", "docs/remote.md", 0},
		{"127.1:8765", "docs/remote.md", 0},
		{"localhost.:8765", "docs/remote.md", 0},
		{"localhost.example.org:8765", "docs/remote.md", 0},
		{"LOCALHOST:8765", "", 8765},
		{"127.0.0.1:-1", "port must be a number", 0},
		{"127.0.0.1:65536", "port must be a number", 0},
		{"127.0.0.1", "give 127.0.0.1:PORT", 0},
		{"127.0.0.1:x", "port must be a number", 0},
	} {
		port, err := listenPort(tc.addr)
		if tc.err == "" && (err != nil || port != tc.port) {
			t.Errorf("%s: %d %v, want %d", tc.addr, port, err, tc.port)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want an error with %q", tc.addr, err, tc.err)
		}
	}
}
