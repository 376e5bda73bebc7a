package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/protocol"
)

// conn is one extension's live WebSocket. It follows gorilla/websocket's
// chat example: one reader goroutine, one writer goroutine (the only one
// that writes to the socket), a buffered send channel, deadlines and
// ping/pong.
type conn struct {
	ws      *websocket.Conn
	cfg     *Config
	log     *slog.Logger
	hello   protocol.Hello
	started time.Time
	// remote: the socket came through remote mode's reverse proxy
	// (WithRemote); it is never auto-approved.
	remote bool
	// proof is what this socket's proofs covered (its hello's Proof is
	// checked against it in admit).
	proof socketProof
	// onTabs receives the extension's tabs_changed reports.
	onTabs func(*conn, protocol.TabsChanged)
	// onDownload receives the extension's download frames.
	onDownload func(*conn, protocol.DownloadEvent)

	send      chan []byte
	closed    chan struct{} // closed once the connection is finished
	closeOnce sync.Once

	nextID  atomic.Uint64
	mu      sync.Mutex
	pending map[string]chan protocol.Response
	lastUse atomic.Int64 // unix nanos of the last call routed here
	// rtt is the last measured round-trip time of a ping (nanoseconds, 0:
	// none yet); pingSent is the unix nanos of the ping not yet answered
	// (0: none).
	rtt      atomic.Int64
	pingSent atomic.Int64
	// paired is set once the socket is a profile's (attachLocked): until
	// then its frames are capped at MaxUnpairedFrame.
	paired atomic.Bool
}

// Link limits (remote mode, docs/remote.md).
const (
	// SlowLinkRTT is the round-trip time from which a profile's link is
	// reported as slow: a call that times out on it is blamed on the link,
	// not the page.
	SlowLinkRTT = time.Second
	// MaxLinkAllowance caps what the link adds to a call's timeout.
	MaxLinkAllowance = 30 * time.Second
)

// linkRTT is the round-trip time of the profile's link to the daemon: the
// last ping's, or longer when a ping has waited longer for its pong (a link
// that just went slow). 0 until the first pong.
func (c *conn) linkRTT() time.Duration {
	rtt := time.Duration(c.rtt.Load())
	if sent := c.pingSent.Load(); sent != 0 {
		if waited := time.Since(time.Unix(0, sent)); waited > rtt && rtt > 0 || waited > SlowLinkRTT {
			rtt = waited
		}
	}
	return rtt
}

// linkAllowance is what the link adds to a call's timeout: two round
// trips (the request out and the answer back, with slack), at most
// MaxLinkAllowance. The timeout sent to the extension leaves it out.
func linkAllowance(rtt time.Duration) time.Duration {
	return min(2*rtt, MaxLinkAllowance)
}

// ping writes a ping carrying its send time (browsers echo a ping's data in
// their pong by themselves: RFC 6455 §5.5.3), so the pong gives the
// round-trip time. Only writeLoop calls it.
func (c *conn) ping() error {
	now := time.Now().UnixNano()
	// Marked before the write: the pong can be read (pong) before
	// WriteMessage returns, and a mark set after it would then wait for
	// the next ping's pong, counted as a round trip of up to PingInterval.
	c.pingSent.CompareAndSwap(0, now)
	_ = c.ws.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout))
	return c.ws.WriteMessage(websocket.PingMessage, []byte(strconv.FormatInt(now, 10)))
}

// pong records the round-trip time of the ping that data echoes.
func (c *conn) pong(data string) {
	sent, err := strconv.ParseInt(data, 10, 64)
	if err != nil || sent <= 0 {
		return
	}
	if rtt := time.Now().UnixNano() - sent; rtt >= 0 {
		c.rtt.Store(rtt)
	}
	// The oldest unanswered ping is answered by its own pong or a later
	// one's (the link is up); an earlier ping's late pong leaves it waiting.
	if waiting := c.pingSent.Load(); waiting != 0 && sent >= waiting {
		c.pingSent.CompareAndSwap(waiting, 0)
	}
}

func newConn(ws *websocket.Conn, cfg *Config, log *slog.Logger, hello protocol.Hello) *conn {
	return &conn{
		ws:      ws,
		cfg:     cfg,
		log:     log,
		hello:   hello,
		started: time.Now(),
		send:    make(chan []byte, 64),
		closed:  make(chan struct{}),
		pending: make(map[string]chan protocol.Response),
	}
}

// shortID is the profile id prefix that may appear in logs and results.
func shortID(profileID string) string {
	if len(profileID) > 8 {
		return profileID[:8]
	}
	return profileID
}

// close ends the connection and fails every in-flight call with ErrDisconnected.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		close(c.closed)
		_ = c.ws.Close()
		c.mu.Lock()
		pending := c.pending
		c.pending = nil
		c.mu.Unlock()
		for _, ch := range pending {
			close(ch) // a closed channel means ErrDisconnected
		}
	})
}

// writeLoop is the only writer to the socket.
func (c *conn) writeLoop() {
	ticker := time.NewTicker(c.cfg.PingInterval)
	defer ticker.Stop()
	defer c.close()
	// The first ping goes out at once: the link's round-trip time is known
	// from the start.
	if err := c.ping(); err != nil {
		c.log.Info("extension socket ping failed", "profile", shortID(c.hello.ProfileID), "err", err)
		return
	}
	for {
		select {
		case msg := <-c.send:
			if msg == nil { // closeAfterFlush's marker: everything before it is written
				_ = c.ws.WriteControl(websocket.CloseMessage,
					websocket.FormatCloseMessage(websocket.ClosePolicyViolation, ""), time.Now().Add(time.Second))
				return
			}
			_ = c.ws.SetWriteDeadline(time.Now().Add(c.cfg.WriteTimeout))
			if err := c.ws.WriteMessage(websocket.TextMessage, msg); err != nil {
				c.log.Info("extension socket write failed", "profile", shortID(c.hello.ProfileID), "err", err)
				return
			}
		case <-ticker.C:
			if err := c.ping(); err != nil {
				c.log.Info("extension socket ping failed", "profile", shortID(c.hello.ProfileID), "err", err)
				return
			}
		case <-c.closed:
			_ = c.ws.WriteControl(websocket.CloseMessage,
				websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
			return
		}
	}
}

// readLoop reads frames until the socket fails. A frame that does not decode
// is logged (by size, never by content: pages hold private data) and dropped;
// it does not end the connection.
func (c *conn) readLoop() {
	defer c.close()
	c.ws.SetReadLimit(c.cfg.MaxFrameBytes)
	_ = c.ws.SetReadDeadline(time.Now().Add(c.cfg.PongWait))
	c.ws.SetPongHandler(func(data string) error {
		c.pong(data)
		return c.ws.SetReadDeadline(time.Now().Add(c.cfg.PongWait))
	})
	for {
		data, err := c.readFrame()
		if errors.Is(err, errUnpairedFrame) {
			c.log.Warn("extension socket closed: a frame over the limit of a socket not paired yet", "profile", shortID(c.hello.ProfileID), "limit", MaxUnpairedFrame)
			return
		}
		if err != nil {
			if websocket.IsUnexpectedCloseError(err, websocket.CloseNormalClosure, websocket.CloseGoingAway, websocket.CloseNoStatusReceived) {
				c.log.Info("extension socket closed", "profile", shortID(c.hello.ProfileID), "err", err)
			}
			return
		}
		_ = c.ws.SetReadDeadline(time.Now().Add(c.cfg.PongWait))
		frame, err := protocol.DecodeFrame(data)
		if err != nil {
			// err quotes no content of the frame (protocol.DecodeError).
			c.log.Warn("malformed frame from extension dropped", "profile", shortID(c.hello.ProfileID), "bytes", len(data), "err", err)
			continue
		}
		switch f := frame.(type) {
		case *protocol.Response:
			c.deliver(*f)
		case *protocol.TabsChanged:
			if c.onTabs != nil {
				c.onTabs(c, *f)
			}
		case *protocol.DownloadEvent:
			if c.onDownload != nil {
				c.onDownload(c, *f)
			}
		}
	}
}

// errUnpairedFrame: a socket not paired yet sent a frame over
// MaxUnpairedFrame.
var errUnpairedFrame = errors.New("frame over the limit of a socket not paired yet")

// readFrame reads the next message. Its limit is chosen once the message
// has begun (the socket may be approved while it waits): MaxFrameBytes
// (the socket's own read limit) when paired, else MaxUnpairedFrame
// (errUnpairedFrame past it), so an unpaired socket never makes the
// daemon hold more than that.
func (c *conn) readFrame() ([]byte, error) {
	_, r, err := c.ws.NextReader()
	if err != nil {
		return nil, err
	}
	if c.paired.Load() {
		return io.ReadAll(r)
	}
	data, err := io.ReadAll(io.LimitReader(r, MaxUnpairedFrame+1))
	if err == nil && len(data) > MaxUnpairedFrame {
		return nil, errUnpairedFrame
	}
	return data, err
}

func (c *conn) deliver(resp protocol.Response) {
	c.mu.Lock()
	ch, ok := c.pending[resp.ID]
	if ok {
		delete(c.pending, resp.ID)
	}
	c.mu.Unlock()
	if !ok {
		// The call timed out or was cancelled before the answer came.
		c.log.Debug("late response from extension dropped", "profile", shortID(c.hello.ProfileID), "id", resp.ID)
		return
	}
	ch <- resp // buffered, capacity 1
}

// call sends one request and waits for its response, the context's end, the
// timeout, or the socket's close, whichever comes first. Every request
// carries the idempotent call of ctx (protocol.WithIdempotentCall: key,
// tool, arguments' fingerprint), if any, so the extension never acts twice
// for one key and refuses the key for another call.
//
// The result is decoded, checked and unpacked once (protocol.DecodeResult):
// a pointer to the method's result type, as protocol.NewResult gives.
func (c *conn) call(ctx context.Context, method protocol.Method, params any, timeout time.Duration) (any, error) {
	c.lastUse.Store(time.Now().UnixNano())
	rawParams, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode %s params: %w", method, err)
	}
	id := strconv.FormatUint(c.nextID.Add(1), 10)
	idem := protocol.IdempotentCallFrom(ctx)
	sentBefore, sent := false, func() {}
	if idem.Key != "" && idem.Sending != nil && method.Mutates() {
		sentBefore, sent = idem.Sending(method)
	}
	frame, err := json.Marshal(protocol.Request{
		Type:            protocol.TypeRequest,
		ID:              id,
		Method:          method,
		Params:          rawParams,
		TimeoutMs:       int(timeout / time.Millisecond),
		IdempotencyKey:  idem.WireKey(),
		Tool:            idem.Tool,
		CallFingerprint: idem.Fingerprint,
		SentBefore:      sentBefore,
	})
	if err != nil {
		return nil, fmt.Errorf("encode %s request: %w", method, err)
	}
	notSent := func(err error) error { return fmt.Errorf("%w; nothing reached it: retry once it reconnects", err) }
	// maybeActed is for a failure after the request was queued: the
	// extension may have received it, so an action may have run.
	maybeActed := func(err error) error {
		if method.Mutates() {
			return fmt.Errorf("%w; this %s call may or may not have acted on the page, and Tether does not send it again: take a snapshot to see before you repeat it", err, method)
		}
		return fmt.Errorf("%w; nothing was changed: retry once it reconnects", err)
	}
	ch := make(chan protocol.Response, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return nil, notSent(ErrDisconnected)
	}
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		if c.pending != nil {
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}

	// The extension gets timeout for its own work; the daemon waits that
	// long plus the link's round trips (linkAllowance).
	rtt := c.linkRTT()
	timer := time.NewTimer(timeout + linkAllowance(rtt))
	defer timer.Stop()
	select {
	case c.send <- frame:
		// From here it may reach the extension: a repeat of the call must
		// not act where the extension holds no record of it.
		sent()
	case <-c.closed:
		return nil, notSent(ErrDisconnected)
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	case <-timer.C:
		forget()
		return nil, fmt.Errorf("%w: %s did not start within %s; nothing reached it", ErrTimeout, method, timeout)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return nil, maybeActed(ErrDisconnected)
		}
		if resp.Error != nil {
			return nil, &RemoteError{Code: resp.Error.Code, Message: resp.Error.Message}
		}
		// The result must fit its method's schema; the value decoded to check
		// it is what the caller gets (Broker.Call's setResult).
		v, err := protocol.DecodeResult(method, resp.Result)
		if err != nil {
			c.log.Warn("malformed result from extension", "profile", shortID(c.hello.ProfileID), "bytes", len(resp.Result), "err", err)
			return nil, fmt.Errorf("the extension sent a malformed %s result (%w); update the Tether extension to this daemon's version", method, err)
		}
		return v, nil
	case <-ctx.Done():
		// The caller gave up (an HTTP client went away) after the request
		// was sent: the extension may still act on it.
		forget()
		if method.Mutates() {
			return nil, maybeActed(ctx.Err())
		}
		return nil, ctx.Err()
	case <-timer.C:
		forget()
		if now := c.linkRTT(); max(now, rtt) >= SlowLinkRTT {
			return nil, maybeActed(fmt.Errorf("%w: %s got no answer within %s: profile %q's link is slow (RTT %d ms), so this is the network, not the page",
				ErrSlowLink, method, timeout+linkAllowance(rtt), c.hello.Label, max(now, rtt).Milliseconds()))
		}
		return nil, maybeActed(fmt.Errorf("%w: %s took longer than %s", ErrTimeout, method, timeout))
	}
}

// sendNow queues one frame, failing if the connection is gone.
func (c *conn) sendNow(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	select {
	case c.send <- b:
		return nil
	case <-c.closed:
		return ErrDisconnected
	}
}

// closeAfterFlush closes the connection once every frame queued before this
// call has been written.
func (c *conn) closeAfterFlush() {
	select {
	case c.send <- nil:
	case <-c.closed:
	}
}

// queueFirst queues v without blocking; used for hello_ack, which is queued
// before the connection becomes visible to callers, so the buffer has room.
func (c *conn) queueFirst(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	select {
	case c.send <- b:
	case <-c.closed:
	default:
		c.log.Error("hello_ack could not be queued", "profile", shortID(c.hello.ProfileID))
	}
}
