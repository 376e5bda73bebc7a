package localclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/protocol"
)

// plainServer is a web server that is not Tether, answering status to
// everything; it records each request's Authorization header.
type plainServer struct {
	port  int
	mu    sync.Mutex
	auths []string
	paths []string
}

func startPlain(t *testing.T, status int) *plainServer {
	t.Helper()
	ps := &plainServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.mu.Lock()
		ps.paths = append(ps.paths, r.URL.Path)
		if a := r.Header.Get("Authorization"); a != "" {
			ps.auths = append(ps.auths, a)
		}
		ps.mu.Unlock()
		w.WriteHeader(status)
		_, _ = w.Write([]byte("<h1>a web server</h1>"))
	}))
	t.Cleanup(srv.Close)
	ps.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return ps
}

// thisProcess is how PortHolder names the test process itself: "pid N,
// <its executable's name>"; "" off Linux, where the name the OS gives
// (lsof's, the process table's) is not checked here.
func thisProcess(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		return ""
	}
	return fmt.Sprintf("pid %d, %s", os.Getpid(), filepath.Base(os.Args[0]))
}

// holderIs reports whether PortHolder's got names the test process (want,
// thisProcess); off Linux anything passes.
func holderIs(got, want string) bool { return want == "" || got == want }

func record(t *testing.T, p config.Paths, port int) {
	t.Helper()
	if err := p.WriteDaemonRecord(config.DaemonRecord{PID: 999999, Port: port, Version: "x", Proves: true}); err != nil {
		t.Fatal(err)
	}
}

// TestPortHolderNamesTheListener: on Linux the process listening on a
// loopback port is named by pid and name; a port nobody listens on names
// nobody.
func TestPortHolderNamesTheListener(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PortHolder names processes on Linux only")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if got, want := PortHolder(port), thisProcess(t); !holderIs(got, want) {
		t.Errorf("PortHolder(%d) = %q, want %q", port, got, want)
	}
	ln.Close()
	if got := PortHolder(port); got != "" {
		t.Errorf("PortHolder of a closed port = %q, want none", got)
	}
}

// TestProbeNamesAPlainHTTPServer: a web server on the recorded port
// (Tether crashed, it took the port) answers /health with 404: Probe says
// another program holds the port, naming it and the port, and that
// nothing was sent; it counts as "not running" for the offline fallbacks.
func TestProbeNamesAPlainHTTPServer(t *testing.T) {
	p := newPaths(t)
	for _, status := range []int{http.StatusNotFound, http.StatusOK, http.StatusUpgradeRequired} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			ps := startPlain(t, status)
			record(t, p, ps.port)
			_, _, err := Probe(context.Background(), p)
			var op *OtherProgramError
			if !errors.As(err, &op) {
				t.Fatalf("Probe: %v, want *OtherProgramError", err)
			}
			if op.Port != ps.port || !holderIs(op.Holder, thisProcess(t)) {
				t.Errorf("OtherProgramError names port %d and %q, want %d and %q", op.Port, op.Holder, ps.port, thisProcess(t))
			}
			if !errors.Is(err, ErrNotRunning) || errors.Is(err, ErrNotThisTether) {
				t.Errorf("the error %v should count as not running, and not as a Tether without proof", err)
			}
			msg := err.Error()
			for _, want := range []string{"127.0.0.1:" + strconv.Itoa(ps.port), "nothing was sent to it", "Quit that program", "TETHER_PORT=" + strconv.Itoa(ps.port+1) + " tether", "Write the extension"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the message lacks %q: %s", want, msg)
				}
			}
			if status != http.StatusOK && !strings.Contains(msg, "/health answered "+strconv.Itoa(status)) {
				t.Errorf("the message does not say what it answered: %s", msg)
			}
		})
	}
}

// TestClientNamesAPlainHTTPServerAndSendsNoToken: `tether profiles
// approve` and the other calls get the same error, without the request's
// URL, and the control token never reaches the server.
func TestClientNamesAPlainHTTPServerAndSendsNoToken(t *testing.T) {
	p := newPaths(t)
	ps := startPlain(t, http.StatusNotFound)
	record(t, p, ps.port)
	_, err := New(p).Profiles(context.Background())
	var op *OtherProgramError
	if !errors.As(err, &op) || op.Port != ps.port {
		t.Fatalf("Profiles: %v, want *OtherProgramError for port %d", err, ps.port)
	}
	if !errors.Is(err, ErrNotRunning) {
		t.Errorf("Profiles: %v does not wrap ErrNotRunning (the CLI's fallbacks need it)", err)
	}
	if strings.Contains(err.Error(), "http://") {
		t.Errorf("the error carries the request's URL: %v", err)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if len(ps.auths) > 0 {
		t.Errorf("the client sent the web server %d Authorization header(s)", len(ps.auths))
	}
	for _, path := range ps.paths {
		if path != "/health" {
			t.Errorf("the client asked the web server for %s, want only /health", path)
		}
	}
}

// TestProbeNamesAProgramThatIsNotHTTP: a program that accepts and says
// nothing, or answers in another protocol, is another program too.
func TestProbeNamesAProgramThatIsNotHTTP(t *testing.T) {
	p := newPaths(t)
	for name, tc := range map[string]struct {
		serve func(net.Conn)
		want  string
	}{
		"silent": {func(c net.Conn) { buf := make([]byte, 4096); _, _ = c.Read(buf); select {} }, "gave no answer to /health within 2 s"},
		"ssh":    {func(c net.Conn) { _, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n")); c.Close() }, "its answer to /health is not HTTP"},
	} {
		t.Run(name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go tc.serve(c)
				}
			}()
			record(t, p, ln.Addr().(*net.TCPAddr).Port)
			_, _, err = Probe(context.Background(), p)
			var op *OtherProgramError
			if !errors.As(err, &op) || !strings.Contains(op.Answer, tc.want) {
				t.Fatalf("Probe: %v, want *OtherProgramError saying %q", err, tc.want)
			}
		})
	}
}

// TestCheckPortWithoutARecord: with no daemon record (Tether stopped), the
// client asks what answers on the port a daemon would take: nothing (not
// running, plainly), a web server (named), a program answering like
// Tether without this config dir's proof (named, as not this Tether), or
// this config dir's Tether starting up (not another program).
func TestCheckPortWithoutARecord(t *testing.T) {
	p := newPaths(t)
	ctx := context.Background()

	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freePort := free.Addr().(*net.TCPAddr).Port
	free.Close()
	t.Setenv(config.EnvPort, strconv.Itoa(freePort))
	_, err = New(p).Profiles(ctx)
	var op *OtherProgramError
	if !errors.Is(err, ErrNotRunning) || errors.As(err, &op) {
		t.Errorf("nothing on the port: %v, want a plain ErrNotRunning", err)
	}

	ps := startPlain(t, http.StatusNotFound)
	t.Setenv(config.EnvPort, strconv.Itoa(ps.port))
	_, err = New(p).Profiles(ctx)
	if !errors.As(err, &op) || op.Port != ps.port || !holderIs(op.Holder, thisProcess(t)) || !errors.Is(err, ErrNotRunning) {
		t.Fatalf("a web server on the port: %v, want *OtherProgramError naming port %d and %q", err, ps.port, thisProcess(t))
	}

	key, err := p.ReadPairingKey()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		proof func(port int, nonce string) string
		other bool
	}{
		"another key's proof": {func(port int, nonce string) string {
			return protocol.HealthProof(make([]byte, 32), protocol.LocalEndpoint(port), nonce)
		}, true},
		"this config dir's": {func(port int, nonce string) string {
			return protocol.HealthProof(key, protocol.LocalEndpoint(port), nonce)
		}, false},
	} {
		t.Run(name, func(t *testing.T) {
			q := config.Paths{Dir: p.Dir}
			startImpostor(t, q, tc.proof) // writes a record: read its port, then drop it
			rec, err := q.ReadDaemonRecord()
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(q.Daemon()); err != nil {
				t.Fatal(err)
			}
			err = CheckPort(ctx, q, rec.Port)
			var op *OtherProgramError
			if tc.other && (!errors.As(err, &op) || !strings.Contains(op.Answer, "answers /health like Tether but cannot prove it holds the pairing key") ||
				!strings.Contains(err.Error(), "not this config dir's Tether, answers on")) {
				t.Errorf("CheckPort: %v, want another program answering like Tether", err)
			}
			if !tc.other && err != nil {
				t.Errorf("CheckPort on this config dir's Tether: %v, want nil", err)
			}
		})
	}
}

// TestImpostorKeepsItsError: a program answering /health as Tether without
// the proof keeps ErrNotThisTether (not "another program"), now naming the
// process where the OS says, and gets no token.
func TestImpostorKeepsItsError(t *testing.T) {
	p := newPaths(t)
	im := startImpostor(t, p, func(int, string) string { return "" })
	_, err := New(p).State(context.Background())
	var op *OtherProgramError
	if !errors.Is(err, ErrNotThisTether) || errors.As(err, &op) {
		t.Fatalf("State: %v, want ErrNotThisTether", err)
	}
	if h := thisProcess(t); h != "" && !strings.Contains(err.Error(), "("+h+")") {
		t.Errorf("the error does not name the process %q: %v", h, err)
	}
	if strings.Contains(err.Error(), "http://") {
		t.Errorf("the error carries the request's URL: %v", err)
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	if len(im.auths) > 0 {
		t.Fatalf("the client sent the impostor %d Authorization header(s)", len(im.auths))
	}
}
