// Pairing: new profiles waiting for the user's approval, their pairing
// codes and expiry, and approving or denying them.
//
// Any local process can open the extension socket with the extension's
// Origin and claim to be a new profile, so the user must be able to tell
// the real browser's entry from a forged one. Each waiting socket gets a
// random code that the daemon sends only to that socket; the extension's
// popup shows it, and the window, the tray and `tether profiles` show it
// next to the entry. Approval names the code or the full id, never a
// prefix, so an entry whose id is a prefix of another's cannot be approved
// in its place (and such hellos are refused anyway, see collisionLocked).

package broker

import (
	"crypto/rand"
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

type pendingPairing struct {
	conn  *conn
	since time.Time
	code  string
	// expiry lets the entry go after PairingTTL; stopped when it leaves
	// the list another way.
	expiry *time.Timer
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

// newCodeLocked returns a code that no waiting entry has and that no known
// or waiting id spells, so a name given to Approve matches one entry only.
func (b *Broker) newCodeLocked() string {
	for {
		code := newCode()
		clash := false
		for id, p := range b.pending {
			if p.code == code || NormalizeCode(id) == code {
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
// it is a prefix of a known or waiting profile's id, it has the same
// displayed prefix (shortID) as one, or it spells a waiting entry's code.
// id itself is neither a record nor waiting (those are handled first).
func (b *Broker) collisionLocked(id string) string {
	clash := func(other string) bool {
		return other != id && (strings.HasPrefix(other, id) || shortID(other) == shortID(id))
	}
	for other := range b.records {
		if clash(other) {
			return "this browser's profile id collides with a paired profile's id (one is a prefix of the other, or they start alike), so it was refused"
		}
	}
	for other, p := range b.pending {
		if clash(other) {
			return "this browser's profile id collides with the id of a browser waiting for approval (one is a prefix of the other, or they start alike), so it was refused"
		}
		if p.code == NormalizeCode(id) {
			return "this browser's profile id spells the pairing code of a browser waiting for approval, so it was refused"
		}
	}
	return ""
}

// holdLocked puts c on the waiting list with a new code and queues its
// pairing frame. A waiting socket with the same id is replaced (returned
// as replaced: only the real extension knows its full id), and c takes over
// its code and expiry. At
// MaxPendingPairings the oldest waiting entries are pushed out (returned as
// dropped, to be told and closed) rather than the newcomer refused: a flood
// of forged hellos must not keep a real new profile from being seen. Each
// entry expires after PairingTTL.
func (b *Broker) holdLocked(c *conn, now time.Time) (replaced *conn, dropped []*conn) {
	id := c.hello.ProfileID
	code, since := "", now
	if old := b.pending[id]; old != nil {
		// The same profile asking again (its offscreen document or service
		// worker restarted): it keeps its code, so the popup and Tether's
		// list still agree, and its expiry.
		old.expiry.Stop()
		delete(b.pending, id)
		replaced = old.conn
		code, since = old.code, old.since
	}
	for len(b.pending) >= MaxPendingPairings {
		oldestID := ""
		for pid, p := range b.pending {
			if oldestID == "" || p.since.Before(b.pending[oldestID].since) {
				oldestID = pid
			}
		}
		p := b.pending[oldestID]
		p.expiry.Stop()
		delete(b.pending, oldestID)
		dropped = append(dropped, p.conn)
	}
	if code == "" {
		code = b.newCodeLocked()
	}
	p := &pendingPairing{conn: c, since: since, code: code}
	p.expiry = time.AfterFunc(since.Add(b.cfg.PairingTTL).Sub(now), func() { b.expire(id, c) })
	b.pending[id] = p
	c.queueFirst(protocol.Pairing{Type: protocol.TypePairing, Code: code, Message: fmt.Sprintf(
		"Waiting for approval in Tether. This browser's code is %s: approve the entry showing this code in the Tether window, "+
			"or run: tether profiles approve %s. If nobody approves it within %s, Tether lets it go and the extension asks again when it reconnects, with a new code.",
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

// letGo tells a waiting socket it was let go (code pairing_expired, with
// msg) and closes it once that is written.
func letGo(c *conn, msg string) {
	_ = c.sendNow(protocol.Refused{Type: protocol.TypeRefused, Code: protocol.CodePairingExpired, Message: msg})
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
	letGo(c, fmt.Sprintf("Nobody approved this browser in Tether within %s, so Tether let it go. "+
		"The extension asks again when it reconnects, with a new code.", humanDuration(ttl)))
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

// findPendingLocked finds the waiting entry name means: its pairing code
// (any case, dashes and spaces ignored) or its full id. Never a prefix or a
// label: another process may claim the same label, or an id that is a
// prefix of the real one. Errors: ErrUnknownProfile, ErrAmbiguousProfile
// (wrapped).
func (b *Broker) findPendingLocked(name string) (string, error) {
	code := NormalizeCode(name)
	var ids []string
	prefixOf := 0
	for id, p := range b.pending {
		switch {
		case id == name || p.code == code:
			ids = append(ids, id)
		case strings.HasPrefix(id, name):
			prefixOf++
		}
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		hint := "give the code the Tether extension's popup shows in that browser (or the full profile id)"
		if prefixOf > 0 {
			hint = "a prefix of a profile id is not enough: " + hint
		}
		return "", fmt.Errorf("%w: no profile waiting for approval has the code or id %q (%d waiting); %s",
			ErrUnknownProfile, name, len(b.pending), hint)
	default:
		// newCodeLocked and collisionLocked keep this from happening.
		return "", fmt.Errorf("%w: %q matches %d profiles waiting for approval; give the full profile id", ErrAmbiguousProfile, name, len(ids))
	}
}

// Approve pairs a profile waiting for approval, named by its pairing code
// or its full id (see findPendingLocked): it gets a record, a slug and a
// new secret, and its socket becomes live. It returns the new profile.
// Errors: ErrUnknownProfile or ErrAmbiguousProfile (wrapped), or an error
// when MaxProfiles profiles are connected.
func (b *Broker) Approve(name string) (Profile, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id, err := b.findPendingLocked(name)
	if err != nil {
		return Profile{}, err
	}
	if n := b.connectedLocked(); n >= MaxProfiles {
		return Profile{}, fmt.Errorf("%d profiles are connected, the maximum; disconnect one first", n)
	}
	p := b.pending[id]
	p.expiry.Stop()
	delete(b.pending, id)
	now := b.cfg.Now()
	rec, secret := b.createLocked(p.conn.hello, now)
	b.attachLocked(rec, p.conn, now, b.ackLocked(rec, secret))
	b.log.Info("browser profile approved", "profile", shortID(id), "code", p.code, "slug", rec.stored.Slug)
	return rec.view(), nil
}

// Deny refuses a profile waiting for approval, named by its pairing code
// or full id, and closes its socket. Errors: as Approve's name errors.
func (b *Broker) Deny(name string) error {
	b.mu.Lock()
	id, err := b.findPendingLocked(name)
	if err != nil {
		b.mu.Unlock()
		return err
	}
	p := b.pending[id]
	p.expiry.Stop()
	delete(b.pending, id)
	b.notifyLocked()
	b.mu.Unlock()
	_ = p.conn.sendNow(protocol.Refused{Type: protocol.TypeRefused, Code: protocol.CodePairingDenied,
		Message: "You denied this browser in Tether. To pair it after all, press Reconnect in the Tether extension's popup and approve it."})
	p.conn.closeAfterFlush()
	b.log.Info("browser profile denied", "profile", shortID(id), "code", p.code)
	return nil
}
