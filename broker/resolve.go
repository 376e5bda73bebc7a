// Name resolution: which record a profile name in a tool call means, the
// default profile for calls that name none, and why none is usable.

package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// matchName finds the item a non-empty profile name means, in this order:
// exact profile id; exact slug (the name is slugified first, so "Work
// Laptop" finds work-laptop); unique slug prefix; unique id prefix. When a
// prefix matches several items and none exactly, it returns them all
// (ambiguous); when nothing matches, none. It is the one resolution of
// names: Call's (resolveNamedLocked) and FindProfile's.
func matchName[T any](items []T, name string, id, slug func(T) string) []T {
	for _, it := range items {
		if id(it) == name {
			return []T{it}
		}
	}
	s := Slugify(name)
	for _, it := range items {
		if slug(it) == s {
			return []T{it}
		}
	}
	for _, match := range []func(T) bool{
		func(it T) bool { return strings.HasPrefix(slug(it), s) },
		func(it T) bool { return strings.HasPrefix(id(it), name) },
	} {
		var found []T
		for _, it := range items {
			if match(it) {
				found = append(found, it)
			}
		}
		if len(found) > 0 {
			return found
		}
	}
	return nil
}

// FindProfile finds the profile among ps (as Profiles lists them) that a
// non-empty profile name in a tool call means, exactly as Call resolves it
// (exact id, exact slug, unique slug prefix, unique id prefix); ok is
// false when the name is unknown or ambiguous, where Call fails.
func FindProfile(ps []Profile, name string) (Profile, bool) {
	found := matchName(ps, name, func(p Profile) string { return p.ID }, func(p Profile) string { return p.Slug })
	if len(found) != 1 {
		return Profile{}, false
	}
	return found[0], true
}

// Tab is the shared tab a call passing tab addresses in this profile: tab
// n, or the current tab when n is 0, as the extension last reported them;
// ok is false when there is no such tab.
func (p Profile) Tab(n int) (protocol.TabInfo, bool) {
	return tabOf(p.Tabs, n)
}

func tabOf(tabs []protocol.TabInfo, n int) (protocol.TabInfo, bool) {
	for _, t := range tabs {
		if n > 0 && t.Tab == n || n == 0 && t.Current {
			return t, true
		}
	}
	return protocol.TabInfo{}, false
}

// resolveNamedLocked finds the record a non-empty profile name means
// (matchName).
func (b *Broker) resolveNamedLocked(name string) (*record, error) {
	all := make([]*record, 0, len(b.records))
	for _, r := range b.records {
		all = append(all, r)
	}
	found := matchName(all, name, func(r *record) string { return r.stored.ID }, func(r *record) string { return r.stored.Slug })
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return nil, fmt.Errorf("%w %q: it matches %s; use the full slug", ErrAmbiguousProfile, name, describe(found))
	case len(all) == 0:
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

// pickFor resolves a profile name of a call of caller to a connected
// record ("" : the profile of the caller's current tab, else the default),
// waiting up to ConnectWait for a disconnected one to come back.
func (b *Broker) pickFor(ctx context.Context, name string, caller Caller) (*record, *conn, error) {
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
			rec = b.defaultForLocked(caller)
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
