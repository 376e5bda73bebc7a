// Package broker owns the extension side of the daemon: the WebSocket route
// every browser profile's extension dials, its origin gate, the registry of
// connected profiles, and the correlation of requests with responses.
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

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/protocol"
)

// DefaultExtensionID is the id of Tether's own extension. The unpacked build
// pins it with the "key" in extension/manifest.json; an id is derived from
// that key as Chrome documents (developer.chrome.com/docs/extensions/reference/manifest/key).
const DefaultExtensionID = "aokghpkcplaclmhkoheinfbdepflapkn"

// Config configures a Broker. Zero durations take the defaults shown.
type Config struct {
	// ExtensionIDs are the allowed extension ids; the socket handshake is
	// refused unless Origin is exactly chrome-extension://<id> for one of them.
	ExtensionIDs []string
	// DaemonVersion is sent to extensions in hello_ack.
	DaemonVersion string
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
	// HelloTimeout is how long a new socket may take to send hello (10 s).
	HelloTimeout time.Duration
	// PingInterval is how often the daemon pings each extension (20 s).
	PingInterval time.Duration
	// PongWait is how long a socket may stay silent, pongs included, before it
	// is dropped (2.5 × PingInterval).
	PongWait time.Duration
	// WriteTimeout bounds one frame write (10 s).
	WriteTimeout time.Duration
	// MaxFrameBytes caps one incoming frame (32 MiB).
	MaxFrameBytes int64
	// ConnectWait is how long a call waits for a profile to (re)connect
	// before failing (5 s).
	ConnectWait time.Duration
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
}

// Profile describes one connected browser profile.
type Profile struct {
	// ID is the extension's stable profile id (a UUID).
	ID string
	// Label is the human name, e.g. "Work".
	Label string
	// Slug is the profile's short address in tool calls, e.g. "work".
	Slug string
	// ExtVersion is the extension's version.
	ExtVersion string
	// ConnectedAt is when the current socket said hello.
	ConnectedAt time.Time
}

// Broker accepts extension sockets and routes calls to them. Create it with
// New; it is safe for concurrent use.
type Broker struct {
	cfg      Config
	log      *slog.Logger
	origins  map[string]bool
	upgrader websocket.Upgrader

	mu       sync.Mutex
	conns    map[string]*conn // by profile id
	lastUsed string           // profile id of the most recently used profile
	changed  chan struct{}    // closed and replaced whenever conns changes
	closed   bool
}

// New returns a Broker for cfg.
func New(cfg Config) *Broker {
	cfg.setDefaults()
	b := &Broker{
		cfg:     cfg,
		log:     cfg.Logger,
		origins: make(map[string]bool),
		conns:   make(map[string]*conn),
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
	return b
}

// ServeHTTP is the extension WebSocket route. The handshake is refused with
// 403, before any upgrade, unless Origin is exactly chrome-extension://<id>
// for an allowed id: a WebSocket has no CORS preflight, so without this gate
// any web page the user visits could drive their browser.
func (b *Broker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	if !b.origins[origin] {
		b.log.Warn("extension socket refused: origin not allowed",
			"origin", origin, "remote", r.RemoteAddr, "allowed", len(b.origins))
		http.Error(w, "forbidden: this socket only accepts Tether's browser extension", http.StatusForbidden)
		return
	}
	ws, err := b.upgrader.Upgrade(w, r, nil)
	if err != nil {
		b.log.Info("extension socket upgrade failed", "err", err)
		return
	}
	b.handshake(ws)
}

// handshake reads the hello, answers it, registers the connection and runs it.
func (b *Broker) handshake(ws *websocket.Conn) {
	ws.SetReadLimit(64 << 10)
	_ = ws.SetReadDeadline(time.Now().Add(b.cfg.HelloTimeout))
	_, data, err := ws.ReadMessage()
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
	old, err := b.register(c)
	if err != nil {
		refuse(protocol.CodeBadRequest, err.Error())
		return
	}
	if old != nil {
		b.log.Info("extension reconnected, replacing its previous socket", "profile", shortID(hello.ProfileID))
		old.close()
	}
	go c.writeLoop()
	if err := c.sendNow(protocol.HelloAck{
		Type: protocol.TypeHelloAck, DaemonVersion: b.cfg.DaemonVersion,
		AssignedLabel: c.label, AssignedSlug: c.slug,
	}); err != nil {
		b.unregister(c)
		return
	}
	b.log.Info("extension connected", "profile", shortID(hello.ProfileID), "label", c.label,
		"slug", c.slug, "ext_version", hello.ExtVersion)
	c.readLoop()
	b.unregister(c)
	b.log.Info("extension disconnected", "profile", shortID(hello.ProfileID), "slug", c.slug)
}

// register adds c, returning the connection it replaces, if any.
func (b *Broker) register(c *conn) (*conn, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	label := strings.TrimSpace(c.hello.Label)
	if label == "" {
		label = "Chrome"
	}
	c.label = label
	taken := make(map[string]bool)
	for id, other := range b.conns {
		if id != c.hello.ProfileID {
			taken[other.slug] = true
		}
	}
	c.slug = uniqueSlug(Slugify(label), taken)
	old := b.conns[c.hello.ProfileID]
	b.conns[c.hello.ProfileID] = c
	b.notifyLocked()
	return old, nil
}

func (b *Broker) unregister(c *conn) {
	c.close()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.conns[c.hello.ProfileID] == c {
		delete(b.conns, c.hello.ProfileID)
		b.notifyLocked()
	}
}

func (b *Broker) notifyLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Profiles lists the connected profiles, ordered by slug.
func (b *Broker) Profiles() []Profile {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Profile, 0, len(b.conns))
	for _, c := range b.conns {
		out = append(out, Profile{ID: c.hello.ProfileID, Label: c.label, Slug: c.slug,
			ExtVersion: c.hello.ExtVersion, ConnectedAt: c.started})
	}
	slices.SortFunc(out, func(a, b Profile) int { return strings.Compare(a.Slug, b.Slug) })
	return out
}

// WaitConnected blocks until at least one profile is connected or ctx ends.
func (b *Broker) WaitConnected(ctx context.Context) error {
	for {
		b.mu.Lock()
		n, ch := len(b.conns), b.changed
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

// resolve picks the connection for a profile name: "" means the only
// connected profile, else the most recently used one. Otherwise the name is
// matched against profile ids and slugs exactly, then as a unique prefix.
func (b *Broker) resolveLocked(name string) (*conn, error) {
	if len(b.conns) == 0 {
		return nil, ErrNoProfile
	}
	if name == "" {
		if len(b.conns) == 1 {
			for _, c := range b.conns {
				return c, nil
			}
		}
		if c, ok := b.conns[b.lastUsed]; ok {
			return c, nil
		}
		// None used yet: the most recently connected one.
		var best *conn
		for _, c := range b.conns {
			if best == nil || c.started.After(best.started) {
				best = c
			}
		}
		return best, nil
	}
	if c, ok := b.conns[name]; ok {
		return c, nil
	}
	slug := Slugify(name)
	for _, c := range b.conns {
		if c.slug == slug {
			return c, nil
		}
	}
	var matches []*conn
	for _, c := range b.conns {
		if strings.HasPrefix(c.slug, slug) || strings.HasPrefix(c.hello.ProfileID, name) {
			matches = append(matches, c)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return nil, fmt.Errorf("%w %q: connected profiles are %s", ErrUnknownProfile, name, b.describeLocked(nil))
	default:
		return nil, fmt.Errorf("%w %q: it matches %s; use the full slug", ErrAmbiguousProfile, name, b.describeLocked(matches))
	}
}

func (b *Broker) describeLocked(only []*conn) string {
	var names []string
	for _, c := range b.conns {
		if only == nil || slices.Contains(only, c) {
			names = append(names, fmt.Sprintf("%q (%s, id %s…)", c.slug, c.label, shortID(c.hello.ProfileID)))
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// Call sends method with params to the extension of the named profile (see
// resolve for how names match) and decodes its result into result (a pointer,
// or nil to discard). If no profile is connected yet, it waits up to
// Config.ConnectWait for one. timeout bounds the extension's work.
//
// Errors: ErrNoProfile, ErrUnknownProfile, ErrAmbiguousProfile,
// ErrDisconnected, ErrTimeout (all wrapped), *RemoteError for an error the
// extension reports, or ctx.Err().
func (b *Broker) Call(ctx context.Context, profile string, method protocol.Method, params, result any, timeout time.Duration) error {
	c, err := b.pick(ctx, profile)
	if err != nil {
		return err
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

// pick resolves profile, waiting up to ConnectWait when nothing is connected.
func (b *Broker) pick(ctx context.Context, profile string) (*conn, error) {
	deadline := time.NewTimer(b.cfg.ConnectWait)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, ErrClosed
		}
		c, err := b.resolveLocked(profile)
		ch := b.changed
		if err == nil {
			b.lastUsed = c.hello.ProfileID
		}
		b.mu.Unlock()
		if err == nil || err != ErrNoProfile {
			return c, err
		}
		select {
		case <-ch:
		case <-deadline.C:
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close disconnects every extension; in-flight calls fail with ErrDisconnected.
func (b *Broker) Close() {
	b.mu.Lock()
	b.closed = true
	conns := make([]*conn, 0, len(b.conns))
	for _, c := range b.conns {
		conns = append(conns, c)
	}
	b.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}
