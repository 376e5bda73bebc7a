//go:build !windows

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// RemoteHost is the public host name of remote mode tests (issue 19),
// mapped to 127.0.0.1: by RemoteHostResolverRules in Chromium, by
// Caddy.Dialer in Go clients. The .test TLD is reserved (RFC 2606), so it
// never resolves anywhere else.
const RemoteHost = "tether.test"

// RemoteHostResolverRules maps RemoteHost to 127.0.0.1 in Chromium and
// keeps every other name from resolving (as HostResolverRules does).
const RemoteHostResolverRules = "--host-resolver-rules=MAP " + RemoteHost + " 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"

// RequireCaddy returns the caddy binary (Debian's package caddy), or skips
// the test when it is missing; under CI=true a missing caddy fails it
// (`make deps-test` installs it).
func RequireCaddy(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("caddy")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("caddy is not installed: run `make deps-test` (it installs Debian's caddy and libnss3-tools)")
		}
		t.Skip("caddy is not installed (apt-get install caddy, or `make deps-test`): skipping the remote mode test")
	}
	return p
}

// Caddy is a running Caddy that terminates TLS for RemoteHost on
// 127.0.0.1:Port with its own internal CA (`tls internal`) and forwards
// every request to a Tether daemon on 127.0.0.1, as docs/remote.md sets
// it up. Its data (the CA's key and root certificate) lives in the test's
// temporary folder; it never installs its root anywhere (skip_install_trust).
type Caddy struct {
	// Port is the HTTPS port on 127.0.0.1.
	Port int
	// Upstream is the daemon's port on 127.0.0.1.
	Upstream int
	// Dir holds the Caddyfile, and Caddy's data under data/ (XDG_DATA_HOME).
	Dir string
	// RootCert is the PEM file of Caddy's local CA root.
	RootCert string
	// Roots holds RootCert: the only root a test client trusts.
	Roots *x509.CertPool
	Log   *LogWatcher
	cmd   *exec.Cmd
}

// StartCaddy starts Caddy in front of the daemon on 127.0.0.1:upstream, on
// a free port, and waits until it serves RemoteHost with a certificate its
// root verifies. Cleanup stops it.
func StartCaddy(t testing.TB, upstream int) *Caddy {
	t.Helper()
	c := &Caddy{Upstream: upstream, Dir: t.TempDir(), Port: freeLoopbackPort(t)}
	c.RootCert = filepath.Join(c.Dir, "data", "caddy", "pki", "authorities", "local", "root.crt")
	c.start(t)
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			t.Logf("caddy log:\n%s", c.Log.String())
		}
	})
	return c
}

// Caddyfile is the configuration StartCaddy runs: docs/remote.md's, with
// the test's ports, Caddy's admin endpoint off (tests run side by side)
// and no plain HTTP listener.
func (c *Caddy) Caddyfile() string {
	return fmt.Sprintf(`{
	admin off
	skip_install_trust
	auto_https disable_redirects
	http_port %d
	https_port %d
}

%s:%d {
	bind 127.0.0.1
	tls internal
	reverse_proxy 127.0.0.1:%d
}
`, freeLoopbackPortOrZero(), c.Port, RemoteHost, c.Port, c.Upstream)
}

func (c *Caddy) start(t testing.TB) {
	t.Helper()
	bin := RequireCaddy(t)
	file := filepath.Join(c.Dir, "Caddyfile")
	if err := os.WriteFile(file, []byte(c.Caddyfile()), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", file, "--adapter", "caddyfile")
	cmd.Env = append(os.Environ(), "HOME="+c.Dir, "XDG_DATA_HOME="+filepath.Join(c.Dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(c.Dir, "config"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start caddy: %v", err)
	}
	c.cmd = cmd
	c.Log = NewLogWatcher(stderr)
	// Caddy's CA (and its root file) is set up before it serves; the
	// certificate for RemoteHost is issued (first start) or loaded from its
	// storage (restart) after that, so the handshake below waits for it.
	if _, _, err := c.Log.WaitFor(0, 30*time.Second, "serving initial configuration"); err != nil {
		c.Stop()
		t.Fatalf("caddy did not start: %v\n%s", err, c.Log.String())
	}
	pem, err := os.ReadFile(c.RootCert)
	if err != nil {
		c.Stop()
		t.Fatalf("caddy's root certificate: %v", err)
	}
	c.Roots = x509.NewCertPool()
	if !c.Roots.AppendCertsFromPEM(pem) {
		t.Fatalf("caddy's root certificate %s holds no certificate", c.RootCert)
	}
	// Until the certificate is in Caddy's cache a handshake fails with
	// "internal error", so it is tried again (every 50 ms, 30 s at most)
	// until it verifies against the root.
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", c.Addr(), &tls.Config{ServerName: RemoteHost, RootCAs: c.Roots})
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			c.Stop()
			t.Fatalf("TLS handshake with caddy for %s: %v\n%s", RemoteHost, err, c.Log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Addr is Caddy's address, 127.0.0.1:Port.
func (c *Caddy) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port)) }

// URL is https://RemoteHost:Port + path.
func (c *Caddy) URL(path string) string {
	return "https://" + net.JoinHostPort(RemoteHost, strconv.Itoa(c.Port)) + path
}

// WSURL is wss://RemoteHost:Port + path (the extension's broker URL).
func (c *Caddy) WSURL(path string) string {
	return "wss://" + net.JoinHostPort(RemoteHost, strconv.Itoa(c.Port)) + path
}

// DialContext dials RemoteHost (any port) at 127.0.0.1 and refuses every
// other address, so a test client never leaves the machine.
func (c *Caddy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if host != RemoteHost {
		return nil, fmt.Errorf("test dialer: %s is not %s", addr, RemoteHost)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
}

// HTTPClient is an HTTP client for c.URL: it dials RemoteHost at 127.0.0.1
// and trusts Caddy's root alone (no certificate error is ignored).
func (c *Caddy) HTTPClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext:     c.DialContext,
		TLSClientConfig: &tls.Config{RootCAs: c.Roots},
		// The MCP client's notification stream stays open; keep a few.
		MaxIdleConnsPerHost: 4,
	}}
}

// Stop stops Caddy and waits for it to exit (idempotent).
func (c *Caddy) Stop() {
	if c.cmd == nil {
		return
	}
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
	_ = c.cmd.Wait()
	c.cmd = nil
}

// Restart stops Caddy and starts it again on the same port with the same
// data, so its root and certificate stay the same (a link fault and its end).
func (c *Caddy) Restart(t testing.TB) {
	t.Helper()
	c.Stop()
	c.start(t)
}

// ImportRoot adds Caddy's root certificate to the NSS database Chromium
// reads on Linux, $home/.pki/nssdb (created if missing), as a trusted CA
// for websites, with certutil (Debian's libnss3-tools). Start Chromium
// with HOME=home afterwards.
func (c *Caddy) ImportRoot(t testing.TB, home string) {
	t.Helper()
	certutil, err := exec.LookPath("certutil")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("certutil is not installed: run `make deps-test` (package libnss3-tools)")
		}
		t.Skip("certutil is not installed (apt-get install libnss3-tools): skipping")
	}
	db := filepath.Join(home, ".pki", "nssdb")
	if err := os.MkdirAll(db, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(db, "cert9.db")); err != nil {
		if out, err := exec.Command(certutil, "-d", "sql:"+db, "-N", "--empty-password").CombinedOutput(); err != nil {
			t.Fatalf("certutil -N: %v\n%s", err, out)
		}
	}
	if out, err := exec.Command(certutil, "-d", "sql:"+db, "-A", "-t", "C,,", "-n", "Caddy test root "+filepath.Base(c.Dir), "-i", c.RootCert).CombinedOutput(); err != nil {
		t.Fatalf("certutil -A %s: %v\n%s", c.RootCert, err, out)
	}
}

// freeLoopbackPort returns a port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort(t testing.TB) int {
	t.Helper()
	p := freeLoopbackPortOrZero()
	if p == 0 {
		t.Fatal("no free port on 127.0.0.1")
	}
	return p
}

func freeLoopbackPortOrZero() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
