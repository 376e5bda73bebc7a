// The extension socket's way in: the origin gate, the bound on sockets
// that have not said hello, the hello's checks, and admission.

package broker

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/protocol"
)

// ServeHTTP is the extension WebSocket route. The handshake is refused with
// 403, before any upgrade, unless Origin is exactly chrome-extension://<id>
// for an allowed id: a WebSocket has no CORS preflight, so without this gate
// any web page the user visits could drive their browser. At most
// MaxAwaitingHello sockets may be waiting for their hello (503 past that).
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if !b.origins[origin] {
		b.log.Warn("extension socket refused: origin not allowed",
			"origin", origin, "remote", r.RemoteAddr, "allowed", len(b.origins))
		http.Error(w, "forbidden: this socket only accepts Tether's browser extension", http.StatusForbidden)
		return
	}
	b.mu.Lock()
	if b.awaitingHello >= MaxAwaitingHello {
		b.mu.Unlock()
		b.log.Warn("extension socket refused: too many sockets waiting for hello", "limit", MaxAwaitingHello)
		http.Error(w, "too many connections waiting for hello; retry later", http.StatusServiceUnavailable)
		return
	}
	b.awaitingHello++
	b.mu.Unlock()
	helloDone := sync.OnceFunc(func() {
		b.mu.Lock()
		b.awaitingHello--
		b.mu.Unlock()
	})
	defer helloDone()
	ws, err := b.upgrader.Upgrade(w, r, nil)
	if err != nil {
		b.log.Info("extension socket upgrade failed", "err", err)
		return
	}
	b.handshake(ws, helloDone)
}

// handshake reads the hello, admits the profile (or holds it for pairing, or
// refuses it), then runs the connection until it closes.
func (b *Broker) handshake(ws *websocket.Conn, helloDone func()) {
	ws.SetReadLimit(1 << 20)
	_ = ws.SetReadDeadline(time.Now().Add(b.cfg.HelloTimeout))
	_, data, err := ws.ReadMessage()
	helloDone()
	if err != nil {
		b.log.Info("extension socket dropped before hello", "err", err)
		_ = ws.Close()
		return
	}
	refuse := func(code protocol.ErrorCode, msg string) {
		b.log.Warn("extension hello refused", "code", string(code), "reason", msg)
		_ = ws.SetWriteDeadline(time.Now().Add(b.cfg.WriteTimeout))
		_ = ws.WriteJSON(protocol.Refused{Type: protocol.TypeRefused, Code: code, Message: msg})
		_ = ws.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.ClosePolicyViolation, string(code)), time.Now().Add(time.Second))
		_ = ws.Close()
	}
	var hello protocol.Hello
	if err := json.Unmarshal(data, &hello); err != nil || hello.Type != protocol.TypeHello {
		refuse(protocol.CodeBadRequest, "the first frame must be a hello")
		return
	}
	if hello.Protocol != protocol.Version {
		refuse(protocol.CodeProtocolMismatch, fmt.Sprintf(
			"the extension speaks protocol %d but this Tether daemon (version %s) speaks protocol %d. "+
				"Update both to the same release; for an unpacked extension, Chrome does not reload changed files by itself: "+
				"open chrome://extensions and press the reload button on Tether.",
			hello.Protocol, b.cfg.DaemonVersion, protocol.Version))
		return
	}
	if hello.ProfileID == "" || len(hello.ProfileID) > 128 {
		refuse(protocol.CodeBadRequest, "hello needs a profileId of 1 to 128 characters")
		return
	}
	c := newConn(ws, &b.cfg, b.log, hello)
	c.onTabs = b.setTabs
	adm := b.admit(c)
	if adm.refuseCode != "" {
		refuse(adm.refuseCode, adm.refuseMsg)
		return
	}
	if adm.replaced != nil {
		b.log.Info("extension reconnected, replacing its previous socket", "profile", shortID(hello.ProfileID))
		adm.replaced.close()
	}
	go c.writeLoop()
	if adm.ack != nil { // already queued by admit
		b.log.Info("extension connected", "profile", shortID(hello.ProfileID), "label", adm.ack.AssignedLabel,
			"slug", adm.ack.AssignedSlug, "ext_version", hello.ExtVersion, "tabs", len(hello.Tabs))
	} else {
		_ = c.sendNow(protocol.Pairing{Type: protocol.TypePairing, Message: adm.pairingMsg})
		b.log.Warn("new browser profile waiting for approval", "profile", shortID(hello.ProfileID),
			"label", hello.Label, "approve_with", "tether profiles approve "+shortID(hello.ProfileID))
	}
	c.readLoop()
	b.detach(c)
}

// admission is admit's decision: refuse, accept (ack set) or hold for pairing.
type admission struct {
	refuseCode protocol.ErrorCode
	refuseMsg  string
	ack        *protocol.HelloAck
	pairingMsg string
	replaced   *conn
}

func (b *Broker) admit(c *conn) admission {
	h := c.hello
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return admission{refuseCode: protocol.CodeInternal, refuseMsg: ErrClosed.Error()}
	}
	now := b.cfg.Now()
	if rec := b.records[h.ProfileID]; rec != nil {
		if !secretMatches(h.Secret, rec.stored.SecretHash) {
			return admission{refuseCode: protocol.CodeUnauthorized, refuseMsg: fmt.Sprintf(
				"this browser claims to be the paired profile %q but did not present its pairing secret, so it was refused. "+
					"If you reinstalled the extension or cleared its data, run `tether profiles forget %s` and connect again to pair anew.",
				rec.stored.Slug, rec.stored.Slug)}
		}
		adm := admission{replaced: rec.conn}
		label := cleanLabel(h.Label)
		if label != rec.stored.Label {
			rec.stored.Label = label
			rec.stored.Slug = b.uniqueSlugLocked(Slugify(label), h.ProfileID)
		}
		adm.ack = b.ackLocked(rec, "")
		b.attachLocked(rec, c, now, adm.ack)
		return adm
	}
	if n := b.connectedLocked(); n >= MaxProfiles {
		return admission{refuseCode: protocol.CodeTooManyProfiles, refuseMsg: fmt.Sprintf(
			"Tether already has %d browser profiles connected, and a new one may join only while fewer than %d are; close Chrome in a profile you do not need, then this one connects by itself", n, MaxProfiles)}
	}
	if b.cfg.AutoApprove {
		rec, secret := b.createLocked(h, now)
		ack := b.ackLocked(rec, secret)
		b.attachLocked(rec, c, now, ack)
		return admission{ack: ack}
	}
	if len(b.pending) >= MaxPendingPairings && b.pending[h.ProfileID] == nil {
		return admission{refuseCode: protocol.CodeTooManyProfiles, refuseMsg: fmt.Sprintf(
			"%d browser profiles are already waiting for approval in Tether; approve or deny them first", len(b.pending))}
	}
	adm := admission{pairingMsg: fmt.Sprintf(
		"Waiting for approval in Tether. Approve this browser in the Tether window, or run: tether profiles approve %s", shortID(h.ProfileID))}
	if old := b.pending[h.ProfileID]; old != nil {
		adm.replaced = old.conn
	}
	b.pending[h.ProfileID] = &pendingPairing{conn: c, since: now}
	b.notifyLocked()
	return adm
}
