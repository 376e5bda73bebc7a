// The extension socket's way in: the origin gate, the bound on sockets
// that have not said hello, the hello's checks, and admission.

package broker

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/protocol"
)

type remoteKey struct{}

// WithRemote marks the extension socket request of ctx as one that came
// through the reverse proxy of remote mode (docs/remote.md), from another
// machine: such a profile is never paired without the user's approval,
// whatever Config.AutoApprove says, since anyone who reaches the proxy can
// claim to be the extension (a WebSocket client sets any Origin).
func WithRemote(ctx context.Context) context.Context {
	return context.WithValue(ctx, remoteKey{}, true)
}

func isRemote(ctx context.Context) bool {
	v, _ := ctx.Value(remoteKey{}).(bool)
	return v
}

// ServeHTTP is the extension WebSocket route. The handshake is refused with
// 403, before any upgrade, unless Origin is exactly chrome-extension://<id>
// for an allowed id: a WebSocket has no CORS preflight, so without this gate
// any web page the user visits could drive their browser.
//
// The daemon's first frame is its challenge (protocol.Challenge): proofs
// over the socket's nonces that it holds the named profile's key and its
// pairing key, so the extension can tell it from another program on the
// port before it says anything that matters (protocol 4, proof.go).
//
// A socket then has HelloTimeout to say hello, and at most MaxAwaitingHello
// sockets may be waiting for theirs: past that, the oldest one waiting is
// closed to make room, never the newcomer. A real extension says hello as
// soon as it has checked the challenge, so sockets that hold a slot without
// a word (anyone can open them) cannot keep it out; a socket that names a
// paired profile with a proof of its key over a nonce not seen before
// (protocol.NamedProof) is not counted, up to MaxNamedAwaiting per
// profile, so no flood of silent sockets can close it. (A profile's id
// alone is no credential: a local program can learn it.)
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if !b.origins[origin] {
		b.log.Warn("extension socket refused: origin not allowed",
			"origin", origin, "remote", r.RemoteAddr, "allowed", len(b.origins))
		http.Error(w, "forbidden: this socket only accepts Tether's browser extension", http.StatusForbidden)
		return
	}
	remote := isRemote(r.Context())
	hs := offered(r, remote)
	exempt := b.holdNamed(hs)
	ws, err := b.upgrader.Upgrade(w, r, nil)
	if err != nil {
		b.log.Info("extension socket upgrade failed", "err", err)
		if exempt {
			b.releaseNamed(hs.named)
		}
		return
	}
	if exempt {
		hs.namedProven = true
		b.handshake(ws, hs, remote, func() bool { b.releaseNamed(hs.named); return true })
		return
	}
	b.handshake(ws, hs, remote, b.awaitHello(ws))
}

// MaxNamedAwaiting is the most sockets per paired profile, naming it in
// their handshake, that wait for their hello outside the MaxAwaitingHello
// bound. A real extension has one socket at a time.
const MaxNamedAwaiting = 4

// socketProof is what a socket's proofs cover (protocol.DaemonProof).
type socketProof struct {
	// endpoint is what the extension dialled: the port the socket came in
	// on, or the Host of a socket through remote mode's proxy.
	endpoint string
	// named is the profile id the handshake named ("" when none), and
	// namedProof the protocol.NamedProof that came with it; namedProven
	// when holdNamed accepted it.
	named, namedProof string
	namedProven       bool
	// extNonce is the extension's nonce ("" when none was offered: an
	// extension before protocol 4) and daemonNonce the challenge's.
	extNonce, daemonNonce string
}

// offered reads the subprotocols of r's handshake: the extension's nonce
// and the profile it names, when valid.
func offered(r *http.Request, remote bool) socketProof {
	var hs socketProof
	for _, p := range websocket.Subprotocols(r) {
		if v, ok := strings.CutPrefix(p, protocol.NonceSubprotocolPrefix); ok && protocol.ValidNonce(v) {
			hs.extNonce = v
		} else if v, ok := strings.CutPrefix(p, protocol.ProfileSubprotocolPrefix); ok {
			id, proof, _ := strings.Cut(v, ".")
			if protocol.ValidProfileID(id) {
				hs.named, hs.namedProof = id, proof
			}
		}
	}
	if remote {
		hs.endpoint = protocol.RemoteEndpoint(r.Host)
	} else if a, ok := r.Context().Value(http.LocalAddrContextKey).(*net.TCPAddr); ok {
		hs.endpoint = protocol.LocalEndpoint(a.Port)
	}
	return hs
}

// MaxNamedNonces is how many nonces of valid named proofs the daemon
// remembers, so that each is accepted once; past it, the oldest is
// forgotten. Only holders of a profile's key can add to it.
const MaxNamedNonces = 4096

// holdNamed reports whether the socket hs is kept out of the bound on
// silent sockets: it names a paired profile with a valid
// protocol.NamedProof over a nonce not used before, and fewer than
// MaxNamedAwaiting sockets naming that profile wait for their hello. If
// so, it counts the socket until releaseNamed.
func (b *Broker) holdNamed(hs socketProof) bool {
	if hs.named == "" || hs.namedProof == "" || hs.extNonce == "" {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	rec := b.records[hs.named]
	if rec == nil || b.namedWaiting[hs.named] >= MaxNamedAwaiting {
		return false
	}
	if _, seen := b.namedNonces[hs.extNonce]; seen {
		return false
	}
	key, err := hex.DecodeString(rec.stored.SecretHash)
	if err != nil || !protocol.ProofMatches(hs.namedProof, protocol.NamedProof(key, hs.endpoint, hs.named, hs.extNonce)) {
		return false
	}
	b.namedNonces[hs.extNonce] = struct{}{}
	b.namedOrder = append(b.namedOrder, hs.extNonce)
	if len(b.namedOrder) > MaxNamedNonces {
		delete(b.namedNonces, b.namedOrder[0])
		b.namedOrder = slices.Delete(b.namedOrder, 0, 1)
	}
	b.namedWaiting[hs.named]++
	return true
}

func (b *Broker) releaseNamed(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.namedWaiting[id]--; b.namedWaiting[id] <= 0 {
		delete(b.namedWaiting, id)
	}
}

// challenge is the first frame for a socket that offered a nonce: the
// daemon's nonce and its proofs (protocol.Challenge). It sets
// hs.daemonNonce.
func (b *Broker) challenge(hs *socketProof) protocol.Challenge {
	hs.daemonNonce = protocol.NewNonce()
	ch := protocol.Challenge{Type: protocol.TypeChallenge, Protocol: protocol.Version, Nonce: hs.daemonNonce,
		PairingProof: protocol.DaemonProof(b.cfg.PairingKey, hs.endpoint, hs.named, hs.extNonce, hs.daemonNonce)}
	if hs.named != "" {
		b.mu.Lock()
		rec := b.records[hs.named]
		var key []byte
		if rec != nil {
			key, _ = hex.DecodeString(rec.stored.SecretHash)
		}
		b.mu.Unlock()
		if len(key) > 0 {
			ch.ProfileProof = protocol.DaemonProof(key, hs.endpoint, hs.named, hs.extNonce, hs.daemonNonce)
		}
	}
	return ch
}

// proves reports whether h carries a valid proof of the profile key
// stored as hash (hex SHA-256 of the secret) for the socket hs.
func proves(h protocol.Hello, hs socketProof, hash string) bool {
	key, err := hex.DecodeString(hash)
	if err != nil || len(key) == 0 || hs.extNonce == "" || hs.daemonNonce == "" || h.Proof == "" {
		return false
	}
	return protocol.ProofMatches(h.Proof, protocol.ExtensionProof(key, hs.endpoint, h.ProfileID, hs.extNonce, hs.daemonNonce))
}

// silentSocket is a socket that has not said hello yet.
type silentSocket struct {
	ws *websocket.Conn
	// evicted is set (under Broker.mu) when it was closed to make room.
	evicted bool
}

// awaitHello counts ws among the sockets waiting for their hello, closing
// the oldest of them first if MaxAwaitingHello are. The returned function
// takes ws off that list once its first frame is read (or it failed); it
// reports false if ws was closed to make room meanwhile.
func (b *Broker) awaitHello(ws *websocket.Conn) func() bool {
	s := &silentSocket{ws: ws}
	var oldest *silentSocket
	b.mu.Lock()
	if len(b.silent) >= MaxAwaitingHello {
		oldest = b.silent[0]
		oldest.evicted = true
		b.silent = slices.Delete(b.silent, 0, 1)
	}
	b.silent = append(b.silent, s)
	b.mu.Unlock()
	if oldest != nil {
		b.log.Debug("extension socket closed to make room: the oldest of too many sockets waiting for hello", "limit", MaxAwaitingHello)
		_ = oldest.ws.Close()
	}
	return func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		if i := slices.Index(b.silent, s); i >= 0 {
			b.silent = slices.Delete(b.silent, i, i+1)
		}
		return !s.evicted
	}
}

// handshake sends the challenge (when the socket offered a nonce), reads
// the hello, admits the profile (or holds it for pairing, or refuses it),
// then runs the connection until it closes. hs is what the socket's proofs
// cover (offered); heard takes the socket off the list of silent ones (see
// awaitHello, holdNamed).
func (b *Broker) handshake(ws *websocket.Conn, hs socketProof, remote bool, heard func() bool) {
	ws.SetReadLimit(MaxUnpairedFrame)
	_ = ws.SetReadDeadline(time.Now().Add(b.cfg.HelloTimeout))
	if hs.extNonce != "" {
		_ = ws.SetWriteDeadline(time.Now().Add(b.cfg.WriteTimeout))
		if err := ws.WriteJSON(b.challenge(&hs)); err != nil {
			heard()
			b.log.Info("extension socket dropped before its challenge", "err", err)
			_ = ws.Close()
			return
		}
	}
	_, data, err := ws.ReadMessage()
	if !heard() {
		_ = ws.Close()
		return
	}
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
	// The version first, from whatever the frame holds: an extension of
	// another release is told so, whatever else its hello carries.
	var peek struct {
		Type      protocol.FrameType `json:"type"`
		Protocol  int                `json:"protocol"`
		ProfileID string             `json:"profileId"`
		Label     string             `json:"label"`
	}
	if json.Unmarshal(data, &peek) == nil && peek.Type == protocol.TypeHello && peek.Protocol != protocol.Version {
		if peek.Protocol == legacyProtocol && b.updateLegacy(ws, data) {
			return
		}
		b.mu.Lock()
		b.noteRefusalLocked(peek.ProfileID, peek.Label, protocol.CodeProtocolMismatch, "", peek.Protocol)
		b.mu.Unlock()
		refuse(protocol.CodeProtocolMismatch, fmt.Sprintf(
			"the extension speaks protocol %d but this Tether daemon (version %s) speaks protocol %d. "+
				"Update both to the same release; for an unpacked extension, Chrome does not reload changed files by itself: "+
				"open chrome://extensions and press the reload button on Tether.",
			peek.Protocol, b.cfg.DaemonVersion, protocol.Version))
		return
	}
	hello, err := protocol.DecodeHello(data)
	if err != nil {
		refuse(protocol.CodeBadRequest, err.Error())
		return
	}
	if hs.extNonce == "" {
		refuse(protocol.CodeBadRequest, "the socket offered no nonce (subprotocol "+protocol.NonceSubprotocolPrefix+"<64 hex digits>), so Tether cannot prove itself to it; protocol "+fmt.Sprint(protocol.Version)+" needs one")
		return
	}
	if hs.named != "" && hs.named != hello.ProfileID {
		refuse(protocol.CodeBadRequest, "the hello's profileId is not the profile the socket named in its handshake")
		return
	}
	c := newConn(ws, &b.cfg, b.log, hello)
	c.proof = hs
	c.remote = remote
	c.onTabs = b.setTabs
	c.onDownload = b.download
	adm := b.admit(c)
	if adm.refuseCode != "" {
		refuse(adm.refuseCode, adm.refuseMsg)
		return
	}
	if adm.replaced != nil {
		b.log.Info("extension reconnected, replacing its previous socket", "profile", shortID(hello.ProfileID))
		adm.replaced.close()
	}
	for _, d := range adm.dropped {
		b.log.Info("browser profile waiting for approval pushed out to make room; its code is kept", "profile", shortID(d.hello.ProfileID), "limit", MaxPendingPairings)
		go letGo(d, protocol.CodePairingDisplaced, fmt.Sprintf("More than %d browsers asked Tether for approval at once (any program that reaches Tether can ask), "+
			"so Tether made room. This browser keeps its code, and the extension asks again within a few seconds; "+
			"approving the code in Tether meanwhile still counts: it then pairs when it reconnects.", MaxPendingPairings))
	}
	go c.writeLoop()
	if adm.ack != nil { // already queued by admit
		b.log.Info("extension connected", "profile", shortID(hello.ProfileID), "label", adm.ack.AssignedLabel,
			"slug", adm.ack.AssignedSlug, "ext_version", hello.ExtVersion, "tabs", len(hello.Tabs), "named_proof", hs.namedProven)
	} else { // the pairing frame too
		b.log.Warn("new browser profile waiting for approval", "profile", shortID(hello.ProfileID),
			"label", cleanLabel(hello.Label), "code", adm.code, "approve_with", "tether profiles approve "+adm.code)
	}
	c.readLoop()
	b.detach(c)
}

// legacyProtocol is the protocol of the extensions before the daemon
// proved itself (0.3.x): they send the secret itself in their hello.
const legacyProtocol = 3

// updateLegacy lets a paired extension of legacyProtocol update itself: when
// its hello carries its profile's secret and Config.CheckExtension rewrites
// the folder it was loaded from, the daemon acks it (that release reloads
// only once acked) with a new secret, sends the reload frame, and closes
// the socket once the extension has gone (15 s at most); the extension
// comes back speaking protocol 4. The old secret, which that release sent
// to whatever listened on the port, stops working (should the ack not go
// out, it is kept). It sends no request. It reports false, having sent
// nothing, when the hello is not such a one: the caller refuses it
// (protocol_mismatch, which tells the user to reload by hand).
func (b *Broker) updateLegacy(ws *websocket.Conn, data []byte) bool {
	var old struct {
		protocol.Hello
		Secret string `json:"secret"`
	}
	if json.Unmarshal(data, &old) != nil || !protocol.ValidProfileID(old.ProfileID) || old.Secret == "" || b.cfg.CheckExtension == nil {
		return false
	}
	b.mu.Lock()
	rec := b.records[old.ProfileID]
	var ack protocol.HelloAck
	ok := rec != nil && subtle.ConstantTimeCompare([]byte(hashSecret(old.Secret)), []byte(rec.stored.SecretHash)) == 1
	if ok {
		ack = protocol.HelloAck{Type: protocol.TypeHelloAck, DaemonVersion: b.cfg.DaemonVersion, AssignedLabel: rec.stored.Label, AssignedSlug: rec.stored.Slug}
	}
	b.mu.Unlock()
	if !ok {
		return false
	}
	old.Hello.Protocol = legacyProtocol
	reload, _ := b.cfg.CheckExtension(old.Hello)
	if reload == nil {
		return false
	}
	b.log.Info("extension of an older protocol updated: it reloads itself with a new secret", "profile", shortID(old.ProfileID), "ext_version", old.ExtVersion, "protocol", legacyProtocol)
	oldHash := b.rotateSecret(old.ProfileID, &ack)
	_ = ws.SetWriteDeadline(time.Now().Add(b.cfg.WriteTimeout))
	if err := ws.WriteJSON(ack); err != nil {
		b.restoreSecret(old.ProfileID, oldHash)
	} else if ws.WriteJSON(*reload) == nil {
		_ = ws.SetReadDeadline(time.Now().Add(15 * time.Second))
		for {
			if _, _, err := ws.ReadMessage(); err != nil {
				break
			}
		}
	}
	_ = ws.Close()
	return true
}

// rotateSecret gives profile id a new secret, set in ack, and returns the
// hash it replaced ("" when the profile is gone).
func (b *Broker) rotateSecret(id string, ack *protocol.HelloAck) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	rec := b.records[id]
	if rec == nil {
		return ""
	}
	old := rec.stored.SecretHash
	ack.Secret = newSecret()
	rec.stored.SecretHash = hashSecret(ack.Secret)
	_ = b.saveLocked()
	return old
}

// restoreSecret puts hash back as profile id's secret hash (an ack with a
// new secret that did not go out).
func (b *Broker) restoreSecret(id, hash string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rec := b.records[id]; rec != nil && hash != "" {
		rec.stored.SecretHash = hash
		_ = b.saveLocked()
	}
}

// admission is admit's decision: refuse, accept (ack set) or hold for
// pairing (code set). replaced is the profile's previous socket, to close;
// dropped are waiting sockets pushed out of a full list, to let go.
type admission struct {
	refuseCode protocol.ErrorCode
	refuseMsg  string
	ack        *protocol.HelloAck
	code       string
	replaced   *conn
	dropped    []*conn
}

// admit decides about c's hello, in this order: a known id must present its
// secret (and is then admitted whatever the counts); an id the user
// approved or denied while it was out of the waiting list is paired or
// refused (pairing_denied) at once; a new id must not
// collide with another's (collisionLocked); fewer than MaxProfiles may be
// connected; then it is paired at once (AutoApprove, for a socket that did
// not come through the reverse proxy: c.remote) or held for approval.
func (b *Broker) admit(c *conn) admission {
	h := c.hello
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return admission{refuseCode: protocol.CodeInternal, refuseMsg: ErrClosed.Error()}
	}
	now := b.cfg.Now()
	if rec := b.records[h.ProfileID]; rec != nil {
		if !proves(h, c.proof, rec.stored.SecretHash) {
			b.noteRefusalLocked(h.ProfileID, h.Label, protocol.CodeUnauthorized, rec.stored.Slug, 0)
			return admission{refuseCode: protocol.CodeUnauthorized, refuseMsg: fmt.Sprintf(
				"this browser claims to be the paired profile %q but did not prove it holds its pairing secret, so it was refused. "+
					"If you reinstalled the extension or cleared its data, run `tether profiles forget %s`, then press Reconnect here (or restart the browser) to pair anew.",
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
	b.pruneLocked(now)
	if d := b.decided[h.ProfileID]; d != nil {
		// The user answered while this profile was out of the waiting list
		// (see Approve): only its extension knows this full id.
		if !d.approved {
			delete(b.decided, h.ProfileID)
			b.noteRefusalLocked(h.ProfileID, h.Label, protocol.CodePairingDenied, "", 0)
			return admission{refuseCode: protocol.CodePairingDenied, refuseMsg: deniedMessage}
		}
		if n := b.connectedLocked(); n >= MaxProfiles {
			return admission{refuseCode: protocol.CodeTooManyProfiles, refuseMsg: fmt.Sprintf(
				"You approved this browser in Tether, but %d browser profiles are connected, the maximum; close Chrome in a profile you do not need, then this one connects by itself", n)}
		}
		delete(b.decided, h.ProfileID)
		var adm admission
		if old := b.pending[h.ProfileID]; old != nil {
			old.expiry.Stop()
			delete(b.pending, h.ProfileID)
			adm.replaced = old.conn
		}
		rec, secret := b.createLocked(h, now)
		adm.ack = b.ackLocked(rec, secret)
		b.attachLocked(rec, c, now, adm.ack)
		b.log.Info("browser profile approved earlier paired on reconnect", "profile", shortID(h.ProfileID), "code", d.code, "slug", rec.stored.Slug)
		return adm
	}
	if b.pending[h.ProfileID] == nil {
		if why := b.collisionLocked(h.ProfileID); why != "" {
			return admission{refuseCode: protocol.CodeBadRequest, refuseMsg: why}
		}
	}
	if n := b.connectedLocked(); n >= MaxProfiles {
		return admission{refuseCode: protocol.CodeTooManyProfiles, refuseMsg: fmt.Sprintf(
			"Tether already has %d browser profiles connected, and a new one may join only while fewer than %d are; close Chrome in a profile you do not need, then this one connects by itself", n, MaxProfiles)}
	}
	if b.cfg.AutoApprove && !c.remote {
		rec, secret := b.createLocked(h, now)
		ack := b.ackLocked(rec, secret)
		b.attachLocked(rec, c, now, ack)
		return admission{ack: ack}
	}
	replaced, dropped := b.holdLocked(c, now)
	return admission{code: b.pending[h.ProfileID].code, replaced: replaced, dropped: dropped}
}

// checkExtension runs Config.CheckExtension for c's accepted hello (at
// once, or when the user approves the new profile; attachLocked): it
// records the note on c's profile while c is its socket, and sends the
// reload frame.
func (b *Broker) checkExtension(c *conn) {
	reload, note := b.cfg.CheckExtension(c.hello)
	if note != "" {
		b.log.Info("extension outdated", "profile", shortID(c.hello.ProfileID), "ext_version", c.hello.ExtVersion, "note", note)
		b.mu.Lock()
		if rec := b.records[c.hello.ProfileID]; rec != nil && rec.conn == c {
			rec.extOutdated = note
			b.notifyLocked()
		}
		b.mu.Unlock()
	}
	if reload != nil {
		if err := c.sendNow(*reload); err != nil {
			b.log.Info("the extension left before it could be told to reload", "profile", shortID(c.hello.ProfileID), "err", err)
		}
	}
}
