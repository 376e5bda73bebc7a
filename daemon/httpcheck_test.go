package daemon

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/mcptoken"
)

// fakeNamed is a NamedTokens of fixed secrets (unit tests only).
type fakeNamed map[string]string

func (f fakeNamed) Lookup(secret string) (string, bool) { n, ok := f[secret]; return n, ok }

func TestAPIGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := hostGate(slog.New(slog.DiscardHandler), nil, apiGuard(slog.New(slog.DiscardHandler), "secret", nil, ok))
	for _, tc := range []struct {
		name, host, auth, origin string
		want                     int
	}{
		{"good", "127.0.0.1:1", "Bearer secret", "", http.StatusTeapot},
		{"no token", "127.0.0.1:1", "", "", http.StatusUnauthorized},
		{"wrong token", "127.0.0.1:1", "Bearer secreT", "", http.StatusUnauthorized},
		{"token prefix", "127.0.0.1:1", "Bearer secretX", "", http.StatusUnauthorized},
		{"basic", "127.0.0.1:1", "Basic secret", "", http.StatusUnauthorized},
		{"browser origin", "127.0.0.1:1", "Bearer secret", "https://evil.example", http.StatusForbidden},
		{"null origin", "127.0.0.1:1", "Bearer secret", "null", http.StatusForbidden},
		{"rebinding", "evil.example", "Bearer secret", "", http.StatusForbidden},
	} {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Host = tc.host
		if tc.auth != "" {
			r.Header.Set("Authorization", tc.auth)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, w.Code, tc.want)
		}
		if tc.want == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", tc.name)
		}
	}
}

// TestHostGate covers every refusal of remote mode (docs/remote.md): the
// public Host without the setting, from a peer that is not the proxy,
// without X-Forwarded-Proto: https, on a path that is not served remotely,
// and a loopback Host carrying a proxy's header; and what passes.
func TestHostGate(t *testing.T) {
	var gotRemote, gotToken string
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotRemote, gotToken = remoteHost(r.Context()), TokenName(r.Context())
		w.WriteHeader(http.StatusTeapot)
	})
	log := slog.New(slog.DiscardHandler)
	named := fakeNamed{"tt_agent": "agent"}
	guarded := apiGuard(log, "local", named, ok)
	const proxy, lan = "127.0.0.1:40000", "192.0.2.7:40000"
	for _, tc := range []struct {
		name    string
		remote  []string
		host    string
		path    string
		peer    string
		headers map[string]string
		want    int
		msg     string // part of the refusal's text
		wantRem string
		wantTok string
	}{
		{"public host without setting", nil, "tether.example.org", "/mcp", proxy,
			map[string]string{"X-Forwarded-Proto": "https", "Authorization": "Bearer tt_agent"}, 403, "list it in settings.json's remote.hosts", "", ""},
		{"other public host with setting", []string{"tether.example.org"}, "evil.example", "/mcp", proxy,
			map[string]string{"X-Forwarded-Proto": "https", "Authorization": "Bearer tt_agent"}, 403, "one of settings.json's remote.hosts", "", ""},
		{"remote host from non-loopback peer", []string{"tether.example.org"}, "tether.example.org", "/mcp", lan,
			map[string]string{"X-Forwarded-Proto": "https", "Authorization": "Bearer tt_agent"}, 403, "only through the TLS reverse proxy", "", ""},
		{"remote host without X-Forwarded-Proto", []string{"tether.example.org"}, "tether.example.org", "/mcp", proxy,
			map[string]string{"Authorization": "Bearer tt_agent"}, 403, "X-Forwarded-Proto: https (got none)", "", ""},
		{"remote host with X-Forwarded-Proto http", []string{"tether.example.org"}, "tether.example.org:443", "/mcp", proxy,
			map[string]string{"X-Forwarded-Proto": "http", "Authorization": "Bearer tt_agent"}, 403, `(got "http")`, "", ""},
		{"remote host on another path", []string{"tether.example.org"}, "tether.example.org", "/api/state", proxy,
			map[string]string{"X-Forwarded-Proto": "https"}, 403, "the local API never leaves this machine", "", ""},
		{"remote host on a sub-path", []string{"tether.example.org"}, "tether.example.org", "/mcp/x", proxy,
			map[string]string{"X-Forwarded-Proto": "https"}, 403, "served only on 127.0.0.1", "", ""},
		{"loopback host forwarded by a proxy", []string{"tether.example.org"}, "127.0.0.1:8080", "/mcp", proxy,
			map[string]string{"X-Forwarded-For": "198.51.100.1", "Authorization": "Bearer local"}, 403, "X-Forwarded-For is set", "", ""},
		{"localhost with Forwarded", nil, "localhost", "/health", proxy,
			map[string]string{"Forwarded": "for=198.51.100.1"}, 403, "Forwarded is set", "", ""},
		{"local token over the proxy", []string{"tether.example.org"}, "tether.example.org", "/mcp", proxy,
			map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.1", "Authorization": "Bearer local"}, 403, "needs a named token", "", ""},
		{"unknown token over the proxy", []string{"tether.example.org"}, "tether.example.org", "/mcp", proxy,
			map[string]string{"X-Forwarded-Proto": "https", "Authorization": "Bearer tt_revoked"}, 401, "unknown or was revoked", "", ""},
		{"named token over the proxy", []string{"tether.example.org"}, "Tether.Example.org:443", "/mcp", proxy,
			map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-For": "198.51.100.1", "Authorization": "Bearer tt_agent"}, 418, "", "tether.example.org", "agent"},
		{"named token locally", nil, "127.0.0.1:9", "/mcp", proxy,
			map[string]string{"Authorization": "Bearer tt_agent"}, 418, "", "", "agent"},
		{"local token locally", nil, "[::1]:9", "/mcp", "[::1]:5",
			map[string]string{"Authorization": "Bearer local"}, 418, "", "", ""},
	} {
		gotRemote, gotToken = "", ""
		mux := http.NewServeMux()
		mux.Handle("/mcp", guarded)
		mux.Handle("/", ok)
		h := hostGate(log, tc.remote, mux)
		r := httptest.NewRequest(http.MethodPost, tc.path, nil)
		r.Host, r.RemoteAddr = tc.host, tc.peer
		for k, v := range tc.headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("%s: status %d, want %d (%s)", tc.name, w.Code, tc.want, w.Body)
			continue
		}
		if !strings.Contains(w.Body.String(), tc.msg) {
			t.Errorf("%s: body %q lacks %q", tc.name, w.Body, tc.msg)
		}
		if gotRemote != tc.wantRem || gotToken != tc.wantTok {
			t.Errorf("%s: remote %q token %q, want %q %q", tc.name, gotRemote, gotToken, tc.wantRem, tc.wantTok)
		}
	}
}

// The local MCP token seen through the proxy means the machine's own
// secret leaked: its refusal, like a wrong named token's, names the
// client's address from X-Forwarded-For in the log (docs/remote.md says
// every refused token's does).
func TestRefusedTokensLogTheClientAddress(t *testing.T) {
	var buf strings.Builder
	log := slog.New(slog.NewTextHandler(&buf, nil))
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := hostGate(log, []string{"tether.example.org"}, apiGuard(log, "secret", fakeNamed{"tt_agent": "agent"}, ok))
	for _, auth := range []string{"Bearer secret", "Bearer tt_revoked"} {
		buf.Reset()
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		r.Host, r.RemoteAddr = "tether.example.org", "127.0.0.1:50000"
		r.Header.Set("X-Forwarded-Proto", "https")
		r.Header.Set("X-Forwarded-For", "198.51.100.7")
		r.Header.Set("Authorization", auth)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusForbidden && w.Code != http.StatusUnauthorized {
			t.Fatalf("%s: status %d", auth, w.Code)
		}
		if !strings.Contains(buf.String(), "198.51.100.7") {
			t.Errorf("%s: refusal logged without the client's address: %s", auth, buf.String())
		}
	}
}

// Attack: a client opens an MCP session's event stream (GET /mcp) with a
// named token, which is then revoked: the stream must end at once, not
// stay open (keeping the session alive and carrying its notifications)
// until the client hangs up. Requests made with other tokens go on.
func TestRevokingATokenEndsItsStreams(t *testing.T) {
	store, err := mcptoken.Open(config.Paths{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	bad, _, err := store.Add("stolen")
	if err != nil {
		t.Fatal(err)
	}
	good, _, err := store.Add("agent")
	if err != nil {
		t.Fatal(err)
	}
	open := make(chan string, 2)
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open <- TokenName(r.Context())
		<-r.Context().Done()
	})
	srv := httptest.NewServer(hostGate(slog.New(slog.DiscardHandler), nil, apiGuard(slog.New(slog.DiscardHandler), "secret", store, stream)))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // ends the streams left open, before srv.Close waits for them
	get := func(secret string) chan error {
		done := make(chan error, 1)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			done <- err
		}()
		return done
	}
	badDone, goodDone := get(bad), get(good)
	<-open
	<-open
	if err := store.Revoke("stolen"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-badDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the revoked token's stream is still open 5 s after the revocation")
	}
	select {
	case err := <-goodDone:
		t.Fatalf("another token's stream ended with the revocation (%v)", err)
	case <-time.After(100 * time.Millisecond):
	}
}

// A request whose header block passes MaxHeaderBytes is answered 431
// before any route, so a local process cannot make the daemon hold
// megabytes per connection (net/http's default allows 1 MB); a request
// with ordinary headers still gets through.
func TestOversizedHeadersAreRefused(t *testing.T) {
	_, addr := startDaemon(t, true)
	get := func(pad int) int {
		req, err := http.NewRequest("GET", "http://"+addr+"/health", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Pad", strings.Repeat("a", pad))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(8 << 10); code != http.StatusOK {
		t.Fatalf("an 8 KiB header: %d, want 200", code)
	}
	if code := get(MaxHeaderBytes + 8<<10); code != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("a header past MaxHeaderBytes: %d, want 431", code)
	}
}
