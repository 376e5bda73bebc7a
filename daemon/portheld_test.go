package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tether-browser/tether/config"
)

// TestRunNamesTheProgramOnItsPort: `tether serve` on a port another
// program holds fails saying so, naming that program where the OS says
// (here this test process) and what to do, instead of only "address
// already in use".
func TestRunNamesTheProgramOnItsPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	p := config.Paths{Dir: filepath.Join(t.TempDir(), "cfg")}
	err = Run(context.Background(), Config{Paths: p, Port: port, Version: "test", Logger: slog.New(slog.DiscardHandler)})
	if err == nil {
		t.Fatal("Run on a taken port succeeded")
	}
	wants := []string{fmt.Sprintf("listen on 127.0.0.1:%d: another program", port), "holds the port", "Quit it, or run Tether on another port (--port N, or TETHER_PORT=N)", "Write the extension"}
	if runtime.GOOS == "linux" {
		comm, rerr := os.ReadFile("/proc/self/comm")
		if rerr != nil {
			t.Fatal(rerr)
		}
		wants = append(wants, fmt.Sprintf("(pid %d, %s)", os.Getpid(), strings.TrimSpace(string(comm))))
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run's error lacks %q: %v", want, err)
		}
	}
}
