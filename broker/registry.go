// The registry of known profiles: records, their persistence, slugs, and
// the live socket attached to each.

package broker

import (
	"slices"
	"strings"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// Profile describes one known browser profile.
type Profile struct {
	// ID is the extension's stable profile id (a UUID).
	ID string
	// Label is the human name, e.g. "Work".
	Label string
	// Slug is the profile's short address in tool calls, e.g. "work".
	Slug string
	// Connected is true while its extension's socket is open.
	Connected bool
	// ExtVersion is the extension's version, as of its last hello.
	ExtVersion string
	// ExtOutdated, when not empty, says that the extension is older than
	// the one built into Tether, which cannot update it, and how the user
	// reloads it (Config.CheckExtension).
	ExtOutdated string
	// ConnectedAt is when the current socket said hello (zero if disconnected).
	ConnectedAt time.Time
	// LastSeen is when the profile was last connected.
	LastSeen time.Time
	// Tabs are the profile's shared tabs, as of the extension's last report.
	Tabs []protocol.TabInfo
	// RTT is the round-trip time of its extension's socket (WebSocket
	// ping/pong, every PingInterval and on hello); 0 while unknown or
	// disconnected.
	RTT time.Duration
	// PairsOnReconnect is set only in what Approve returns for a profile
	// that was not connected when approved (pushed out of the waiting list,
	// or reconnecting): it is paired at its next hello, within
	// ReconnectWithin; Slug is empty until then.
	PairsOnReconnect bool
}

// record is one known profile: its persisted part and its live state.
type record struct {
	stored      storedProfile
	conn        *conn // nil while disconnected
	connectedAt time.Time
	lastUsed    time.Time
	extVersion  string
	extOutdated string
	tabs        []protocol.TabInfo
	queues      map[int]*tabQueue
}

func (r *record) view() Profile {
	return Profile{
		ID: r.stored.ID, Label: r.stored.Label, Slug: r.stored.Slug,
		Connected: r.conn != nil, ExtVersion: r.extVersion, ExtOutdated: r.extOutdated,
		ConnectedAt: r.connectedAt, LastSeen: r.stored.LastSeen,
		Tabs: slices.Clone(r.tabs),
		RTT:  r.rtt(),
	}
}

// rtt is the live socket's round-trip time, 0 when disconnected.
func (r *record) rtt() time.Duration {
	if r.conn == nil {
		return 0
	}
	return r.conn.linkRTT()
}

func (r *record) queue(tab int) *tabQueue {
	if r.queues == nil {
		r.queues = make(map[int]*tabQueue)
	}
	q := r.queues[tab]
	if q == nil {
		q = &tabQueue{}
		r.queues[tab] = q
	}
	return q
}

// currentTab is the number of the tab a call without one addresses, as the
// extension last reported it; 0 when unknown.
func (r *record) currentTab() int {
	t, _ := tabOf(r.tabs, 0)
	return t.Tab
}

// saveLocked persists the registry; b.mu must be held.
func (b *Broker) saveLocked() error {
	out := make([]storedProfile, 0, len(b.records))
	for _, r := range b.records {
		out = append(out, r.stored)
	}
	slices.SortFunc(out, func(a, b storedProfile) int { return strings.Compare(a.Slug, b.Slug) })
	if err := saveStore(b.cfg.StorePath, out); err != nil {
		b.log.Error("saving the profile registry failed", "err", err)
		return err
	}
	return nil
}

// createLocked makes a new record for hello with a fresh secret.
func (b *Broker) createLocked(h protocol.Hello, now time.Time) (*record, string) {
	label := cleanLabel(h.Label)
	slug := Slugify(label)
	// A slug the extension remembers wins if it is free: slugs then survive
	// a daemon that lost its registry.
	if h.Slug != "" && Slugify(h.Slug) == h.Slug && !b.slugTakenLocked(h.Slug, h.ProfileID) {
		slug = h.Slug
	}
	secret := newSecret()
	rec := &record{stored: storedProfile{
		ID: h.ProfileID, Label: label,
		Slug:       b.uniqueSlugLocked(slug, h.ProfileID),
		SecretHash: hashSecret(secret), LastSeen: now,
	}}
	b.records[h.ProfileID] = rec
	return rec, secret
}

// attachLocked makes c the live socket of rec. The ack is queued on c first,
// so the extension always receives hello_ack before any request.
func (b *Broker) attachLocked(rec *record, c *conn, now time.Time, ack *protocol.HelloAck) {
	c.queueFirst(*ack)
	c.paired.Store(true)
	b.clearRefusalLocked(rec.stored.ID)
	rec.conn = c
	rec.connectedAt = now
	rec.stored.LastSeen = now
	rec.extVersion = c.hello.ExtVersion
	rec.extOutdated = ""
	rec.tabs = slices.Clone(c.hello.Tabs)
	_ = b.saveLocked()
	b.notifyLocked()
	if b.cfg.CheckExtension != nil {
		go b.checkExtension(c) // after the ack: it is queued already
	}
}

func (b *Broker) ackLocked(rec *record, secret string) *protocol.HelloAck {
	return &protocol.HelloAck{
		Type: protocol.TypeHelloAck, DaemonVersion: b.cfg.DaemonVersion,
		AssignedLabel: rec.stored.Label, AssignedSlug: rec.stored.Slug, Secret: secret,
	}
}

func (b *Broker) connectedLocked() int {
	n := 0
	for _, r := range b.records {
		if r.conn != nil {
			n++
		}
	}
	return n
}

func (b *Broker) slugTakenLocked(slug, exceptID string) bool {
	for id, r := range b.records {
		if id != exceptID && r.stored.Slug == slug {
			return true
		}
	}
	return false
}

func (b *Broker) uniqueSlugLocked(base, exceptID string) string {
	taken := make(map[string]bool)
	for id, r := range b.records {
		if id != exceptID {
			taken[r.stored.Slug] = true
		}
	}
	return uniqueSlug(base, taken)
}

// detach runs when c's socket has closed: the record stays, marked
// disconnected, so a suspended service worker keeps its slot and slug.
func (b *Broker) detach(c *conn) {
	c.close()
	b.mu.Lock()
	defer b.mu.Unlock()
	id := c.hello.ProfileID
	if p := b.pending[id]; p != nil && p.conn == c {
		p.expiry.Stop()
		delete(b.pending, id)
		// Remembered, so that the extension's next socket (its offscreen
		// document restarted, or the network blinked) gets the same code.
		b.rememberLocked(id, p, b.cfg.Now())
		b.notifyLocked()
		b.log.Info("profile waiting for approval went away", "profile", shortID(id))
		return
	}
	if rec := b.records[id]; rec != nil && rec.conn == c {
		rec.conn = nil
		rec.connectedAt = time.Time{}
		rec.stored.LastSeen = b.cfg.Now()
		if !b.closed { // Close has saved the registry; nothing may write after it
			_ = b.saveLocked()
		}
		b.notifyLocked()
		b.log.Info("extension disconnected", "profile", shortID(id), "slug", rec.stored.Slug)
	}
}

// setTabs records a tabs_changed report.
func (b *Broker) setTabs(c *conn, tc protocol.TabsChanged) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if rec := b.records[c.hello.ProfileID]; rec != nil && rec.conn == c {
		rec.tabs = slices.Clone(tc.Tabs)
		b.notifyLocked()
		// Numbers only: titles and URLs are private page data.
		b.log.Info("shared tabs changed", "profile", shortID(c.hello.ProfileID), "slug", rec.stored.Slug,
			"change", string(tc.Change), "tab", tc.Tab, "shared", len(tc.Tabs))
	}
}

// OnDownload sets the handler of the extensions' download frames, called
// on its own goroutine with the profile's slug (the daemon judges each
// download by the policy, then resumes or cancels it: download_decide).
func (b *Broker) OnDownload(h func(profile string, ev protocol.DownloadEvent)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onDownload = h
}

func (b *Broker) download(c *conn, ev protocol.DownloadEvent) {
	b.mu.Lock()
	rec, h := b.records[c.hello.ProfileID], b.onDownload
	if rec == nil || rec.conn != c {
		b.mu.Unlock()
		return
	}
	slug := rec.stored.Slug
	b.mu.Unlock()
	b.log.Info("download of a shared tab", "profile", shortID(c.hello.ProfileID), "slug", slug, "event", string(ev.Event), "tab", ev.Download.Tab, "paused", ev.Paused)
	if h != nil {
		go h(slug, ev)
	}
}

// Profiles lists every known profile, connected or not, ordered by slug.
func (b *Broker) Profiles() []Profile {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Profile, 0, len(b.records))
	for _, r := range b.records {
		out = append(out, r.view())
	}
	slices.SortFunc(out, func(a, b Profile) int { return strings.Compare(a.Slug, b.Slug) })
	return out
}

// Forget removes a profile's record (named as in tool calls); its socket, if
// open, is closed, and it must be approved again to reconnect.
func (b *Broker) Forget(name string) (Profile, error) {
	b.mu.Lock()
	rec, err := b.resolveNamedLocked(name)
	if err != nil {
		b.mu.Unlock()
		return Profile{}, err
	}
	view := rec.view()
	delete(b.records, rec.stored.ID)
	err = b.saveLocked()
	b.notifyLocked()
	c := rec.conn
	b.mu.Unlock()
	if c != nil {
		c.close()
	}
	b.log.Info("browser profile forgotten", "profile", shortID(view.ID), "slug", view.Slug)
	return view, err
}

// RTT is the round-trip time of the link of the profile whose slug is
// slug (Profile.RTT); 0 when it is unknown, disconnected or not measured yet.
func (b *Broker) RTT(slug string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, r := range b.records {
		if r.stored.Slug == slug {
			return r.rtt()
		}
	}
	return 0
}
