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
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"sync"
	"time"

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
	// said hello; a newer one closes the oldest of them (see ServeHTTP).
	// A new profile's socket is safe once its hello is read, about one
	// round trip after it opens: a flood must open this many sockets within
	// that time to close it, so the bound is generous (each costs ~70 KB
	// for at most HelloTimeout).
	MaxAwaitingHello = 64
	// MaxPendingPairings is the most new profiles waiting for approval,
	// counted apart from MaxProfiles; a newer one pushes the oldest out
	// (see holdLocked).
	MaxPendingPairings = 16
	// MaxUnpairedFrame caps one frame of a socket not paired yet: its
	// hello, and anything it sends while it waits for approval (any local
	// program can open one; MaxFrameBytes is for paired extensions).
	MaxUnpairedFrame = 1 << 20
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
	// PairingKey is the daemon's pairing key (32 bytes; the daemon keeps it
	// in config.Paths.PairingKey and writes it into the extension folders
	// it writes): every challenge carries a proof keyed on it
	// (protocol.Challenge.PairingProof). Nil: a random key for this Broker
	// only, which no extension folder holds.
	PairingKey []byte
	// AutoApprove pairs new profiles without asking the user (tests, a
	// server's own headless Chrome); never a socket that came through
	// remote mode's reverse proxy (WithRemote).
	AutoApprove bool
	// HelloTimeout is how long a new socket may take to send hello (5 s;
	// the extension sends it as soon as the socket opens).
	HelloTimeout time.Duration
	// PairingTTL is how long a new profile may wait for approval before it
	// is let go (10 min); its extension asks again when it reconnects.
	PairingTTL time.Duration
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
	// LeaseWindow is how long a session keeps a tab after its last action
	// there, against other sessions' actions (DefaultLeaseWindow).
	LeaseWindow time.Duration
	// CloseAgentTabsAfter, when set, closes the tabs an app owns this long
	// after its last MCP session ended (the closeAgentTabs setting: 10
	// min); 0 leaves them open.
	CloseAgentTabsAfter time.Duration
	// MaxSessions caps the AI app sessions kept (DefaultMaxSessions); see
	// makeRoomLocked and EndIdleSessions.
	MaxSessions int
	// CheckExtension, when set, is called (on its own goroutine) with each
	// accepted hello: a non-nil frame is sent to that extension (it has
	// just been rewritten: extupdate), and note, when not empty, says the
	// extension is outdated and how to reload it (Profile.ExtOutdated).
	CheckExtension func(protocol.Hello) (reload *protocol.Reload, note string)
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.HelloTimeout == 0 {
		c.HelloTimeout = 5 * time.Second
	}
	if c.PairingTTL == 0 {
		c.PairingTTL = 10 * time.Minute
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
	if c.LeaseWindow == 0 {
		c.LeaseWindow = DefaultLeaseWindow
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if len(c.PairingKey) == 0 {
		c.PairingKey, _ = hex.DecodeString(protocol.NewNonce())
	}
}

// Broker accepts extension sockets and routes calls to them. Create it with
// New; it is safe for concurrent use.
type Broker struct {
	cfg      Config
	log      *slog.Logger
	origins  map[string]bool
	upgrader websocket.Upgrader

	mu      sync.Mutex
	records map[string]*record // by profile id
	// onDownload handles download frames (OnDownload); nil drops them.
	onDownload func(profile string, ev protocol.DownloadEvent)
	pending    map[string]*pendingPairing // by profile id
	// remembered are entries that left pending without a decision, and
	// decided the user's answers about them (see pairing.go); by profile id.
	remembered map[string]*rememberedPairing
	decided    map[string]*decision
	// refused are the browsers refused recently that stopped asking
	// (refusals.go), by profile id.
	refused map[string]*refusal
	// codeKey derives pairing codes from profile ids (codeFor).
	codeKey [32]byte
	silent  []*silentSocket // sockets waiting for hello, oldest first
	// namedWaiting counts, per paired profile, the sockets naming it that
	// wait for their hello outside silent (holdNamed).
	namedWaiting map[string]int
	// namedNonces are the nonces of the named proofs accepted, oldest
	// first in namedOrder (MaxNamedNonces).
	namedNonces map[string]struct{}
	namedOrder  []string
	changed     chan struct{} // closed and replaced on every change
	closed      bool
	// Several AI apps (owners.go): MCP sessions by id, tab leases, and the
	// pending closing of apps' tabs by app name.
	sessions    map[string]*session
	leases      map[leaseKey]*lease
	closeTimers map[string]*time.Timer
}

// New returns a Broker for cfg, loading the persisted registry and pruning
// records unseen for PruneAfter.
func New(cfg Config) (*Broker, error) {
	cfg.setDefaults()
	b := &Broker{
		cfg:          cfg,
		log:          cfg.Logger,
		origins:      make(map[string]bool),
		records:      make(map[string]*record),
		sessions:     make(map[string]*session),
		leases:       make(map[leaseKey]*lease),
		closeTimers:  make(map[string]*time.Timer),
		pending:      make(map[string]*pendingPairing),
		remembered:   make(map[string]*rememberedPairing),
		decided:      make(map[string]*decision),
		refused:      make(map[string]*refusal),
		namedWaiting: make(map[string]int),
		namedNonces:  make(map[string]struct{}),
		changed:      make(chan struct{}),
	}
	if _, err := rand.Read(b.codeKey[:]); err != nil {
		return nil, fmt.Errorf("pairing code key: %w", err)
	}
	for _, id := range cfg.ExtensionIDs {
		b.origins["chrome-extension://"+id] = true
	}
	b.upgrader = websocket.Upgrader{
		ReadBufferSize:  32 << 10,
		WriteBufferSize: 32 << 10,
		// The origin was checked, exactly, before Upgrade is called.
		CheckOrigin:  func(*http.Request) bool { return true },
		Subprotocols: []string{protocol.Subprotocol},
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

// Call sends method with params to the named profile's extension (see
// resolveNamedLocked; "" means the default profile, or the caller's) and
// decodes its result into result (a pointer, or nil to discard). The
// caller (WithCaller) decides the tab of params implementing
// protocol.TabScoped whose tab is 0 and may be refused a named one
// (resolveTabLocked: ErrNotYourTab, ErrTabInUse, ErrNoOwnTab, ErrUnknownTab); a tab it
// opens is its own (protocol.Opener), and the tab it used becomes its
// current one. Mutating methods on one tab are serialized in arrival
// order. timeout bounds the wait for the tab and the extension's work.
//
// Errors: ErrNoProfile, ErrUnknownProfile, ErrAmbiguousProfile,
// ErrProfileDisconnected, ErrDisconnected, ErrTimeout, ErrNotYourTab,
// ErrTabInUse, ErrNoOwnTab, ErrUnknownTab (all wrapped), *RemoteError for an error the
// extension reports, or ctx.Err().
func (b *Broker) Call(ctx context.Context, profile string, method protocol.Method, params, result any, timeout time.Duration) error {
	caller := callerOf(ctx)
	rec, c, err := b.pickFor(ctx, profile, caller)
	if err != nil {
		return err
	}
	ts, scoped := params.(protocol.TabScoped)
	b.mu.Lock()
	tab, open := 0, false
	var end func()
	if scoped {
		_, opens := params.(*protocol.NavigateParams)
		tab, open, err = b.resolveTabLocked(rec, caller, ts.TabNumber(), method.Mutates(), opens)
		if err != nil {
			b.mu.Unlock()
			return err
		}
		ts.SetTabNumber(tab)
		if np, ok := params.(*protocol.NavigateParams); ok && open {
			np.NewTab = true
		}
		if caller.Session != "" && method.Mutates() && tab > 0 {
			end = b.beginLocked(rec, caller, tab)
		}
	}
	if o, ok := params.(protocol.Opener); ok && caller.Session != "" {
		o.SetOwner(&protocol.TabOwner{App: caller.App, Session: caller.Session})
	}
	if caller.Session != "" {
		s := b.sessionLocked(caller)
		if tab > 0 {
			s.profile, s.tab = rec.stored.ID, tab
		}
		s.calls++
		defer b.callEnded(s)
	}
	reached := Resolved{ID: rec.stored.ID, Slug: rec.stored.Slug, Tab: tab}
	b.mu.Unlock()
	if end != nil {
		defer end()
	}
	report, _ := ctx.Value(resolvedKey{}).(func(Resolved))
	if report != nil && !open {
		report(reached)
	}
	if scoped && method.Mutates() {
		b.mu.Lock()
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
	decoded, err := c.call(ctx, method, params, timeout)
	if err != nil {
		return err
	}
	if result != nil {
		if err := setResult(result, decoded); err != nil {
			return fmt.Errorf("decode %s result from extension: %w", method, err)
		}
		// The extension's Current is its own (the tab used last by anyone);
		// a session's list marks the tab its calls without one address.
		if tl, ok := result.(*protocol.TabsListResult); ok && caller.Session != "" {
			b.mu.Lock()
			markCurrent(tl.Tabs, b.currentForLocked(rec, caller))
			b.mu.Unlock()
		}
		// A tab the call opened becomes the caller's current one (a tab
		// read_url closes again does not).
		r, ok := result.(protocol.TabResult)
		if rp, read := params.(*protocol.ReadURLParams); read && rp.CloseAfter {
			ok = false
		}
		np, nav := params.(*protocol.NavigateParams)
		opened := open || nav && np.NewTab || method == protocol.MethodTabNew || method == protocol.MethodReadURL
		if ok && r.ResultTab() > 0 && opened {
			if report != nil && open {
				reached.Tab = r.ResultTab()
				report(reached)
			}
			b.mu.Lock()
			if s := b.sessions[caller.Session]; s != nil && caller.Session != "" {
				s.profile, s.tab = rec.stored.ID, r.ResultTab()
			}
			b.mu.Unlock()
		}
	}
	return nil
}

type resolvedKey struct{}

// setResult stores decoded, a pointer to a method's result as
// protocol.DecodeResult gives it (checked, a packed snapshot unpacked), into
// result, a pointer the caller gave: as it is when both are the same type
// (a snapshot's megabytes were decoded twice), else through JSON (a caller
// that wants a part of the result).
func setResult(result, decoded any) error {
	rv, dv := reflect.ValueOf(result), reflect.ValueOf(decoded)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Type() == dv.Type() {
		rv.Elem().Set(dv.Elem())
		return nil
	}
	raw, err := json.Marshal(decoded)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, result)
}

// Resolved is what a Call addressed once resolved (WithResolved).
type Resolved struct {
	// ID and Slug name the profile: the named one, or the one picked when
	// the call named none (the only connected profile, else the most
	// recently used).
	ID, Slug string
	// Tab is the tab's number: the named one, the caller's current one, or
	// the one the call opened; 0 for calls that address no tab.
	Tab int
}

// WithResolved returns a context whose Call reports, through report, the
// profile and tab it addresses once resolved, before it sends anything (a
// call that opens a tab: once the tab is open).
func WithResolved(ctx context.Context, report func(Resolved)) context.Context {
	return context.WithValue(ctx, resolvedKey{}, report)
}

// Close saves the registry and disconnects every extension (and every
// socket still waiting for approval or for its hello); in-flight calls
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
		p.expiry.Stop()
		conns = append(conns, p.conn)
	}
	silent := b.silent
	b.silent = nil
	for app, t := range b.closeTimers {
		t.Stop()
		delete(b.closeTimers, app)
	}
	_ = b.saveLocked()
	b.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
	for _, s := range silent {
		_ = s.ws.Close()
	}
}
