package cli

import (
	"context"
	"fmt"
	"io"
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
)

// stderrOf runs f and returns what it printed on stderr.
func stderrOf(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	ferr := f()
	os.Stderr = old
	w.Close()
	return <-done, ferr
}

// webServerOnPort starts a web server that is not Tether (404 to
// everything, as one answering the extension's upgrade) and makes its
// port Tether's ($TETHER_PORT); it fails t if a token reaches it.
func webServerOnPort(t *testing.T) int {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			t.Errorf("a token reached the web server on Tether's port (%s)", r.URL.Path)
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	t.Setenv(config.EnvPort, strconv.Itoa(port))
	return port
}

// thisProcessName is how the port's holder is named on Linux (this test
// process itself holds it), "" elsewhere.
func thisProcessName(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		return ""
	}
	return fmt.Sprintf("pid %d, %s", os.Getpid(), filepath.Base(os.Args[0]))
}

// newConfigDir is a config dir with keys and no daemon record (Tether
// stopped), made the current one.
func newConfigDir(t *testing.T) config.Paths {
	t.Helper()
	p := config.Paths{Dir: t.TempDir()}
	t.Setenv(config.EnvConfigDir, p.Dir)
	if _, err := p.LoadOrCreatePairingKey(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.LoadOrCreateControlToken(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStopNamesTheProgramOnThePort: `tether stop` with Tether stopped and
// a web server on its port says Tether is not running and that another
// program holds the port (naming it where the OS says, and the port), and
// what to do; with a stale record naming the port, the same.
func TestStopNamesTheProgramOnThePort(t *testing.T) {
	p := newConfigDir(t)
	port := webServerOnPort(t)
	for _, stale := range []bool{false, true} {
		if stale {
			// Tether crashed: its record names the port the server took.
			if err := p.WriteDaemonRecord(config.DaemonRecord{PID: 999999, Port: port, Version: "x", Proves: true}); err != nil {
				t.Fatal(err)
			}
		}
		out, err := stdoutOf(t, func() error { return runStop(context.Background(), nil) })
		if err != nil {
			t.Fatalf("tether stop (stale record %v): %v", stale, err)
		}
		for _, want := range []string{"Tether is not running: another program", "not Tether, answers on 127.0.0.1:" + strconv.Itoa(port), "nothing was sent to it", "Quit that program"} {
			if !strings.Contains(out, want) {
				t.Errorf("tether stop (stale record %v) does not say %q:\n%s", stale, want, out)
			}
		}
		if h := thisProcessName(t); h != "" && !strings.Contains(out, "("+h+")") {
			t.Errorf("tether stop does not name the process %q:\n%s", h, out)
		}
	}
}

// TestStopWithNothingOnThePort: nothing listens, so Tether is simply not
// running.
func TestStopWithNothingOnThePort(t *testing.T) {
	newConfigDir(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	t.Setenv(config.EnvPort, strconv.Itoa(port))
	out, err := stdoutOf(t, func() error { return runStop(context.Background(), nil) })
	if err != nil || strings.TrimSpace(out) != "Tether is not running" {
		t.Errorf("tether stop = %q, %v; want \"Tether is not running\"", out, err)
	}
}

// TestProfilesNamesTheProgramOnThePort: `tether profiles` still shows the
// saved registry with Tether stopped, and says on stderr that another
// program holds the port instead of "the daemon is not running";
// `tether profiles approve`, which needs the daemon, fails with the same
// explanation.
func TestProfilesNamesTheProgramOnThePort(t *testing.T) {
	newConfigDir(t)
	port := webServerOnPort(t)
	var stdout string
	stderr, err := stderrOf(t, func() error {
		var err error
		stdout, err = stdoutOf(t, func() error { return runProfiles(context.Background(), nil) })
		return err
	})
	if err != nil {
		t.Fatalf("tether profiles: %v", err)
	}
	if !strings.Contains(stdout, "SLUG") {
		t.Errorf("tether profiles does not list the saved registry:\n%s", stdout)
	}
	if strings.Contains(stderr, "the daemon is not running") || !strings.Contains(stderr, "another program") || !strings.Contains(stderr, "127.0.0.1:"+strconv.Itoa(port)) || !strings.Contains(stderr, "(showing the saved registry)") {
		t.Errorf("tether profiles' note does not name the program on port %d:\n%s", port, stderr)
	}
	err = runProfiles(context.Background(), []string{"approve", "ABCDEF"})
	if err == nil || !strings.Contains(err.Error(), "another program") || !strings.Contains(err.Error(), "127.0.0.1:"+strconv.Itoa(port)) {
		t.Errorf("tether profiles approve: %v, want the program on port %d named", err, port)
	}
}
