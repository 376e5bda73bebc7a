// Pairing: new profiles waiting for the user's approval, their pairing
// codes and expiry, and approving or denying them.
//
// Any local process can open the extension socket with the extension's
// Origin and claim to be a new profile, so the user must be able to tell
// the real browser's entry from a forged one. Each waiting socket gets a
// code (unguessable: see codeFor) that the daemon sends only to that socket; the extension's
// popup shows it, and the window, the tray and `tether profiles` show it
// next to the entry. Approval names the code or the full id, never a
// prefix, so an entry whose id is a prefix of another's cannot be approved
// in its place (and such hellos are refused anyway, see collisionLocked).
//
// A flood of forged hellos can push the real entry out of the waiting list
// (MaxPendingPairings) again and again, so the user must not have to catch
// it there. An id's code is derived from it with a key only the daemon
// knows (codeFor), so a profile gets the same code at every hello however
// many others came in between, and the popup shows one code throughout.
// An entry pushed out, or whose socket went away, is remembered (its code,
// label and first hello) until PairingTTL after that first hello, at most
// MaxRememberedPairings of them, least recently seen forgotten first;
// approving
// or denying that code (or full id) works while the entry is remembered and
// is kept as a decision (at most MaxDecisions, for PairingTTL) that the
// id's next hello meets: paired at once, or refused. Only the real
// extension knows its full id, and a code is sent only to its own socket,
// so a forger can neither learn the code nor collect the approval.

package broker

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// PendingProfile is a new profile waiting for the user's approval.
type PendingProfile struct {
	// ID is the full profile id the extension claims (not verified).
	ID string
	// Label is the cleaned label it claims.
	Label string
	// Code is the pairing code sent to its socket (CodeLength characters of
	// CodeAlphabet); the extension's popup shows the same code.
	Code string
	// Since is when it said hello; Expires is Since + PairingTTL.
	Since, Expires time.Time
}

// CodeAlphabet is the pairing code's alphabet: digits and capitals without
// the look-alikes 0/O and 1/I/L.
const CodeAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"

// CodeLength is the number of characters of a pairing code (31^6 ≈ 8.9e8
// codes).
const CodeLength = 6

// MaxRememberedPairings is the most entries pushed out of the waiting list
// (or whose socket went away) whose code is remembered; past it, the least
// recently seen is forgotten.
const MaxRememberedPairings = 256

// MaxDecisions is the most approvals and denials of remembered entries kept
// for their profile's next hello; past it, the oldest is dropped. Only the
// user makes them.
const MaxDecisions = 64

// ReconnectWithin is how soon an extension pushed out of the waiting list
// (pairing_displaced) or whose socket dropped asks again, at most.
const ReconnectWithin = 5 * time.Second

type pendingPairing struct {
	conn  *conn
	since time.Time
	// joined is when this socket (or the profile's first socket, if it
	// replaced one) joined the list: the earliest is pushed out first.
	joined time.Time
	code   string
	// expiry lets the entry go after PairingTTL; stopped when it leaves
	// the list another way.
	expiry *time.Timer
}

// rememberedPairing is an entry that left the waiting list without a
// decision (pushed out, or its socket went away): its profile's next hello
// gets the same code back until since + PairingTTL.
type rememberedPairing struct {
	code, label string
	since       time.Time
	// seen is its last hello or departure: the least recently seen is
	// forgotten first.
	seen time.Time
}

// decision is the user's answer about a remembered entry, for its profile's
// next hello, until at + PairingTTL.
type decision struct {
	approved bool
	code     string
	at       time.Time
}

func (p *pendingPairing) view(id string, ttl time.Duration) PendingProfile {
	return PendingProfile{ID: id, Label: cleanLabel(p.conn.hello.Label), Code: p.code,
		Since: p.since, Expires: p.since.Add(ttl)}
}

// newCode returns a random pairing code.
func newCode() string {
	var sb strings.Builder
	size := big.NewInt(int64(len(CodeAlphabet)))
	for range CodeLength {
		n, err := rand.Int(rand.Reader, size)
		if err != nil {
			panic("crypto/rand failed: " + err.Error()) // crypto/rand does not fail on supported platforms
		}
		sb.WriteByte(CodeAlphabet[n.Int64()])
	}
	return sb.String()
}

// NormalizeCode is how a typed code is compared: upper case, without the
// spaces and dashes a user may add ("k7m-4px" → "K7M4PX").
func NormalizeCode(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == ' ' || r == '-':
			return -1
		case r >= 'a' && r <= 'z':
			return r - ('a' - 'A')
		}
		return r
	}, s)
}

// codeFor derives id's pairing code from the daemon's codeKey (HMAC-SHA256,
// CodeLength base-31 digits): the same id gets the same code for as long as
// the daemon runs, however many other hellos came in between, and nobody
// without the key can tell an id's code.
func (b *Broker) codeFor(id string) string {
	mac := hmac.New(sha256.New, b.codeKey[:])
	mac.Write([]byte(id))
	n := binary.BigEndian.Uint64(mac.Sum(nil))
	var sb strings.Builder
	for range CodeLength {
		sb.WriteByte(CodeAlphabet[n%uint64(len(CodeAlphabet))])
		n /= uint64(len(CodeAlphabet))
	}
	return sb.String()
}

// newCodeLocked returns id's code (codeFor), or a random one should that
// clash: a code that no waiting or remembered entry has and that no known,
// waiting or remembered id spells, so a name given to Approve matches one
// entry only.
func (b *Broker) newCodeLocked(id string) string {
	for try := 0; ; try++ {
		code := b.codeFor(id)
		if try > 0 {
			code = newCode()
		}
		clash := false
		for id, p := range b.pending {
			if p.code == code || NormalizeCode(id) == code {
				clash = true
				break
			}
		}
		for id, r := range b.remembered {
			if r.code == code || NormalizeCode(id) == code {
				clash = true
				break
			}
		}
		if _, ok := b.records[code]; !clash && !ok {
			return code
		}
	}
}

// collisionLocked says why a new profile id may not join ("" if it may):
// it is a prefix of a known, waiting or remembered profile's id, it has the
// same displayed prefix (shortID) as one, or it spells a waiting or
// remembered entry's code. Ids are compared without regard to case, so two
// ids that differ only in case never stand side by side. id itself is
// neither a record nor waiting (those are handled first).
func (b *Broker) collisionLocked(id string) string {
	lower := strings.ToLower(id)
	clash := func(other string) bool {
		return other != id && (strings.HasPrefix(strings.ToLower(other), lower) || strings.EqualFold(shortID(other), shortID(id)))
	}
	for other := range b.records {
		if clash(other) {
			return "this browser's profile id collides with a paired profile's id (one is a prefix of the other, or they start alike), so it was refused"
		}
	}
	code := NormalizeCode(id)
	for other, p := range b.pending {
		if clash(other) {
			return "this browser's profile id collides with the id of a browser waiting for approval (one is a prefix of the other, or they start alike), so it was refused"
		}
		if p.code == code {
			return "this browser's profile id spells the pairing code of a browser waiting for approval, so it was refused"
		}
	}
	for other, r := range b.remembered {
		if clash(other) {
			return "this browser's profile id collides with the id of a browser waiting for approval (one is a prefix of the other, or they start alike), so it was refused"
		}
		if r.code == code {
			return "this browser's profile id spells the pairing code of a browser waiting for approval, so it was refused"
		}
	}
	for other := range b.decided {
		if clash(other) {
			return "this browser's profile id collides with the id of a browser just approved or denied (one is a prefix of the other, or they start alike), so it was refused"
		}
	}
	return ""
}

// rememberLocked keeps p, which leaves the waiting list without a decision,
// so that id's next hello gets its code back (see rememberedPairing).
func (b *Broker) rememberLocked(id string, p *pendingPairing, now time.Time) {
	b.pruneLocked(now)
	b.remembered[id] = &rememberedPairing{code: p.code, label: cleanLabel(p.conn.hello.Label), since: p.since, seen: now}
	dropOldest(b.remembered, MaxRememberedPairings, func(r *rememberedPairing) time.Time { return r.seen })
}

// dropOldest deletes from m the entries with the earliest time (at) until
// at most max are left.
func dropOldest[V any](m map[string]V, max int, at func(V) time.Time) {
	for len(m) > max {
		oldest := ""
		for k, v := range m {
			if oldest == "" || at(v).Before(at(m[oldest])) {
				oldest = k
			}
		}
		delete(m, oldest)
	}
}

// pruneLocked forgets remembered entries and decisions older than
// PairingTTL.
func (b *Broker) pruneLocked(now time.Time) {
	for id, r := range b.remembered {
		if !now.Before(r.since.Add(b.cfg.PairingTTL)) {
			delete(b.remembered, id)
		}
	}
	for id, d := range b.decided {
		if !now.Before(d.at.Add(b.cfg.PairingTTL)) {
			delete(b.decided, id)
		}
	}
}

// decideLocked keeps the user's decision about the remembered entry id for
// its next hello.
func (b *Broker) decideLocked(id string, approved bool, now time.Time) {
	r := b.remembered[id]
	delete(b.remembered, id)
	b.decided[id] = &decision{approved: approved, code: r.code, at: now}
	dropOldest(b.decided, MaxDecisions, func(d *decision) time.Time { return d.at })
}

// holdLocked puts c on the waiting list with its code and queues its
// pairing frame. A waiting socket with the same id is replaced (returned
// as replaced: only the real extension knows its full id), and c takes over
// its code and expiry; a remembered id gets its code and expiry back. At
// MaxPendingPairings the entries that joined first are pushed out (returned
// as dropped, to be told pairing_displaced and closed; they are remembered)
// rather than the newcomer refused. Each entry expires PairingTTL after its
// profile's first hello.
func (b *Broker) holdLocked(c *conn, now time.Time) (replaced *conn, dropped []*conn) {
	id := c.hello.ProfileID
	code, since, joined := "", now, now
	b.pruneLocked(now)
	if r := b.remembered[id]; r != nil {
		// Pushed out, or its socket went away, earlier: the same code, so
		// the popup keeps showing what the user may be typing.
		delete(b.remembered, id)
		code, since = r.code, r.since
	}
	if old := b.pending[id]; old != nil {
		// The same profile asking again (its offscreen document or service
		// worker restarted): it keeps its code, so the popup and Tether's
		// list still agree, and its expiry.
		old.expiry.Stop()
		delete(b.pending, id)
		replaced = old.conn
		code, since, joined = old.code, old.since, old.joined
	}
	for len(b.pending) >= MaxPendingPairings {
		oldestID := ""
		for pid, p := range b.pending {
			if oldestID == "" || p.joined.Before(b.pending[oldestID].joined) {
				oldestID = pid
			}
		}
		p := b.pending[oldestID]
		p.expiry.Stop()
		delete(b.pending, oldestID)
		b.rememberLocked(oldestID, p, now)
		dropped = append(dropped, p.conn)
	}
	if code == "" {
		code = b.newCodeLocked(id)
	}
	b.clearRefusalLocked(id)
	p := &pendingPairing{conn: c, since: since, joined: joined, code: code}
	p.expiry = time.AfterFunc(since.Add(b.cfg.PairingTTL).Sub(now), func() { b.expire(id, c) })
	b.pending[id] = p
	c.queueFirst(protocol.Pairing{Type: protocol.TypePairing, Code: code, Message: fmt.Sprintf(
		"Waiting for approval in Tether. This browser's code is %s: approve the entry showing this code in the Tether window, "+
			"or run: tether profiles approve %s. If nobody approves it within %s, Tether lets it go and the extension asks again later; "+
			"this code stays the same when it reconnects.",
		code, code, humanDuration(b.cfg.PairingTTL))})
	b.notifyLocked()
	return replaced, dropped
}

// humanDuration writes d as "10 minutes", "30 seconds" or d.String().
func humanDuration(d time.Duration) string {
	switch {
	case d >= time.Minute && d%time.Minute == 0:
		if d == time.Minute {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", d/time.Minute)
	case d >= time.Second && d%time.Second == 0:
		return fmt.Sprintf("%d seconds", d/time.Second)
	}
	return d.String()
}

// letGo tells a waiting socket it was let go (code pairing_expired or
// pairing_displaced, with msg) and closes it once that is written.
func letGo(c *conn, code protocol.ErrorCode, msg string) {
	_ = c.sendNow(protocol.Refused{Type: protocol.TypeRefused, Code: code, Message: msg})
	c.closeAfterFlush()
}

// expire lets the waiting entry id go if c is still its socket.
func (b *Broker) expire(id string, c *conn) {
	b.mu.Lock()
	p := b.pending[id]
	if p == nil || p.conn != c {
		b.mu.Unlock()
		return
	}
	delete(b.pending, id)
	b.notifyLocked()
	ttl := b.cfg.PairingTTL
	b.mu.Unlock()
	b.log.Info("browser profile waiting for approval expired", "profile", shortID(id), "code", p.code, "after", ttl)
	letGo(c, protocol.CodePairingExpired, fmt.Sprintf("Nobody approved this browser in Tether within %s, so Tether let it go. "+
		"The extension asks again when it reconnects, in 30 seconds.", humanDuration(ttl)))
}

// Pending lists the new profiles waiting for approval, oldest first.
func (b *Broker) Pending() []PendingProfile {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]PendingProfile, 0, len(b.pending))
	for id, p := range b.pending {
		out = append(out, p.view(id, b.cfg.PairingTTL))
	}
	slices.SortFunc(out, func(a, b PendingProfile) int { return a.Since.Compare(b.Since) })
	return out
}

// findPendingLocked finds the waiting or remembered entry name means: its
// pairing code (any case, dashes and spaces ignored) or its full id. Never
// a prefix or a label: another process may claim the same label, or an id
// that is a prefix of the real one. live says whether it is waiting (else
// remembered: pushed out or reconnecting). Errors: ErrUnknownProfile, ErrAlreadyPaired,
// ErrAmbiguousProfile (wrapped).
func (b *Broker) findPendingLocked(name string) (id string, live bool, err error) {
	b.pruneLocked(b.cfg.Now())
	code := NormalizeCode(name)
	var ids []string
	prefixOf := 0
	for pid, p := range b.pending {
		switch {
		case pid == name || p.code == code:
			ids = append(ids, pid)
		case strings.HasPrefix(pid, name):
			prefixOf++
		}
	}
	for rid, r := range b.remembered {
		switch {
		case rid == name || r.code == code:
			ids = append(ids, rid)
		case strings.HasPrefix(rid, name):
			prefixOf++
		}
	}
	switch len(ids) {
	case 1:
		return ids[0], b.pending[ids[0]] != nil, nil
	case 0:
		// A paired profile's code (or id) comes back when someone approves
		// twice, or from an old `tether profiles` listing: say so, rather
		// than to wait and try again.
		for rid, r := range b.records {
			if rid == name || code != "" && b.codeFor(rid) == code {
				return "", false, fmt.Errorf("%w: %q is of %q (its slug is %q): nothing waits for approval; "+
					"`tether profiles forget %s` removes it", ErrAlreadyPaired, name, r.stored.Label, r.stored.Slug, r.stored.Slug)
			}
		}
		hint := "give the code the Tether extension's popup shows in that browser (or the full profile id); " +
			"if it shows one, the browser may be between two attempts (many programs asking at once push it out): try again in a few seconds"
		if prefixOf > 0 {
			hint = "a prefix of a profile id is not enough: " + hint
		}
		return "", false, fmt.Errorf("%w: no profile waiting for approval has the code or id %q (%d waiting); %s",
			ErrUnknownProfile, name, len(b.pending), hint)
	default:
		// newCodeLocked and collisionLocked keep this from happening.
		return "", false, fmt.Errorf("%w: %q matches %d profiles waiting for approval; give the full profile id", ErrAmbiguousProfile, name, len(ids))
	}
}

// Approve pairs a profile waiting for approval, named by its pairing code
// or its full id (see findPendingLocked): it gets a record, a slug and a
// new secret, and its socket becomes live. It returns the new profile.
//
// A profile that is remembered rather than waiting (pushed out of the list
// by newer hellos, or reconnecting) is approved for its next hello, within
// PairingTTL: the returned Profile has PairsOnReconnect set and no slug
// yet, and the extension reconnects within ReconnectWithin.
//
// Errors: ErrUnknownProfile or ErrAmbiguousProfile (wrapped), or an error
// when MaxProfiles profiles are connected.
func (b *Broker) Approve(name string) (Profile, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id, live, err := b.findPendingLocked(name)
	if err != nil {
		return Profile{}, err
	}
	if n := b.connectedLocked(); n >= MaxProfiles {
		return Profile{}, fmt.Errorf("%d profiles are connected, the maximum; disconnect one first", n)
	}
	now := b.cfg.Now()
	if !live {
		r := b.remembered[id]
		b.decideLocked(id, true, now)
		b.notifyLocked()
		b.log.Info("browser profile approved; it pairs when it reconnects", "profile", shortID(id), "code", r.code)
		return Profile{ID: id, Label: r.label, PairsOnReconnect: true}, nil
	}
	p := b.pending[id]
	p.expiry.Stop()
	delete(b.pending, id)
	rec, secret := b.createLocked(p.conn.hello, now)
	b.attachLocked(rec, p.conn, now, b.ackLocked(rec, secret))
	b.log.Info("browser profile approved", "profile", shortID(id), "code", p.code, "slug", rec.stored.Slug)
	return rec.view(), nil
}

// deniedMessage is what a denied extension is told.
const deniedMessage = "You denied this browser in Tether, so the extension stopped asking. To pair it after all, press Reconnect here " +
	"(or restart the browser), then approve it in Tether; until then it asks nothing."

// Deny refuses a profile waiting for approval, named by its pairing code
// or full id, and closes its socket; it returns what it denied (id, label
// and code as claimed). A remembered one (see Approve) is refused at its
// next hello, within PairingTTL. Either way the extension stops asking
// until its popup's Reconnect or a restart of the browser, and Refused
// lists it. Errors: as Approve's name errors.
func (b *Broker) Deny(name string) (PendingProfile, error) {
	b.mu.Lock()
	id, live, err := b.findPendingLocked(name)
	if err != nil {
		b.mu.Unlock()
		return PendingProfile{}, err
	}
	if !live {
		r := b.remembered[id]
		denied := PendingProfile{ID: id, Label: r.label, Code: r.code, Since: r.since, Expires: r.since.Add(b.cfg.PairingTTL)}
		b.decideLocked(id, false, b.cfg.Now())
		b.notifyLocked()
		b.mu.Unlock()
		b.log.Info("browser profile denied; it is refused when it reconnects", "profile", shortID(id), "code", r.code)
		return denied, nil
	}
	p := b.pending[id]
	denied := p.view(id, b.cfg.PairingTTL)
	p.expiry.Stop()
	delete(b.pending, id)
	b.noteRefusalLocked(id, p.conn.hello.Label, protocol.CodePairingDenied, "", 0)
	b.notifyLocked()
	b.mu.Unlock()
	_ = p.conn.sendNow(protocol.Refused{Type: protocol.TypeRefused, Code: protocol.CodePairingDenied, Message: deniedMessage})
	p.conn.closeAfterFlush()
	b.log.Info("browser profile denied", "profile", shortID(id), "code", p.code)
	return denied, nil
}
