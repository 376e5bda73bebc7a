package daemon

import (
	"crypto/subtle"
	"log/slog"
	"net/http"

	"github.com/tether-browser/tether/localapi"
)

// loopbackOnly refuses, with 403, any request whose Host header is not a
// loopback name (DNS rebinding defence; MCP spec, "Security Warning" under
// Streamable HTTP transport).
func loopbackOnly(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !localapi.IsLoopbackHost(r.Host) {
			log.Warn("request refused: Host is not loopback", "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
			http.Error(w, "forbidden: Host must be 127.0.0.1 or localhost", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// apiGuard protects the MCP endpoint: a request that carries an Origin
// header comes from a web page and is refused with 403 (MCP clients are not
// browsers); a request without the MCP bearer token (the control token
// included) gets 401.
func apiGuard(log *slog.Logger, token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuseOrigin(log, w, r) {
			return
		}
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			log.Warn("request refused: missing or wrong bearer token", "path", r.URL.Path, "remote", r.RemoteAddr)
			w.Header().Set("WWW-Authenticate", `Bearer realm="tether"`)
			http.Error(w, "unauthorized: send Authorization: Bearer <token> (the token is in the file `token` in Tether's config dir; `tether mcp` does this for you)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuseOrigin answers 403 to a request carrying an Origin header (a web
// page's) and reports whether it did.
func refuseOrigin(log *slog.Logger, w http.ResponseWriter, r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return false
	}
	log.Warn("request refused: browser origin on the MCP endpoint", "origin", o, "path", r.URL.Path)
	http.Error(w, "forbidden: requests from web pages are refused", http.StatusForbidden)
	return true
}
