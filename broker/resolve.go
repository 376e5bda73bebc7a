// Name resolution: which record a profile name in a tool call means, the
// default profile for calls that name none, and why none is usable.

package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// resolveNamedLocked finds the record a non-empty profile name means, in
// this order: exact profile id; exact slug (the name is slugified first, so
// "Work Laptop" finds work-laptop); unique slug prefix; unique id prefix.
func (b *Broker) resolveNamedLocked(name string) (*record, error) {
	if rec, ok := b.records[name]; ok {
		return rec, nil
	}
	slug := Slugify(name)
	for _, r := range b.records {
		if r.stored.Slug == slug {
			return r, nil
		}
	}
	for _, match := range []func(*record) bool{
		func(r *record) bool { return strings.HasPrefix(r.stored.Slug, slug) },
		func(r *record) bool { return strings.HasPrefix(r.stored.ID, name) },
	} {
		var found []*record
		for _, r := range b.records {
			if match(r) {
				found = append(found, r)
			}
		}
		switch len(found) {
		case 1:
			return found[0], nil
		case 0:
			continue
		default:
			return nil, fmt.Errorf("%w %q: it matches %s; use the full slug", ErrAmbiguousProfile, name, describe(found))
		}
	}
	var all []*record
	for _, r := range b.records {
		all = append(all, r)
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w %q: no browser profile has connected yet", ErrUnknownProfile, name)
	}
	return nil, fmt.Errorf("%w %q: the profiles are %s", ErrUnknownProfile, name, describe(all))
}

func describe(recs []*record) string {
	names := make([]string, 0, len(recs))
	for _, r := range recs {
		state := "connected"
		if r.conn == nil {
			state = "disconnected"
		}
		names = append(names, fmt.Sprintf("%q (%s, %s, id %s…)", r.stored.Slug, r.stored.Label, state, shortID(r.stored.ID)))
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// defaultLocked picks the profile for calls that name none: the only
// connected profile, else the most recently used connected one, else the most
// recently connected one. Nil when none is connected.
func (b *Broker) defaultLocked() *record {
	var best *record
	for _, r := range b.records {
		if r.conn == nil {
			continue
		}
		if best == nil || r.lastUsed.After(best.lastUsed) ||
			r.lastUsed.Equal(best.lastUsed) && r.connectedAt.After(best.connectedAt) {
			best = r
		}
	}
	return best
}

// pick resolves a profile name to a connected record, waiting up to
// ConnectWait for a disconnected one to come back.
func (b *Broker) pick(ctx context.Context, name string) (*record, *conn, error) {
	deadline := time.NewTimer(b.cfg.ConnectWait)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, nil, ErrClosed
		}
		var rec *record
		var err error
		if name == "" {
			rec = b.defaultLocked()
		} else {
			rec, err = b.resolveNamedLocked(name)
		}
		if err != nil {
			b.mu.Unlock()
			return nil, nil, err
		}
		if rec != nil && rec.conn != nil {
			rec.lastUsed = b.cfg.Now()
			c := rec.conn
			b.mu.Unlock()
			return rec, c, nil
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
			continue
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-deadline.C:
		}
		b.mu.Lock()
		err = b.unavailableLocked(rec)
		b.mu.Unlock()
		return nil, nil, err
	}
}

// unavailableLocked explains why no connected profile could be used.
func (b *Broker) unavailableLocked(rec *record) error {
	if rec != nil {
		return fmt.Errorf("%w: profile %q (%s) was last seen %s ago; check that Chrome is running with that profile and the Tether extension is enabled there (chrome://extensions)",
			ErrProfileDisconnected, rec.stored.Slug, rec.stored.Label, b.cfg.Now().Sub(rec.stored.LastSeen).Round(time.Second))
	}
	if len(b.pending) > 0 {
		var names []string
		for _, p := range b.pending {
			names = append(names, fmt.Sprintf("%q", cleanLabel(p.conn.hello.Label)))
		}
		slices.Sort(names)
		// No codes here: the user compares the code in Chrome's popup with
		// Tether's list, and must not take one from the AI's words.
		return fmt.Errorf("%w: a browser is waiting for the user's approval (%s): ask the user to approve it in the Tether window, "+
			"or with `tether profiles approve CODE` where CODE is the code the Tether extension's popup shows in that browser",
			ErrNoProfile, strings.Join(names, ", "))
	}
	if len(b.records) > 0 {
		var all []*record
		for _, r := range b.records {
			all = append(all, r)
		}
		return fmt.Errorf("%w; known profiles: %s", ErrNoProfile, describe(all))
	}
	return ErrNoProfile
}
