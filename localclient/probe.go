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
// nothing answers on the port, an answer that is not Tether's, or
// ErrNotThisTether with what to do.
func Probe(ctx context.Context, p config.Paths) (config.DaemonRecord, apitype.Health, error) {
	var h apitype.Health
	rec, err := p.ReadDaemonRecord()
	if err != nil {
		return rec, h, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	nonce := protocol.NewNonce()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rec.URL()+apitype.PathHealth+"?"+url.Values{apitype.HealthNonce: {nonce}}.Encode(), nil)
	if err != nil {
		return rec, h, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return rec, h, fmt.Errorf("daemon on port %d does not answer: %w", rec.Port, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return rec, h, fmt.Errorf("daemon on port %d answered /health with %s", rec.Port, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&h); err != nil {
		return rec, h, fmt.Errorf("port %d is not a Tether daemon", rec.Port)
	}
	if err := checkHealth(p, rec.Port, nonce, h); err != nil {
		return rec, h, err
	}
	return rec, h, nil
}

// checkHealth accepts h, the daemon's answer on port to /health with
// nonce, when its proof is keyed on p's pairing key, or when it has no
// proof (a Tether from before the proof) and a daemon holds p's lock while
// the record, an old daemon's, still names port (legacyRecord).
func checkHealth(p config.Paths, port int, nonce string, h apitype.Health) error {
	if h.Name != "tether" {
		return fmt.Errorf("port %d is not a Tether daemon", port)
	}
	if h.Proof == "" && lockHeld(p) && legacyRecord(p, port) {
		return nil // an older Tether, alive and holding this config dir
	}
	key, kerr := p.ReadPairingKey()
	if kerr == nil && protocol.ProofMatches(h.Proof, protocol.HealthProof(key, protocol.LocalEndpoint(port), nonce)) {
		return nil
	}
	return fmt.Errorf("%w: the program on port %d answers like Tether but could not prove it holds the pairing key of %s, so nothing was sent to it. "+
		"Another program may have taken Tether's port after Tether stopped: quit it, then start Tether again (port %d, recorded in %s)",
		ErrNotThisTether, port, p.Dir, port, p.Daemon())
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
		if err := proveConn(ctx, conn, p, addr); err != nil {
			conn.Close()
			return nil, err
		}
		return conn, nil
	}
}

// proveConn asks /health?nonce=… on conn (addr is host:port) and checks
// the answer (checkHealth), within 2 s or ctx's deadline.
func proveConn(ctx context.Context, conn net.Conn, p config.Paths, addr string) error {
	_, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("port of %s: %w", addr, err)
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
		return err
	}
	if err := req.Write(conn); err != nil {
		return fmt.Errorf("ask the daemon on port %d to prove itself: %w", port, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fmt.Errorf("the daemon on port %d did not answer /health: %w", port, err)
	}
	var h apitype.Health
	err = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&h)
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("port %d is not a Tether daemon (/health: %s)", port, resp.Status)
	}
	if br.Buffered() > 0 {
		return fmt.Errorf("the program on port %d sent more than its /health answer", port)
	}
	return checkHealth(p, port, nonce, h)
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
