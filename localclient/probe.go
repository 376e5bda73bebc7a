package localclient

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gofrs/flock"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/protocol"
)

// ErrNotThisTether: the program on the recorded port answers /health
// like Tether but did not prove it is the daemon of this config dir; no
// token was sent to it.
var ErrNotThisTether = errors.New("not this config dir's Tether")

// Probe asks the daemon recorded in the config dir p for its health, with
// a fresh nonce, and checks its proof (apitype.Health.Proof, keyed on the
// config dir's pairing key) before anyone sends it a token: after a crash
// or a Quit, any local program may listen on the recorded port.
//
// A daemon older than the proof (a Tether before protocol 4, answering
// without one) is trusted only while it holds the config dir's lock and
// the record, one such a daemon wrote, still names the port: then it is
// alive and holds the port it recorded, so no other program can.
//
// Errors: no record (ErrNotRunning wraps it for the local API's client),
// nothing answers on the port, an *OtherProgramError when a program that
// is not Tether answers there (naming it: PortHolder), or
// ErrNotThisTether with what to do when it answers like Tether without
// the proof.
func Probe(ctx context.Context, p config.Paths) (config.DaemonRecord, apitype.Health, error) {
	var h apitype.Health
	rec, err := p.ReadDaemonRecord()
	if err != nil {
		return rec, h, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(rec.Port))
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return rec, h, fmt.Errorf("daemon on port %d does not answer: %w", rec.Port, err)
	}
	defer conn.Close()
	h, err = proveConn(ctx, conn, p, addr)
	return rec, h, err
}

// checkHealth accepts h, the daemon's answer on port to /health with
// nonce, when its proof is keyed on p's pairing key, or when it has no
// proof (a Tether from before the proof) and a daemon holds p's lock while
// the record, an old daemon's, still names port (legacyRecord).
func checkHealth(p config.Paths, port int, nonce string, h apitype.Health) error {
	if h.Name != "tether" {
		return otherProgram(port, "/health answered 200 but not as Tether does")
	}
	if h.Proof == "" && lockHeld(p) && legacyRecord(p, port) {
		return nil // an older Tether, alive and holding this config dir
	}
	key, kerr := p.ReadPairingKey()
	if kerr == nil && protocol.ProofMatches(h.Proof, protocol.HealthProof(key, protocol.LocalEndpoint(port), nonce)) {
		return nil
	}
	who := ""
	if holder := PortHolder(port); holder != "" {
		who = " (" + holder + ")"
	}
	return fmt.Errorf("%w: the program on port %d%s answers like Tether but could not prove it holds the pairing key of %s, so nothing was sent to it. "+
		"Another program may have taken Tether's port after Tether stopped: quit it, then start Tether again (port %d, recorded in %s)",
		ErrNotThisTether, port, who, p.Dir, port, p.Daemon())
}

// ProvenDialer returns a DialContext for an http.Transport that talks to
// the daemon of p: on each new connection it first asks /health with a
// fresh nonce, on that connection, and hands the connection over only when
// the answer proves the daemon is p's (as Probe), so a token is never
// written to another program that took the port between two requests.
// It costs one round trip per new connection; kept-alive ones are reused.
func ProvenDialer(p config.Paths) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if _, err := proveConn(ctx, conn, p, addr); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
}

// proveConn asks /health?nonce=… on conn (addr is host:port) and checks
// the answer (checkHealth), within 2 s or ctx's deadline, returning it.
// An answer that is not Tether's (no HTTP, a status other than 200, no
// JSON naming "tether") is an *OtherProgramError: a daemon of this
// config dir always answers a loopback /health with 200 (daemon.go).
func proveConn(ctx context.Context, conn net.Conn, p config.Paths, addr string) (apitype.Health, error) {
	var h apitype.Health
	_, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return h, err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return h, fmt.Errorf("port of %s: %w", addr, err)
	}
	deadline := time.Now().Add(2 * time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	defer conn.SetDeadline(time.Time{})
	nonce := protocol.NewNonce()
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+apitype.PathHealth+"?"+url.Values{apitype.HealthNonce: {nonce}}.Encode(), nil)
	if err != nil {
		return h, err
	}
	if err := req.Write(conn); err != nil {
		return h, fmt.Errorf("ask the daemon on port %d to prove itself: %w", port, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return h, otherProgram(port, "it accepted the connection but gave no answer to /health within 2 s")
		}
		return h, otherProgram(port, fmt.Sprintf("its answer to /health is not HTTP: %v", err))
	}
	err = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&h)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return h, otherProgram(port, "/health answered "+resp.Status)
	}
	if err != nil || h.Name != "tether" {
		return h, otherProgram(port, "/health answered 200 but not as Tether does")
	}
	if br.Buffered() > 0 {
		return h, fmt.Errorf("the program on port %d sent more than its /health answer", port)
	}
	return h, checkHealth(p, port, nonce, h)
}

// legacyRecord reports whether the daemon record, read now (after the
// answer and the lock were checked), names port and was written by a
// daemon from before the proof. A record a proving daemon wrote, a record
// naming another port (Tether started again elsewhere while the program on
// port stalled its answer), or none means the lock holder is not the
// program that answered without a proof. (A daemon drops any record left
// by a crash as soon as it takes the lock.)
func legacyRecord(p config.Paths, port int) bool {
	rec, err := p.ReadDaemonRecord()
	return err == nil && rec.Port == port && !rec.Proves
}

// lockHeld reports whether another process holds the config dir's daemon
// lock (a daemon runs). It takes the lock for an instant when free.
func lockHeld(p config.Paths) bool {
	lock := flock.New(p.Lock())
	ok, err := lock.TryLock()
	if err != nil {
		return false
	}
	if ok {
		_ = lock.Unlock()
		return false
	}
	return true
}
