// Package bridge is `tether mcp`: an MCP stdio server that an AI app launches,
// relaying every JSON-RPC message to the daemon's streamable HTTP endpoint and
// every message the daemon sends back to stdout.
//
// Stdio framing follows the MCP spec (transports, "stdio"): one JSON-RPC
// message per line, UTF-8, no embedded newlines; nothing but MCP is written to
// stdout. Logs go to stderr and the bridge log file.
//
// At most once. The bridge never sends a tools/call again that the daemon
// may have started: when the connection ends after the request went out and
// before its answer (the daemon crashed or was killed), only a tool that
// tools/list marked readOnlyHint is sent again (after reconnecting); any
// other gets a tool error starting with OutcomeUnknown. A request the
// daemon provably did not handle (connection refused, 401, 404 for an
// unknown session, 503 while the daemon drains before a restart) is sent
// again after reconnecting. Every tools/call carries an idempotency key in
// _meta (protocol.MetaIdempotencyKey; the client's own is kept), which the
// extension uses to answer a repeat without acting again.
package bridge

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// Config configures a Bridge.
type Config struct {
	// Endpoint returns the daemon's MCP URL and bearer token; it is called
	// before the first message and again after a failed request, so it may
	// (re)start the daemon.
	Endpoint func(ctx context.Context) (url, token string, err error)
	// Logger for the bridge; never stdout.
	Logger *slog.Logger
	// Client is the HTTP client (default: no overall timeout, since tool calls
	// and the notification stream may last long).
	Client *http.Client
	// DrainWait bounds how long a request keeps being retried while the
	// daemon answers 503 (it drains its calls before a restart, e.g. for
	// `tether token rotate`); default 90 s, longer than any call's timeout.
	DrainWait time.Duration
}

// OutcomeUnknown starts the tool error of a call that was interrupted after
// it reached the daemon, which may have acted on it.
const OutcomeUnknown = "outcome unknown: the Tether daemon stopped during this call, after it had received it, so the action may have happened, or may still be under way in the browser (a page loading); take a snapshot to see, and wait for a load to finish, before retrying"

// Bridge relays one MCP session between stdio and the daemon.
type Bridge struct {
	cfg Config
	log *slog.Logger

	outMu sync.Mutex
	out   *bufio.Writer

	// session names this bridge's session for good (protocol.HeaderSession).
	session string

	mu              sync.Mutex
	url, token      string
	sessionID       string
	protocolVersion string
	listening       bool
	// initMsg and initialized are the client's handshake, replayed when the
	// daemon restarted and forgot the session.
	initMsg     []byte
	initialized bool
	// gen counts sessions; a request that failed under gen g triggers one
	// recovery per g, however many requests failed at once.
	gen     int
	recover sync.Mutex
	// readOnly is each tool's readOnlyHint, from the tools/list answers
	// relayed; a tool not in it counts as one that acts.
	readOnly map[string]bool
	// toolsLearned is closed once a tools/list answer was read (tests wait on it).
	toolsLearned     chan struct{}
	toolsLearnedOnce sync.Once
}

// Errors that mean the daemon restarted or went away: the bridge then
// reaches the (possibly new) daemon, initializes again and retries once.
var (
	errUnreachable = errors.New("the Tether daemon does not answer")
	errSessionLost = errors.New("the Tether daemon no longer knows this session (it restarted)")
	// errUnauthorized: the token was refused; after `tether token rotate`
	// the reconnect reads the new one from the config dir.
	errUnauthorized = errors.New("the daemon refused the token")
	// errDraining: the daemon answered 503 (it finishes its calls before
	// restarting) without handling the request.
	errDraining = errors.New("the Tether daemon is restarting")
	// errInterrupted: the request reached the daemon and the connection
	// ended before its answer; the daemon may have acted on it.
	errInterrupted = errors.New("the connection to the Tether daemon ended during the call")
)

// notHandled reports whether err proves that the daemon did not handle the
// request: it could not be delivered (errUnreachable: refused connection),
// or the daemon refused it before handling (401, 404 unknown session, 503).
func notHandled(err error) bool {
	return errors.Is(err, errUnreachable) || errors.Is(err, errSessionLost) ||
		errors.Is(err, errUnauthorized) || errors.Is(err, errDraining)
}

// New returns a Bridge.
func New(cfg Config) *Bridge {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if cfg.DrainWait == 0 {
		cfg.DrainWait = 90 * time.Second
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // never fails (crypto/rand)
	return &Bridge{cfg: cfg, log: cfg.Logger, session: "bridge-" + hex.EncodeToString(raw[:]), readOnly: map[string]bool{}, toolsLearned: make(chan struct{})}
}

// message is the part of a JSON-RPC message the bridge looks at.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

// toolName is a tools/call's params.name ("" for anything else).
func (m message) toolName() string {
	if m.Method != "tools/call" {
		return ""
	}
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(m.Params, &p)
	return p.Name
}

func (m message) isRequest() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

// maxLine caps one stdin message (64 MiB).
const maxLine = 64 << 20

// Run relays until in reaches EOF or ctx ends. Requests are relayed
// concurrently, so a long tool call does not hold up a ping; initialize and
// notifications are relayed in order.
func (b *Bridge) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	b.out = bufio.NewWriter(out)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	lines := newLineReader(in, maxLine)
	var wg sync.WaitGroup
	for lines.next() {
		if lines.tooLong {
			b.log.Warn("message on stdin too large; skipped", "limit_bytes", maxLine)
			b.writeError(json.RawMessage("null"), -32600, fmt.Sprintf("message too large: one stdin message may be at most %d MiB; send less (e.g. type a shorter text)", maxLine>>20))
			continue
		}
		line := bytes.TrimSpace(lines.line)
		if len(line) == 0 {
			continue
		}
		var m message
		if err := json.Unmarshal(line, &m); err != nil {
			b.log.Warn("malformed message on stdin", "bytes", len(line), "err", err)
			b.writeError(json.RawMessage("null"), -32700, "parse error: each stdin line must be one JSON-RPC message")
			continue
		}
		msg := append([]byte(nil), line...)
		if m.isRequest() && m.Method != "initialize" {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.relay(ctx, msg, m)
			}()
			continue
		}
		b.relay(ctx, msg, m)
		if m.Method == "notifications/initialized" {
			b.startListening(ctx)
			wg.Add(1)
			go func() {
				defer wg.Done()
				b.learnToolList(ctx)
			}()
		}
	}
	wg.Wait()
	b.endSession()
	if err := lines.err; err != nil {
		return fmt.Errorf("read stdin: %w", err)
	}
	return nil
}

// lineReader reads newline-delimited messages of at most max bytes; a
// longer line is skipped to its end and reported (tooLong), so one
// oversized message costs that message, not the session.
type lineReader struct {
	r       *bufio.Reader
	max     int
	line    []byte
	tooLong bool
	err     error
}

func newLineReader(r io.Reader, max int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next reads the next line into line (without its newline); false at EOF or
// on a read error (err).
func (l *lineReader) next() bool {
	l.line, l.tooLong = l.line[:0], false
	for {
		chunk, err := l.r.ReadSlice('\n')
		if !l.tooLong {
			if len(l.line)+len(chunk) > l.max+1 {
				l.tooLong, l.line = true, l.line[:0]
			} else {
				l.line = append(l.line, chunk...)
			}
		}
		switch {
		case err == nil:
			l.line = bytes.TrimSuffix(l.line, []byte("\n"))
			return true
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(l.line) > 0 || l.tooLong {
				return true
			}
			return false
		default:
			l.err = err
			return false
		}
	}
}

// relay POSTs one message and writes whatever comes back. A request the
// daemon provably did not handle (see notHandled) is sent again after
// reconnecting (finding or starting the daemon and replaying the client's
// initialize): while the daemon drains (503), for up to DrainWait; else
// twice. A request interrupted after it reached the daemon is sent again
// only if that cannot act twice (see resendable); a tools/call that may
// act gets a tool error starting with OutcomeUnknown instead. Every request
// gets an answer, so the client never waits forever.
func (b *Bridge) relay(ctx context.Context, msg []byte, m message) {
	if m.Method == "initialize" {
		b.mu.Lock()
		b.initMsg = msg
		b.mu.Unlock()
	}
	ownKey := false
	if m.Method == "tools/call" {
		msg, ownKey = withIdempotencyKey(msg, false)
	}
	drainUntil := time.Now().Add(b.cfg.DrainWait)
	backoff := 100 * time.Millisecond
	retries, resent := 0, false
	// retry says whether a request the daemon did not handle is sent again
	// (after a pause while the daemon drains).
	retry := func(err error) bool {
		switch {
		case errors.Is(err, errDraining) && time.Now().Before(drainUntil):
			b.log.Info("daemon is draining before a restart; will send again", "method", m.Method)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return false
			}
			backoff = min(backoff*2, 2*time.Second)
			return true
		case notHandled(err) && !errors.Is(err, errDraining) && retries < 3:
			retries++
			return true
		}
		return false
	}
	for {
		gen := b.generation()
		err := b.post(ctx, msg, m, true)
		if err == nil {
			if m.Method == "notifications/initialized" {
				b.mu.Lock()
				b.initialized = true
				b.mu.Unlock()
			}
			return
		}
		for err != nil {
			switch {
			case m.Method == "initialize" || ctx.Err() != nil:
				b.fail(m, err)
				return
			case errors.Is(err, errInterrupted):
				if resent || !b.resendable(m) {
					if m.Method == "tools/call" {
						b.log.Warn("call interrupted after it reached the daemon; not sending it again", "tool", m.toolName(), "err", err)
						b.writeToolError(m.ID, m.toolName()+": "+OutcomeUnknown)
					} else {
						b.fail(m, err)
					}
					return
				}
				resent = true
				b.log.Info("call interrupted; sending it again (it cannot act twice)", "method", m.Method, "tool", m.toolName())
				if ownKey {
					msg, _ = withIdempotencyKey(msg, true) // a new attempt of a read
				}
			case !retry(err):
				b.fail(m, err)
				return
			}
			b.log.Info("daemon connection lost; reconnecting", "err", err)
			// A failed reconnect is judged like a failed post, except that
			// the request itself was not sent again: a replayed handshake
			// cut off says nothing about it.
			err = b.reconnect(ctx, gen)
			if errors.Is(err, errInterrupted) {
				err = fmt.Errorf("%w: %v", errUnreachable, err)
			}
		}
	}
}

// fail logs a message that could not be relayed and answers it, if it is a
// request, with a JSON-RPC error.
func (b *Bridge) fail(m message, err error) {
	b.log.Warn("relay to daemon failed", "method", m.Method, "err", err)
	if !m.isRequest() {
		return
	}
	text := "tether mcp could not reach the Tether daemon: " + err.Error()
	if errors.Is(err, errInterrupted) {
		text = "the connection to the Tether daemon ended before its answer (the daemon restarted or stopped); retry"
	}
	b.writeError(m.ID, -32603, text)
}

// resendable reports whether m may be sent again after it reached the
// daemon: every request but tools/call (initialize, ping, lists, reads of
// resources), and tools/call of a tool that tools/list marked read-only.
func (b *Bridge) resendable(m message) bool {
	if m.Method != "tools/call" {
		return m.isRequest()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.readOnly[m.toolName()]
}

// toolListID is the JSON-RPC id of the bridge's own tools/list request; its
// answer never reaches stdout.
const toolListID = `"tether-bridge:tools/list"`

// learnToolList asks the daemon for its tools once the session is set up,
// so that the bridge knows which tools only read (and may be sent again
// after a restart) even when the client never lists them itself.
func (b *Bridge) learnToolList(ctx context.Context) {
	msg := []byte(`{"jsonrpc":"2.0","id":` + toolListID + `,"method":"tools/list"}`)
	if err := b.post(ctx, msg, message{ID: json.RawMessage(toolListID), Method: "tools/list"}, false); err != nil {
		b.log.Debug("listing the tools for their read-only hints failed", "err", err)
	}
}

// learnTools records the readOnlyHint of every tool in a tools/list answer.
func (b *Bridge) learnTools(answer []byte) {
	var r struct {
		Result struct {
			Tools []struct {
				Name        string `json:"name"`
				Annotations struct {
					ReadOnlyHint *bool `json:"readOnlyHint"`
				} `json:"annotations"`
			} `json:"tools"`
		} `json:"result"`
	}
	if json.Unmarshal(answer, &r) != nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, t := range r.Result.Tools {
		b.readOnly[t.Name] = t.Annotations.ReadOnlyHint != nil && *t.Annotations.ReadOnlyHint
	}
	b.toolsLearnedOnce.Do(func() { close(b.toolsLearned) })
}

// withIdempotencyKey returns the tools/call msg with a new random key in
// params._meta[protocol.MetaIdempotencyKey], unless the client set one
// (then msg is returned as is and own is false); replace replaces a key the
// bridge set before. A message it cannot parse, or whose params or _meta is
// not an object (none, or a null _meta, is taken for empty), is returned
// unchanged: the daemon answers it with the protocol's error.
//
// It runs before every tools/call is sent: the message is decoded once per
// level and written back around the values as they came (objectJSON), never
// encoded again value by value.
func withIdempotencyKey(msg []byte, replace bool) (out []byte, own bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(msg, &top) != nil || top == nil {
		return msg, false
	}
	var params map[string]json.RawMessage
	if raw, ok := top["params"]; ok {
		if json.Unmarshal(raw, &params) != nil || params == nil {
			return msg, false
		}
	}
	var meta map[string]json.RawMessage
	if raw, ok := params["_meta"]; ok && json.Unmarshal(raw, &meta) != nil {
		return msg, false
	}
	if _, ok := meta[protocol.MetaIdempotencyKey]; ok && !replace {
		return msg, false
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	if params == nil {
		params = map[string]json.RawMessage{}
	}
	meta[protocol.MetaIdempotencyKey] = json.RawMessage(`"tmcp-` + hex.EncodeToString(key) + `"`)
	params["_meta"] = objectJSON(meta)
	top["params"] = objectJSON(params)
	return objectJSON(top), true
}

// objectJSON writes m as a JSON object, its keys sorted (as encoding/json
// does) and its values as they are: each is valid JSON, decoded from a
// message or written here.
func objectJSON(m map[string]json.RawMessage) json.RawMessage {
	keys := slices.Sorted(maps.Keys(m))
	n := 2
	for _, k := range keys {
		n += len(k) + len(m[k]) + 4
	}
	b := make([]byte, 0, n+8)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if plainKey(k) {
			b = append(append(append(b, '"'), k...), '"')
		} else {
			q, _ := json.Marshal(k) // a string always encodes
			b = append(b, q...)
		}
		b = append(b, ':')
		b = append(b, m[k]...)
	}
	return append(b, '}')
}

// plainKey reports whether k needs no escaping in a JSON string: printable
// ASCII other than the quote and the backslash (MCP's keys all are).
func plainKey(k string) bool {
	for i := 0; i < len(k); i++ {
		if c := k[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func (b *Bridge) generation() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.gen
}

// reconnect forgets the daemon and the session, finds (or starts) the daemon
// again and replays the client's handshake. Concurrent failures of the same
// session generation reconnect once.
func (b *Bridge) reconnect(ctx context.Context, failedGen int) error {
	b.recover.Lock()
	defer b.recover.Unlock()
	b.mu.Lock()
	if b.gen != failedGen {
		b.mu.Unlock()
		return nil // another request already reconnected
	}
	b.url, b.token, b.sessionID = "", "", ""
	initMsg, initialized := b.initMsg, b.initialized
	b.mu.Unlock()
	if initMsg != nil {
		var m message
		_ = json.Unmarshal(initMsg, &m)
		if err := b.post(ctx, initMsg, m, false); err != nil {
			b.log.Info("replaying the client's initialize to the daemon failed", "err", err)
			return err // the AI reads it: no internal step in front
		}
		if initialized {
			note := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			if err := b.post(ctx, note, message{Method: "notifications/initialized"}, false); err != nil {
				b.log.Info("replaying the client's initialized notification to the daemon failed", "err", err)
				return err
			}
		}
	}
	b.mu.Lock()
	b.gen++
	b.mu.Unlock()
	b.log.Info("reconnected to the daemon with a new session")
	return nil
}

func (b *Bridge) endpoint(ctx context.Context) (string, string, error) {
	b.mu.Lock()
	url, token := b.url, b.token
	b.mu.Unlock()
	if url != "" {
		return url, token, nil
	}
	url, token, err := b.cfg.Endpoint(ctx)
	if err != nil {
		return "", "", err
	}
	b.mu.Lock()
	b.url, b.token = url, token
	b.mu.Unlock()
	return url, token, nil
}

func (b *Bridge) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	url, token, err := b.endpoint(ctx)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set(protocol.HeaderSession, b.session)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	b.mu.Lock()
	if b.sessionID != "" {
		req.Header.Set("Mcp-Session-Id", b.sessionID)
	}
	if b.protocolVersion != "" {
		req.Header.Set("Mcp-Protocol-Version", b.protocolVersion)
	}
	b.mu.Unlock()
	return req, nil
}

// post sends one message; with write, what comes back goes to stdout (else
// it is discarded: a replayed handshake).
func (b *Bridge) post(ctx context.Context, msg []byte, m message, write bool) (err error) {
	req, err := b.newRequest(ctx, http.MethodPost, msg)
	if err != nil {
		return err
	}
	hadSession := req.Header.Get("Mcp-Session-Id") != ""
	resp, err := b.cfg.Client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if neverSent(err) {
			return fmt.Errorf("%w: %v", errUnreachable, err)
		}
		return fmt.Errorf("%w: %v", errInterrupted, err)
	}
	defer resp.Body.Close()
	// 404 is the daemon not knowing the session the request named, or
	// none, when it was built while another request set up a new session
	// (reconnect clears it first): refused before any handling, so it is
	// sent again on the new session.
	if resp.StatusCode == http.StatusNotFound && (hadSession || m.Method != "initialize") {
		return errSessionLost
	}
	if resp.StatusCode == http.StatusServiceUnavailable {
		return errDraining
	}
	answered := !m.isRequest() // only requests expect an answer
	out := func(msg []byte) {
		if !answered {
			if id, ok := responseID(msg); ok && bytes.Equal(id, m.ID) {
				answered = true
				if m.Method == "tools/list" {
					b.learnTools(msg)
				}
			}
		}
		if write {
			b.writeLine(msg)
		}
	}
	defer func() {
		// A response that ended without the answer would leave the client
		// waiting forever: the caller decides what to answer (see relay).
		if err == nil && !answered && ctx.Err() == nil {
			err = fmt.Errorf("%w: the daemon ended its response without answering", errInterrupted)
		}
	}()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		b.mu.Lock()
		b.sessionID = sid
		b.mu.Unlock()
	}
	switch {
	case resp.StatusCode == http.StatusAccepted:
		return nil
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%w (the token file in the config dir does not match the running daemon's; run `tether token rotate`, or restart Tether)", errUnauthorized)
	case resp.StatusCode >= 300:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		// A JSON-RPC error body is a valid answer: pass it through.
		if json.Valid(bytes.TrimSpace(body)) && len(bytes.TrimSpace(body)) > 0 {
			out(bytes.TrimSpace(body))
			return nil
		}
		return fmt.Errorf("daemon answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch mt {
	case "text/event-stream":
		if err := b.readEvents(resp.Body, m.Method == "initialize", out); err != nil && !answered && ctx.Err() == nil {
			return fmt.Errorf("%w: %v", errInterrupted, err)
		}
		return nil
	default:
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxLine))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("%w: %v", errInterrupted, err)
		}
		body, ok := oneLine(bytes.TrimSpace(body), nil)
		if !ok {
			return fmt.Errorf("%w: the daemon's answer is not JSON", errInterrupted)
		}
		if len(body) == 0 {
			return nil
		}
		b.observe(body, m.Method == "initialize")
		out(body)
		return nil
	}
}

// observe records the negotiated protocol version from initialize's result.
func (b *Bridge) observe(body []byte, isInit bool) {
	if !isInit {
		return
	}
	var r struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(body, &r) == nil && r.Result.ProtocolVersion != "" {
		b.mu.Lock()
		b.protocolVersion = r.Result.ProtocolVersion
		b.mu.Unlock()
	}
}

// readEvents writes the data of every SSE event (per the HTML Living
// Standard's event-stream format) as one stdout line.
func (b *Bridge) readEvents(r io.Reader, isInit bool, out func([]byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var data, compact bytes.Buffer
	flush := func() {
		if data.Len() == 0 {
			return
		}
		// An invalid message is dropped.
		if msg, ok := oneLine(bytes.TrimSpace(data.Bytes()), &compact); ok {
			b.observe(msg, isInit)
			out(msg)
		}
		data.Reset()
	}
	for sc.Scan() {
		// Bytes, not Text: no copy of a long line (data copies what it keeps).
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("data:")):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			line = bytes.TrimPrefix(line, []byte("data:"))
			data.Write(bytes.TrimPrefix(line, []byte(" ")))
		}
	}
	flush()
	return sc.Err()
}

// oneLine returns msg as one line of JSON for stdout: msg itself when it
// is valid JSON without a newline (one pass over a snapshot's megabytes,
// no copy), else msg compacted into buf (nil: a new buffer), which takes
// out the newlines that JSON allows between tokens and stdio framing does
// not (MCP spec, transports, "stdio"). Empty msg is returned as it is;
// false: msg is not JSON.
func oneLine(msg []byte, buf *bytes.Buffer) ([]byte, bool) {
	if len(msg) == 0 {
		return msg, true
	}
	if bytes.IndexByte(msg, '\n') < 0 && bytes.IndexByte(msg, '\r') < 0 {
		return msg, json.Valid(msg)
	}
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	buf.Grow(len(msg))
	if json.Compact(buf, msg) != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// responseID returns the id of msg when it is a JSON-RPC response: an
// object with an "id" and no "method" (JSON-RPC 2.0, section 5). It reads
// msg only as far as it must: once it has the id and meets "result" or
// "error", the rest is not read, and mcp-go writes the id first, so a
// snapshot's megabytes are not scanned for it. false: not a response, or
// not a JSON object (as far as it was read).
func responseID(msg []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		switch t {
		case "method":
			return nil, false
		case "id":
			if dec.Decode(&id) != nil {
				return nil, false
			}
			continue
		case "result", "error":
			if id != nil {
				return id, true
			}
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return nil, false
		}
	}
	return id, id != nil
}

// startListening opens the GET stream for server-initiated messages
// (notifications) once, and reopens it until ctx ends.
func (b *Bridge) startListening(ctx context.Context) {
	b.mu.Lock()
	if b.listening || b.sessionID == "" {
		b.mu.Unlock()
		return
	}
	b.listening = true
	b.mu.Unlock()
	go func() {
		backoff := 250 * time.Millisecond
		for ctx.Err() == nil {
			started := time.Now()
			gen := b.generation()
			status, err := b.listenOnce(ctx)
			if ctx.Err() != nil {
				return
			}
			if status == http.StatusMethodNotAllowed {
				b.log.Info("daemon offers no notification stream", "status", status)
				return
			}
			if status == http.StatusNotFound {
				// The daemon restarted: the session must be set up again.
				// (While no daemon answers, wait: the next request from the
				// client starts one; the stream must not race a restart.)
				if rerr := b.reconnect(ctx, gen); rerr != nil {
					b.log.Debug("notification stream: reconnect failed", "err", rerr)
				}
			}
			if time.Since(started) > 10*time.Second {
				backoff = 250 * time.Millisecond
			}
			b.log.Debug("notification stream ended; reopening", "err", err, "status", status)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			backoff = min(backoff*2, 5*time.Second)
		}
	}()
}

func (b *Bridge) listenOnce(ctx context.Context) (int, error) {
	req, err := b.newRequest(ctx, http.MethodGet, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := b.cfg.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errUnreachable, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, b.readEvents(resp.Body, false, b.writeLine)
}

// endSession tells the daemon the session is over (DELETE, per the spec).
func (b *Bridge) endSession() {
	b.mu.Lock()
	sid := b.sessionID
	b.mu.Unlock()
	if sid == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := b.newRequest(ctx, http.MethodDelete, nil)
	if err != nil {
		return
	}
	if resp, err := b.cfg.Client.Do(req); err == nil {
		resp.Body.Close()
	}
}

func (b *Bridge) writeLine(msg []byte) {
	b.outMu.Lock()
	defer b.outMu.Unlock()
	b.out.Write(msg)
	b.out.WriteByte('\n')
	if err := b.out.Flush(); err != nil {
		b.log.Warn("write stdout failed", "err", err)
	}
}

// writeToolError answers tools/call id with a tool error (isError true),
// which the model reads, unlike a JSON-RPC error that some clients hide.
func (b *Bridge) writeToolError(id json.RawMessage, text string) {
	msg, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"result": map[string]any{
			"content": []map[string]any{{"type": "text", "text": text}},
			"isError": true,
		},
	})
	b.writeLine(msg)
}

// neverSent reports whether a failed HTTP exchange's error proves the
// request never reached the daemon: it failed while connecting (refused,
// no route). Anything later (reset, EOF while waiting for the answer) may
// have come after the daemon read the request.
func neverSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (b *Bridge) writeError(id json.RawMessage, code int, text string) {
	msg, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error":   map[string]any{"code": code, "message": text},
	})
	b.writeLine(msg)
}
