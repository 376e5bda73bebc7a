package localapi

import (
	"crypto/subtle"
	"net"
	"net/http"
	"strconv"
	"strings"
)

// IsLoopbackHost reports whether a Host header names the loopback
// interface: localhost, 127.0.0.0/8 or ::1, with or without a port.
// Anything else may be a DNS-rebinding attack from a web page.
func IsLoopbackHost(host string) bool {
	h, _ := splitHost(host)
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// splitHost splits a Host header into its name (brackets removed) and port
// ("" when none).
func splitHost(host string) (name, port string) {
	if h, p, err := net.SplitHostPort(host); err == nil {
		return strings.Trim(h, "[]"), p
	}
	return strings.Trim(host, "[]"), ""
}

// forwardedHeaders are the headers a reverse proxy adds (RFC 7239's
// Forwarded and the de facto X-Forwarded-*).
var forwardedHeaders = []string{"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded", "X-Real-Ip"}

// ForwardedHeader names the first reverse-proxy header h carries, "" when
// none: such a request came through a proxy, not straight from a process
// on this machine.
func ForwardedHeader(h http.Header) string {
	for _, k := range forwardedHeaders {
		if _, ok := h[k]; ok {
			return k
		}
	}
	return ""
}

// check refuses, before any routing, what the local API must not serve,
// and reports whether the request may go on:
//
//   - a request a reverse proxy forwarded (X-Forwarded-For or another
//     proxy header, ForwardedHeader): 403; the local API is never remote,
//     whatever settings.json's remote.hosts says (docs/remote.md);
//   - a Host that is not loopback, or names another port than the
//     daemon's: 421 (DNS rebinding);
//   - any Origin header: 403 (a web page; the API's clients are not
//     browsers);
//   - the MCP token: 403 (AI apps hold it; control actions — approving
//     profiles and held calls, resuming — stay the user's);
//   - no token or another one: 401.
func (s *Server) check(w http.ResponseWriter, r *http.Request) bool {
	log := s.log.With("path", r.URL.Path, "remote", r.RemoteAddr)
	name, port := splitHost(r.Host)
	if h := ForwardedHeader(r.Header); h != "" {
		log.Warn("local API request refused: forwarded by a reverse proxy", "header", h, "host", r.Host)
		writeError(w, http.StatusForbidden, "forbidden: the local API is never served through a proxy ("+h+" is set); run tether commands on the machine Tether runs on, e.g. over SSH (docs/remote.md)")
		return false
	}
	if !IsLoopbackHost(r.Host) || port != "" && s.cfg.Port != 0 && port != strconv.Itoa(s.cfg.Port) {
		log.Warn("local API request refused: Host is not this daemon's loopback address", "host", r.Host, "name", name)
		writeError(w, http.StatusMisdirectedRequest, "misdirected: the local API answers only on 127.0.0.1, localhost or [::1] at the daemon's port")
		return false
	}
	if o := r.Header.Get("Origin"); o != "" {
		log.Warn("local API request refused: browser origin", "origin", o)
		writeError(w, http.StatusForbidden, "forbidden: requests from web pages are refused")
		return false
	}
	got := []byte(r.Header.Get("Authorization"))
	if s.cfg.ControlToken != "" && subtle.ConstantTimeCompare(got, []byte("Bearer "+s.cfg.ControlToken)) == 1 {
		return true
	}
	if s.cfg.MCPToken != "" && subtle.ConstantTimeCompare(got, []byte("Bearer "+s.cfg.MCPToken)) == 1 {
		log.Warn("local API request refused: the MCP token on a control route")
		writeError(w, http.StatusForbidden, "forbidden: the MCP token cannot be used for control actions; send the control token (the file `control-token` in Tether's config dir; the tether command does this for you)")
		return false
	}
	log.Warn("local API request refused: missing or wrong control token")
	w.Header().Set("WWW-Authenticate", `Bearer realm="tether-control"`)
	writeError(w, http.StatusUnauthorized, "unauthorized: send Authorization: Bearer <control token> (the file `control-token` in Tether's config dir; `tether token rotate` replaces it, so read it again)")
	return false
}
