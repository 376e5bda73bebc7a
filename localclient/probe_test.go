package localclient

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/gofrs/flock"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/protocol"
)

// impostor is a program on the recorded port that answers /health like
// Tether; proof makes its proof from the request's nonce ("" for none).
type impostor struct {
	mu    sync.Mutex
	auths []string
}

func startImpostor(t *testing.T, p config.Paths, proof func(port int, nonce string) string) *impostor {
	t.Helper()
	im := &impostor{}
	var port int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		im.mu.Lock()
		if a := r.Header.Get("Authorization"); a != "" {
			im.auths = append(im.auths, a)
		}
		im.mu.Unlock()
		if r.URL.Path == apitype.PathHealth {
			_ = json.NewEncoder(w).Encode(apitype.Health{Name: "tether", Version: "x", Proof: proof(port, r.URL.Query().Get(apitype.HealthNonce))})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{})
	}))
	t.Cleanup(srv.Close)
	port = srv.Listener.Addr().(*net.TCPAddr).Port
	if err := p.WriteDaemonRecord(config.DaemonRecord{PID: os.Getpid(), Port: port, Version: "x"}); err != nil {
		t.Fatal(err)
	}
	return im
}

func newPaths(t *testing.T) config.Paths {
	t.Helper()
	p := config.Paths{Dir: t.TempDir()}
	if _, err := p.LoadOrCreatePairingKey(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.LoadOrCreateControlToken(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestProbeTellsTetherFromAnImpostor: only an answer with the proof keyed
// on this config dir's pairing key, for this nonce and port, is Tether;
// an answer without a proof is an older Tether only while this config
// dir's lock is held.
func TestProbeTellsTetherFromAnImpostor(t *testing.T) {
	p := newPaths(t)
	key, err := p.ReadPairingKey()
	if err != nil {
		t.Fatal(err)
	}
	other := make([]byte, 32)
	for _, tc := range []struct {
		name  string
		proof func(port int, nonce string) string
		lock  bool
		ok    bool
	}{
		{"right proof", func(port int, nonce string) string {
			return protocol.HealthProof(key, protocol.LocalEndpoint(port), nonce)
		}, false, true},
		{"another key's proof", func(port int, nonce string) string {
			return protocol.HealthProof(other, protocol.LocalEndpoint(port), nonce)
		}, false, false},
		{"a proof for another port", func(port int, nonce string) string {
			return protocol.HealthProof(key, protocol.LocalEndpoint(port+1), nonce)
		}, false, false},
		{"a proof of another nonce", func(port int, nonce string) string {
			return protocol.HealthProof(key, protocol.LocalEndpoint(port), protocol.NewNonce())
		}, false, false},
		{"no proof, no daemon holds the lock", func(int, string) string { return "" }, false, false},
		{"no proof, a daemon holds the lock", func(int, string) string { return "" }, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			startImpostor(t, p, tc.proof)
			if tc.lock {
				l := flock.New(p.Lock())
				if ok, err := l.TryLock(); err != nil || !ok {
					t.Fatalf("take the lock: %v", err)
				}
				t.Cleanup(func() { _ = l.Unlock() })
			}
			_, _, err := Probe(context.Background(), p)
			if tc.ok && err != nil {
				t.Fatalf("Probe: %v, want Tether", err)
			}
			if !tc.ok && !errors.Is(err, ErrNotThisTether) {
				t.Fatalf("Probe: %v, want ErrNotThisTether", err)
			}
		})
	}
}

// TestClientSendsNoTokenToAnImpostor: the local API's client (CLI, tray,
// window) sends its control token only after the proof.
func TestClientSendsNoTokenToAnImpostor(t *testing.T) {
	p := newPaths(t)
	im := startImpostor(t, p, func(int, string) string { return protocol.NewNonce() })
	_, err := New(p).State(context.Background())
	if !errors.Is(err, ErrNotThisTether) {
		t.Fatalf("State: %v, want ErrNotThisTether", err)
	}
	im.mu.Lock()
	defer im.mu.Unlock()
	if len(im.auths) > 0 {
		t.Fatalf("the client sent the impostor %d Authorization header(s)", len(im.auths))
	}
}

// TestClientSendsNoTokenAfterThePortChangedHands: the client reached Tether
// once; Tether stops and another program takes its port before the next
// call. The new connection's proof fails, so the token is not sent.
func TestClientSendsNoTokenAfterThePortChangedHands(t *testing.T) {
	p := newPaths(t)
	key, _ := p.ReadPairingKey()
	var mu sync.Mutex
	var auths []string
	handler := func(prove bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			port := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr).Port
			if r.URL.Path == apitype.PathHealth {
				proof := protocol.NewNonce()
				if prove {
					proof = protocol.HealthProof(key, protocol.LocalEndpoint(port), r.URL.Query().Get(apitype.HealthNonce))
				}
				_ = json.NewEncoder(w).Encode(apitype.Health{Name: "tether", Version: "x", Proof: proof})
				return
			}
			if !prove {
				mu.Lock()
				auths = append(auths, r.Header.Get("Authorization"))
				mu.Unlock()
			}
			_ = json.NewEncoder(w).Encode(apitype.State{})
		}
	}
	tether := httptest.NewServer(handler(true))
	port := tether.Listener.Addr().(*net.TCPAddr).Port
	if err := p.WriteDaemonRecord(config.DaemonRecord{PID: os.Getpid(), Port: port, Version: "x"}); err != nil {
		t.Fatal(err)
	}
	c := New(p)
	if _, err := c.State(context.Background()); err != nil {
		t.Fatalf("State from Tether: %v", err)
	}
	tether.CloseClientConnections()
	tether.Close()
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Skipf("the port was taken by someone else meanwhile: %v", err)
	}
	impostor := httptest.NewUnstartedServer(handler(false))
	impostor.Listener.Close()
	impostor.Listener = ln
	impostor.Start()
	t.Cleanup(impostor.Close)
	if _, err := c.State(context.Background()); !errors.Is(err, ErrNotThisTether) {
		t.Fatalf("State after the port changed hands: %v, want ErrNotThisTether", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auths) > 0 {
		t.Fatalf("the client sent the impostor its token %d time(s)", len(auths))
	}
}

// TestNoProofIsNotTrustedOnAnotherDaemonsLock: a daemon crashed (its
// record stays, naming its port), another program took that port, and
// Tether starts again on another port (TETHER_PORT, or --port as the
// "port in use" error suggests). The new daemon holds the lock, but it is
// not the program on the recorded port: an answer without a proof from
// there must not be trusted, neither when the record is one a daemon
// that proves itself wrote, nor when the impostor stalls its answer until
// the new daemon has the lock and has written its own record (reproduced
// with a real `tether mcp`, which then sent the impostor its MCP token).
func TestNoProofIsNotTrustedOnAnotherDaemonsLock(t *testing.T) {
	t.Run("the record is a proving daemon's", func(t *testing.T) {
		p := newPaths(t)
		startImpostor(t, p, func(int, string) string { return "" })
		rec, _ := p.ReadDaemonRecord()
		rec.Proves = true
		if err := p.WriteDaemonRecord(rec); err != nil {
			t.Fatal(err)
		}
		l := flock.New(p.Lock())
		if ok, err := l.TryLock(); err != nil || !ok {
			t.Fatalf("take the lock: %v", err)
		}
		t.Cleanup(func() { _ = l.Unlock() })
		if _, _, err := Probe(context.Background(), p); !errors.Is(err, ErrNotThisTether) {
			t.Fatalf("Probe: %v, want ErrNotThisTether", err)
		}
	})
	t.Run("the record changed while the impostor stalled", func(t *testing.T) {
		p := newPaths(t)
		stalled := make(chan struct{})
		resume := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(stalled)
			<-resume
			_ = json.NewEncoder(w).Encode(apitype.Health{Name: "tether", Version: "x"})
		}))
		t.Cleanup(srv.Close)
		port := srv.Listener.Addr().(*net.TCPAddr).Port
		// An old (pre-proof) daemon's record, left by a crash.
		if err := p.WriteDaemonRecord(config.DaemonRecord{PID: 1 << 22, Port: port, Version: "x"}); err != nil {
			t.Fatal(err)
		}
		go func() {
			<-stalled
			// Tether starts meanwhile, on another port.
			l := flock.New(p.Lock())
			if ok, err := l.TryLock(); err != nil || !ok {
				t.Errorf("take the lock: %v", err)
			}
			t.Cleanup(func() { _ = l.Unlock() })
			_ = p.WriteDaemonRecord(config.DaemonRecord{PID: os.Getpid(), Port: port + 1, Version: "x", Proves: true})
			close(resume)
		}()
		if _, _, err := Probe(context.Background(), p); !errors.Is(err, ErrNotThisTether) {
			t.Fatalf("Probe: %v, want ErrNotThisTether", err)
		}
	})
}
