package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
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
		wants = append(wants, fmt.Sprintf("(pid %d, %s)", os.Getpid(), filepath.Base(os.Args[0])))
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Run's error lacks %q: %v", want, err)
		}
	}
}

// TestEnsureNamesTheProgramOnThePort: `tether mcp` starts the daemon when
// none answers; when that daemon exits at once because a web server holds
// its port, the AI app's error says so (and what to do), not only "exited
// at start".
func TestEnsureNamesTheProgramOnThePort(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	t.Setenv(config.EnvPort, strconv.Itoa(port))
	p := config.Paths{Dir: filepath.Join(t.TempDir(), "cfg")}
	if err := p.Ensure(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.LoadOrCreatePairingKey(); err != nil {
		t.Fatal(err)
	}
	// A daemon command that exits at once, as one on a taken port does:
	// this test binary running no test.
	_, err := Ensure(context.Background(), EnsureConfig{Paths: p, Version: "test", Command: []string{os.Args[0], "-test.run=^$"}})
	var op *localclient.OtherProgramError
	if !errors.As(err, &op) || op.Port != port {
		t.Fatalf("Ensure: %v, want the program on port %d named", err, port)
	}
	if !strings.Contains(err.Error(), "the daemon could not start: Tether is not running: another program") {
		t.Errorf("Ensure's error: %v", err)
	}
}
