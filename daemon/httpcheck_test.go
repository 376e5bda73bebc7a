package daemon

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestAPIGuard(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := loopbackOnly(slog.New(slog.DiscardHandler), apiGuard(slog.New(slog.DiscardHandler), "secret", ok))
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
