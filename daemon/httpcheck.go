package daemon

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/localapi"
)

// remotePaths are the only routes served to a remote mode Host: the
// extension's WebSocket, MCP and /health (docs/remote.md). The local API
// and everything else stay loopback-only.
var remotePaths = []string{PathExtension, PathMCP, PathHealth}

// remoteKey marks a request's context as one forwarded by the reverse
// proxy for a remote mode Host; its value is the Host's name.
type remoteKey struct{}

// remoteHost is the remote mode Host a request came for, "" for a local
// request (one from this machine, naming a loopback Host).
func remoteHost(ctx context.Context) string {
	h, _ := ctx.Value(remoteKey{}).(string)
	return h
}

// hostGate checks the Host header of every request outside the local API
// (which checks its own, localapi's check) before anything else:
//
//   - a loopback Host (127.0.0.1, localhost, [::1]) is a local request,
//     unless it carries a proxy's header (X-Forwarded-*, Forwarded): then
//     403, since a proxy in front of Tether must pass the public Host;
//   - a Host whose name is in settings.json's remote.hosts (remote mode) is
//     accepted on /extension, /mcp and /health only, only from a loopback
//     peer (the reverse proxy on this machine: X-Forwarded-* headers are
//     trusted from nobody else) and only with X-Forwarded-Proto: https
//     (Tether never serves a remote client plain HTTP); its context is
//     marked (remoteHost);
//   - any other Host: 403 (DNS rebinding defence; MCP spec, "Security
//     Warning" under Streamable HTTP transport).
//
// remote lists the remote mode Host names, lower-cased; empty: remote mode
// is off.
func hostGate(log *slog.Logger, remote []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if localapi.IsLoopbackHost(r.Host) {
			if h := localapi.ForwardedHeader(r.Header); h != "" {
				log.Warn("request refused: forwarded by a proxy with a loopback Host", "header", h, "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
				http.Error(w, "forbidden: this request came through a proxy ("+h+" is set) but names a loopback Host; "+
					"the proxy must pass the public Host name listed in settings.json's remote.hosts (Caddy does by default; nginx: proxy_set_header Host $host), see docs/remote.md",
					http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		name := hostName(r.Host)
		if len(remote) == 0 || !slices.Contains(remote, name) {
			log.Warn("request refused: Host is not loopback nor a remote mode host", "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
			msg := "forbidden: Host must be 127.0.0.1 or localhost"
			if len(remote) == 0 {
				msg += " (to serve " + name + " through a TLS reverse proxy, list it in settings.json's remote.hosts and restart Tether: docs/remote.md)"
			} else {
				msg += " or one of settings.json's remote.hosts (" + strings.Join(remote, ", ") + ")"
			}
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		if !slices.Contains(remotePaths, r.URL.Path) {
			log.Warn("request refused: path not served to a remote Host", "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
			http.Error(w, "forbidden: "+r.URL.Path+" is served only on 127.0.0.1; a remote host gets /extension, /mcp and /health alone (the local API never leaves this machine)", http.StatusForbidden)
			return
		}
		if !loopbackPeer(r.RemoteAddr) {
			log.Warn("request refused: remote Host from a peer that is not the local reverse proxy", "host", r.Host, "path", r.URL.Path, "remote", r.RemoteAddr)
			http.Error(w, "forbidden: "+name+" is accepted only through the TLS reverse proxy on this machine (a loopback peer), see docs/remote.md", http.StatusForbidden)
			return
		}
		if proto := r.Header.Get("X-Forwarded-Proto"); !strings.EqualFold(proto, "https") {
			log.Warn("request refused: remote Host without X-Forwarded-Proto: https", "host", r.Host, "proto", proto, "path", r.URL.Path)
			http.Error(w, "forbidden: "+name+" must reach Tether over HTTPS: the reverse proxy must terminate TLS and send X-Forwarded-Proto: https (got "+quoteOrNone(proto)+"), see docs/remote.md",
				http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), remoteKey{}, name)))
	})
}

// remoteExtension marks an extension socket request that hostGate let in
// for a remote mode Host (broker.WithRemote): the broker never pairs such
// a profile without the operator's approval, --auto-approve-profiles or
// not (a client on the internet can forge the extension's Origin).
func remoteExtension(b http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if remoteHost(r.Context()) != "" {
			r = r.WithContext(broker.WithRemote(r.Context()))
		}
		b.ServeHTTP(w, r)
	})
}

// hostName is a Host header's name, lower-cased, without port or brackets.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

// loopbackPeer reports whether a RemoteAddr (ip:port) is a loopback address.
func loopbackPeer(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func quoteOrNone(s string) string {
	if s == "" {
		return "none"
	}
	return `"` + s + `"`
}

// NamedTokens looks up an MCP client's named token (tether token add).
type NamedTokens interface {
	// Lookup returns the name of the token whose secret is secret, and
	// false when no token has it (revoked or never issued).
	Lookup(secret string) (name string, ok bool)
}

// revocable is a NamedTokens that tells when a token is revoked
// (mcptoken.Store.Revoked).
type revocable interface {
	Revoked(name string) <-chan struct{}
}

// endOnRevoke returns ctx, cancelled when the named token name is revoked:
// an event stream outlives the token check of the request that opened it.
// The caller calls stop when the stream ends.
func endOnRevoke(ctx context.Context, log *slog.Logger, rv revocable, name string) (_ context.Context, stop context.CancelFunc) {
	ctx, stop = context.WithCancel(ctx)
	revoked := rv.Revoked(name)
	go func() {
		select {
		case <-revoked:
			log.Info("MCP event stream ended: its token was revoked", "token", name)
			stop()
		case <-ctx.Done():
		}
	}()
	return ctx, stop
}

// tokenKey carries the name of the named token a request authenticated
// with ("" for the local MCP token).
type tokenKey struct{}

// TokenName is the named token an MCP request authenticated with, "" when
// it used the local MCP token.
func TokenName(ctx context.Context) string {
	n, _ := ctx.Value(tokenKey{}).(string)
	return n
}

// apiGuard protects the MCP endpoint: a request that carries an Origin
// header comes from a web page and is refused with 403 (MCP clients are not
// browsers). A local request (hostGate) needs the local MCP token or a
// named token; a remote one a named token alone: the local token (also
// refused on the local API's control routes) is 403 there, so that a
// machine's own secret never travels. Anything else gets 401. An event
// stream (GET) opened with a named token ends when that token is revoked.
func apiGuard(log *slog.Logger, token string, named NamedTokens, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refuseOrigin(log, w, r) {
			return
		}
		auth := r.Header.Get("Authorization")
		remote := remoteHost(r.Context())
		if subtle.ConstantTimeCompare([]byte(auth), want) == 1 {
			if remote != "" {
				// The machine's own secret came from another machine: say
				// from where (hostGate trusts X-Forwarded-For from the
				// loopback proxy alone).
				log.Warn("request refused: the local MCP token over the remote proxy; it has leaked, run `tether token rotate`", "host", remote, "path", r.URL.Path,
					"forwarded_for", r.Header.Get("X-Forwarded-For"))
				http.Error(w, "forbidden: the local MCP token works only on this machine (127.0.0.1); a remote MCP client needs a named token: run `tether token add NAME` on the server and send Authorization: Bearer <that token>", http.StatusForbidden)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if secret, ok := strings.CutPrefix(auth, "Bearer "); ok && named != nil && secret != "" {
			if name, ok := named.Lookup(secret); ok {
				ctx := context.WithValue(r.Context(), tokenKey{}, name)
				if rv, ok := named.(revocable); ok && r.Method == http.MethodGet {
					// An event stream outlives the check above: it ends
					// when its token is revoked. (A POST's call is left
					// to finish: cutting an action midway would leave
					// its outcome unknown.)
					var stop context.CancelFunc
					ctx, stop = endOnRevoke(ctx, log, rv, name)
					defer stop()
				}
				next.ServeHTTP(w, r.WithContext(ctx))
				return
			}
		}
		// X-Forwarded-For is trusted here: hostGate let a remote request
		// through only from the loopback proxy.
		log.Warn("request refused: missing, wrong or revoked bearer token", "path", r.URL.Path, "remote", r.RemoteAddr, "host", r.Host,
			"forwarded_for", r.Header.Get("X-Forwarded-For"))
		w.Header().Set("WWW-Authenticate", `Bearer realm="tether"`)
		msg := "unauthorized: send Authorization: Bearer <token> (the token is in the file `token` in Tether's config dir; `tether mcp` does this for you)"
		if remote != "" {
			msg = "unauthorized: send Authorization: Bearer <named token>; this token is unknown or was revoked (`tether token list` on the server shows the names, `tether token add NAME` issues one)"
		}
		http.Error(w, msg, http.StatusUnauthorized)
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
