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

// post sends body to h as the named token name ("" for the local token).
func postAs(h http.Handler, ctx context.Context, name, body string) *httptest.ResponseRecorder {
	if name != "" {
		ctx = context.WithValue(ctx, tokenKey{}, name)
	}
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// A named token's initialize counts against its rate limit (each one
// starts a session, and too many end other clients' sessions); the local
// token's does not; the SDK still gets the body as sent.
func TestNamedTokenInitializeIsRateLimited(t *testing.T) {
	var got []string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, string(b))
	})
	h := namedTokenMessages(slog.New(slog.DiscardHandler), mcptoken.NewLimiter(2), nil, next)
	init := `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`
	for i := range 2 {
		if rec := postAs(h, context.Background(), "agent", init); rec.Code != http.StatusOK {
			t.Fatalf("initialize %d within the limit: %d %s", i+1, rec.Code, rec.Body)
		}
	}
	rec := postAs(h, context.Background(), "agent", init)
	if rec.Code != http.StatusOK || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), `"error"`) {
		t.Fatalf("initialize over the limit: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	for _, want := range []string{`"id":7`, "over its limit of 2 calls per minute", "wait"} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("the refusal lacks %q: %s", want, rec.Body)
		}
	}
	if rec := postAs(h, context.Background(), "other", init); rec.Code != http.StatusOK {
		t.Fatalf("another token was limited too: %d", rec.Code)
	}
	for i := range 5 {
		if rec := postAs(h, context.Background(), "", init); rec.Code != http.StatusOK {
			t.Fatalf("the local token's initialize %d was limited: %d", i+1, rec.Code)
		}
	}
	if len(got) != 8 || got[0] != init {
		t.Fatalf("the SDK got %d bodies (want 8), the first %q", len(got), got[0])
	}
}

// A named token's subscriptions/listen stream (a POST that stays open, MCP
// 2026-07-28) ends when the token is revoked; another token's stays.
func TestRevokingATokenEndsItsListenStream(t *testing.T) {
	store, err := mcptoken.Open(config.Paths{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"stolen", "agent"} {
		if _, _, err := store.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	open := make(chan struct{}, 2)
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open <- struct{}{}
		<-r.Context().Done()
	})
	h := namedTokenMessages(slog.New(slog.DiscardHandler), nil, store, stream)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	listen := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{}}`
	done := func(name string) chan struct{} {
		c := make(chan struct{})
		go func() { postAs(h, ctx, name, listen); close(c) }()
		return c
	}
	badDone, goodDone := done("stolen"), done("agent")
	<-open
	<-open
	if err := store.Revoke("stolen"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-badDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the revoked token's listen stream is still open 5 s after the revocation")
	}
	select {
	case <-goodDone:
		t.Fatal("another token's listen stream ended with the revocation")
	case <-time.After(100 * time.Millisecond):
	}
}
