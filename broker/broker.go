// Package broker owns the extension side of the daemon: the WebSocket route
// every browser profile's extension dials, its origin gate, the registry of
// profiles (pairing, secrets, slugs, shared tabs), and the routing and
// correlation of calls to them.
//
// It imports neither the MCP library nor any UI package; the mcp package
// reaches it through the small Browser interface it defines.
package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/protocol"
)

// DefaultExtensionID is the id of Tether's own extension. The unpacked build
// pins it with the "key" in extension/manifest.json; an id is derived from
// that key as Chrome documents (developer.chrome.com/docs/extensions/reference/manifest/key).
const DefaultExtensionID = "aokghpkcplaclmhkoheinfbdepflapkn"

// Limits.
const (
	// MaxProfiles is the most profiles connected at once; a new profile past
	// it is refused, a live one is never evicted, a known one may always reconnect.
	MaxProfiles = 32
	// MaxAwaitingHello is the most sockets that may be open without having
	// said hello; more are refused before the upgrade.
	MaxAwaitingHello = 16
	// MaxPendingPairings is the most new profiles waiting for approval.
	MaxPendingPairings = 16
	// PruneAfter is how long a disconnected profile's record is kept.
	PruneAfter = 30 * 24 * time.Hour
)

// Config configures a Broker. Zero durations take the defaults shown.
type Config struct {
	// ExtensionIDs are the allowed extension ids; the socket handshake is
	// refused unless Origin is exactly chrome-extension://<id> for one of them.
	ExtensionIDs []string
	// DaemonVersion is sent to extensions in hello_ack.
	DaemonVersion string
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// StorePath is the JSON file the profile registry persists to; empty
	// keeps it in memory only.
	StorePath string
	// AutoApprove pairs new profiles without asking the user (tests, servers).
	AutoApprove bool
	// HelloTimeout is how long a new socket may take to send hello (10 s).
	HelloTimeout time.Duration
	// PingInterval is how often the daemon pings each extension (20 s).
	PingInterval time.Duration
	// PongWait is how long a socket may stay silent, pongs included, before it
	// is dropped (2.5 × PingInterval: two missed pongs).
	PongWait time.Duration
	// WriteTimeout bounds one frame write (10 s).
	WriteTimeout time.Duration
	// MaxFrameBytes caps one incoming frame (32 MiB).
	MaxFrameBytes int64
	// ConnectWait is how long a call waits for a disconnected profile to
	// come back before failing (5 s).
	ConnectWait time.Duration
	// Now is the clock (time.Now); tests may replace it.
	Now func() time.Time
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.HelloTimeout == 0 {
		c.HelloTimeout = 10 * time.Second
	}
	if c.PingInterval == 0 {
		c.PingInterval = 20 * time.Second
	}
	if c.PongWait == 0 {
		c.PongWait = c.PingInterval * 5 / 2
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.MaxFrameBytes == 0 {
		c.MaxFrameBytes = 32 << 20
	}
	if c.ConnectWait == 0 {
		c.ConnectWait = 5 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

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
	// ConnectedAt is when the current socket said hello (zero if disconnected).
	ConnectedAt time.Time
	// LastSeen is when the profile was last connected.
	LastSeen time.Time
	// Tabs are the profile's shared tabs, as of the extension's last report.
	Tabs []protocol.TabInfo
}

// PendingProfile is a new profile waiting for the user's approval.
type PendingProfile struct {
	ID    string
	Label string
	Since time.Time
}

// record is one known profile: its persisted part and its live state.
type record struct {
	stored      storedProfile
	conn        *conn // nil while disconnected
	connectedAt time.Time
	lastUsed    time.Time
	extVersion  string
	tabs        []protocol.TabInfo
	queues      map[int]*tabQueue
}

func (r *record) view() Profile {
	return Profile{
		ID: r.stored.ID, Label: r.stored.Label, Slug: r.stored.Slug,
		Connected: r.conn != nil, ExtVersion: r.extVersion,
		ConnectedAt: r.connectedAt, LastSeen: r.stored.LastSeen,
		Tabs: slices.Clone(r.tabs),
	}
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
	for _, t := range r.tabs {
		if t.Current {
			return t.Tab
		}
	}
	return 0
}

type pendingPairing struct {
	conn  *conn
	since time.Time
}

// Broker accepts extension sockets and routes calls to them. Create it with
// New; it is safe for concurrent use.
type Broker struct {
	cfg      Config
	log      *slog.Logger
	origins  map[string]bool
	upgrader websocket.Upgrader

	mu            sync.Mutex
	records       map[string]*record // by profile id
	pending       map[string]*pendingPairing
	awaitingHello int
	changed       chan struct{} // closed and replaced on every change
	closed        bool
}

// New returns a Broker for cfg, loading the persisted registry and pruning
// records unseen for PruneAfter.
func New(cfg Config) (*Broker, error) {
	cfg.setDefaults()
	b := &Broker{
		cfg:     cfg,
		log:     cfg.Logger,
		origins: make(map[string]bool),
		records: make(map[string]*record),
		pending: make(map[string]*pendingPairing),
		changed: make(chan struct{}),
	}
	for _, id := range cfg.ExtensionIDs {
		b.origins["chrome-extension://"+id] = true
	}
	b.upgrader = websocket.Upgrader{
		ReadBufferSize:  32 << 10,
		WriteBufferSize: 32 << 10,
		// The origin was checked, exactly, before Upgrade is called.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	stored, err := loadStore(cfg.StorePath)
	if err != nil {
		return nil, err
	}
	pruned := 0
	for _, s := range stored {
		if cfg.Now().Sub(s.LastSeen) > PruneAfter {
			pruned++
			continue
		}
		b.records[s.ID] = &record{stored: s}
	}
	if pruned > 0 {
		b.log.Info("pruned profiles unseen for 30 days", "count", pruned)
		if err := b.saveLocked(); err != nil {
			return nil, err
		}
	}
	return b, nil
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

func (b *Broker) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Changed returns a channel that is closed at the next change of the
// registry: a profile connecting, disconnecting, waiting for approval, or
// reporting new tabs.
func (b *Broker) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

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

// cleanLabel makes an extension's label safe to show: control characters
// (a terminal escape, a newline) and bidirectional formatting characters
// (U+202E would flip a table row) become spaces, as any other process can
// claim a label (Unicode TR9 §2 lists the formatting characters).
func cleanLabel(label string) string {
	label = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, label)
	label = strings.Join(strings.Fields(label), " ")
	if label == "" {
		return "Chrome"
	}
	if r := []rune(label); len(r) > 64 {
		label = string(r[:64])
	}
	return label
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
	rec.conn = c
	rec.connectedAt = now
	rec.stored.LastSeen = now
	rec.extVersion = c.hello.ExtVersion
	rec.tabs = slices.Clone(c.hello.Tabs)
	_ = b.saveLocked()
	b.notifyLocked()
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
		delete(b.pending, id)
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

// WaitConnected blocks until at least one profile is connected or ctx ends.
func (b *Broker) WaitConnected(ctx context.Context) error {
	for {
		b.mu.Lock()
		n, ch := b.connectedLocked(), b.changed
		b.mu.Unlock()
		if n > 0 {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

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
		for id, p := range b.pending {
			names = append(names, fmt.Sprintf("%q (tether profiles approve %s)", cleanLabel(p.conn.hello.Label), shortID(id)))
		}
		slices.Sort(names)
		return fmt.Errorf("%w: a browser is waiting for the user's approval: %s", ErrNoProfile, strings.Join(names, ", "))
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

// Call sends method with params to the named profile's extension (see
// resolveNamedLocked; "" means the default profile) and decodes its result
// into result (a pointer, or nil to discard). Mutating methods on one tab
// are serialized in arrival order; for them params should be a pointer
// implementing protocol.TabScoped, and a tab number of 0 is resolved to the
// profile's current tab. timeout bounds the wait for the tab and the
// extension's work.
//
// Errors: ErrNoProfile, ErrUnknownProfile, ErrAmbiguousProfile,
// ErrProfileDisconnected, ErrDisconnected, ErrTimeout (all wrapped),
// *RemoteError for an error the extension reports, or ctx.Err().
func (b *Broker) Call(ctx context.Context, profile string, method protocol.Method, params, result any, timeout time.Duration) error {
	rec, c, err := b.pick(ctx, profile)
	if err != nil {
		return err
	}
	if report, ok := ctx.Value(resolvedKey{}).(func(string, int)); ok {
		b.mu.Lock()
		slug, tab := rec.stored.Slug, 0
		if ts, ok := params.(protocol.TabScoped); ok {
			if tab = ts.TabNumber(); tab == 0 {
				tab = rec.currentTab()
			}
		}
		b.mu.Unlock()
		report(slug, tab)
	}
	if ts, ok := params.(protocol.TabScoped); ok && method.Mutates() {
		b.mu.Lock()
		tab := ts.TabNumber()
		if tab == 0 {
			tab = rec.currentTab()
			ts.SetTabNumber(tab)
		}
		q := rec.queue(tab)
		b.mu.Unlock()
		qctx, cancel := context.WithTimeout(ctx, timeout)
		release, err := q.acquire(qctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				return fmt.Errorf("%w: tab %d stayed busy with other calls for %s", ErrTimeout, tab, timeout)
			}
			return err
		}
		defer release()
	}
	raw, err := c.call(ctx, method, params, timeout)
	if err != nil {
		return err
	}
	if result != nil {
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("decode %s result from extension: %w", method, err)
		}
	}
	return nil
}

type resolvedKey struct{}

// WithResolved returns a context whose Call reports, through report, the
// profile (slug) and tab it addresses once resolved: the named one, or the
// one picked when the call named none (the only connected profile, else
// the most recently used; its current tab). Tab is 0 for calls that
// address no tab.
func WithResolved(ctx context.Context, report func(profile string, tab int)) context.Context {
	return context.WithValue(ctx, resolvedKey{}, report)
}

// Close saves the registry and disconnects every extension; in-flight calls
// fail with ErrDisconnected. Nothing writes the registry after Close.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	var conns []*conn
	for _, r := range b.records {
		if r.conn != nil {
			conns = append(conns, r.conn)
			r.stored.LastSeen = b.cfg.Now()
		}
	}
	for _, p := range b.pending {
		conns = append(conns, p.conn)
	}
	_ = b.saveLocked()
	b.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}
