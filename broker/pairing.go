// Pairing: new profiles waiting for the user's approval, and approving or
// denying them.

package broker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// PendingProfile is a new profile waiting for the user's approval.
type PendingProfile struct {
	ID    string
	Label string
	Since time.Time
}

type pendingPairing struct {
	conn  *conn
	since time.Time
}

// Pending lists the new profiles waiting for approval, oldest first.
func (b *Broker) Pending() []PendingProfile {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]PendingProfile, 0, len(b.pending))
	for id, p := range b.pending {
		out = append(out, PendingProfile{ID: id, Label: cleanLabel(p.conn.hello.Label), Since: p.since})
	}
	slices.SortFunc(out, func(a, b PendingProfile) int { return a.Since.Compare(b.Since) })
	return out
}

// findPendingLocked matches name against pending ids (exact, then prefix)
// and slugified labels.
func (b *Broker) findPendingLocked(name string) (string, error) {
	if _, ok := b.pending[name]; ok {
		return name, nil
	}
	var ids []string
	for id, p := range b.pending {
		if strings.HasPrefix(id, name) || Slugify(p.conn.hello.Label) == Slugify(name) {
			ids = append(ids, id)
		}
	}
	switch len(ids) {
	case 1:
		return ids[0], nil
	case 0:
		return "", fmt.Errorf("%w: no profile waiting for approval matches %q (%d waiting)", ErrUnknownProfile, name, len(b.pending))
	default:
		return "", fmt.Errorf("%w: %q matches %d profiles waiting for approval; give more of the id", ErrAmbiguousProfile, name, len(ids))
	}
}

// Approve pairs a profile waiting for approval (named by id, id prefix or
// label): it gets a record, a slug and a new secret, and its socket becomes
// live. It returns the new profile.
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
	delete(b.pending, id)
	now := b.cfg.Now()
	rec, secret := b.createLocked(p.conn.hello, now)
	b.attachLocked(rec, p.conn, now, b.ackLocked(rec, secret))
	b.log.Info("browser profile approved", "profile", shortID(id), "slug", rec.stored.Slug)
	return rec.view(), nil
}

// Deny refuses a profile waiting for approval and closes its socket.
func (b *Broker) Deny(name string) error {
	b.mu.Lock()
	id, err := b.findPendingLocked(name)
	if err != nil {
		b.mu.Unlock()
		return err
	}
	p := b.pending[id]
	delete(b.pending, id)
	b.notifyLocked()
	b.mu.Unlock()
	_ = p.conn.sendNow(protocol.Refused{Type: protocol.TypeRefused, Code: protocol.CodePairingDenied,
		Message: "You denied this browser in Tether. To pair it after all, press Reconnect in the Tether extension's popup and approve it."})
	p.conn.closeAfterFlush()
	b.log.Info("browser profile denied", "profile", shortID(id))
	return nil
}
