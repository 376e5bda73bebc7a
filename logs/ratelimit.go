package logs

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults of RateLimit as the daemon and bridges use it: 10 records per
// message a minute, string values cut to 300 bytes.
const (
	DefaultBurst  = 10
	DefaultWindow = time.Minute
	MaxValueBytes = 300
	maxKeys       = 1024
)

// RateLimit wraps next so that each message (with its level) passes at most
// burst times per window; the records past that are counted, not written,
// and when the window ends one line reports them, for example
// `request refused: browser origin on the MCP endpoint (×3 000 in the last
// minute)` with the last such record's attributes. String attribute values
// longer than MaxValueBytes are cut (a refused request's Host or Origin is
// the sender's to choose). Records are told apart by message only, so
// callers need not change: a message must be a constant, with the varying
// parts in attributes (STYLE.md). Derived handlers (With, WithGroup) share
// the counts.
func RateLimit(next slog.Handler, burst int, window time.Duration) slog.Handler {
	return &rateHandler{l: &limiter{burst: burst, window: window, keys: map[string]*count{}, now: time.Now}, next: next}
}

type limiter struct {
	mu     sync.Mutex
	burst  int
	window time.Duration
	keys   map[string]*count
	now    func() time.Time // time.Now; tests move it
}

// count is one message's window.
type count struct {
	start      time.Time
	n          int // records in the window, passed or not
	suppressed int
	last       slog.Record
	h          slog.Handler // the handler that saw last
	timer      *time.Timer
}

type rateHandler struct {
	l    *limiter
	next slog.Handler
}

func (h *rateHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *rateHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &rateHandler{l: h.l, next: h.next.WithAttrs(cutAttrs(attrs))}
}

func (h *rateHandler) WithGroup(name string) slog.Handler {
	return &rateHandler{l: h.l, next: h.next.WithGroup(name)}
}

func (h *rateHandler) Handle(ctx context.Context, r slog.Record) error {
	l := h.l
	key := r.Level.String() + " " + r.Message
	l.mu.Lock()
	now := l.now()
	c := l.keys[key]
	var summaries []func()
	if c == nil && len(l.keys) >= maxKeys {
		// Forget the windows that ended; if the map is still full, messages
		// new to it share one count.
		for k, old := range l.keys {
			if now.Sub(old.start) >= l.window {
				if s := l.endLocked(k, old); s != nil {
					summaries = append(summaries, s)
				}
			}
		}
		if len(l.keys) >= maxKeys {
			key = r.Level.String() + " (other messages)"
			c = l.keys[key]
		}
	}
	var summary func()
	if c != nil && now.Sub(c.start) >= l.window {
		summary = l.endLocked(key, c)
		c = nil
	}
	if c == nil {
		c = &count{start: now}
		l.keys[key] = c
	}
	c.n++
	pass := c.n <= l.burst
	if !pass {
		c.suppressed++
		c.last, c.h = r.Clone(), h.next
		if c.timer == nil {
			c.timer = time.AfterFunc(c.start.Add(l.window).Sub(now), func() { l.flush(key, c) })
		}
	}
	l.mu.Unlock()
	for _, s := range summaries {
		s()
	}
	if summary != nil {
		summary()
	}
	if !pass {
		return nil
	}
	return h.next.Handle(ctx, cut(r))
}

// Flush writes the count lines of every message held back so far (at exit,
// so that a flood's last minute is not lost). h must come from RateLimit;
// other handlers are left alone.
func Flush(h slog.Handler) {
	rh, ok := h.(*rateHandler)
	if !ok {
		return
	}
	l := rh.l
	l.mu.Lock()
	var summaries []func()
	for key, c := range l.keys {
		if s := l.endLocked(key, c); s != nil {
			summaries = append(summaries, s)
		}
	}
	l.mu.Unlock()
	for _, s := range summaries {
		s()
	}
}

// CutValues wraps next so that string values longer than MaxValueBytes are
// cut, as RateLimit does, without limiting repeats (for stderr, which fills
// no disk of Tether's and which tests read line by line).
func CutValues(next slog.Handler) slog.Handler { return cutHandler{next} }

type cutHandler struct{ next slog.Handler }

func (h cutHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }
func (h cutHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return cutHandler{h.next.WithAttrs(cutAttrs(a))}
}
func (h cutHandler) WithGroup(n string) slog.Handler { return cutHandler{h.next.WithGroup(n)} }
func (h cutHandler) Handle(ctx context.Context, r slog.Record) error {
	return h.next.Handle(ctx, cut(r))
}

// flush ends c's window when its timer fires, if c is still current.
func (l *limiter) flush(key string, c *count) {
	l.mu.Lock()
	var summary func()
	if l.keys[key] == c {
		summary = l.endLocked(key, c)
	}
	l.mu.Unlock()
	if summary != nil {
		summary()
	}
}

// endLocked removes c and returns the function that writes its summary
// line, nil when nothing was held back.
func (l *limiter) endLocked(key string, c *count) func() {
	delete(l.keys, key)
	if c.timer != nil {
		c.timer.Stop()
	}
	if c.suppressed == 0 {
		return nil
	}
	msg := c.last.Message
	if strings.HasSuffix(key, " (other messages)") {
		msg = "other log messages"
	}
	out := slog.NewRecord(c.last.Time, c.last.Level, fmt.Sprintf("%s (×%s in the last %s)", msg, groupThousands(c.n), windowName(l.window)), c.last.PC)
	c.last.Attrs(func(a slog.Attr) bool { out.AddAttrs(a); return true })
	out.AddAttrs(slog.Int("not_logged", c.suppressed))
	h := c.h
	return func() { _ = h.Handle(context.Background(), cut(out)) }
}

// windowName is "minute" for a minute, else the duration.
func windowName(d time.Duration) string {
	if d == time.Minute {
		return "minute"
	}
	return d.String()
}

// groupThousands writes n with spaces between groups of three digits
// (3 000), as the example does.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

// cut returns r with long string values (and error texts) cut to
// MaxValueBytes.
func cut(r slog.Record) slog.Record {
	long := false
	r.Attrs(func(a slog.Attr) bool {
		long = tooLong(a.Value)
		return !long
	})
	if !long && len(r.Message) <= 4*MaxValueBytes {
		return r
	}
	out := slog.NewRecord(r.Time, r.Level, cutString(r.Message, 4*MaxValueBytes), r.PC)
	r.Attrs(func(a slog.Attr) bool { out.AddAttrs(cutAttr(a)); return true })
	return out
}

func tooLong(v slog.Value) bool {
	switch v.Kind() {
	case slog.KindString:
		return len(v.String()) > MaxValueBytes
	case slog.KindGroup:
		for _, a := range v.Group() {
			if tooLong(a.Value) {
				return true
			}
		}
	case slog.KindAny:
		if e, ok := v.Any().(error); ok {
			return len(e.Error()) > MaxValueBytes
		}
	}
	return false
}

// cutAttrs cuts the attributes a derived handler (logger.With) adds to
// every record: they are the sender's to choose as often as a record's own
// (a refused request's path, say), and cut would never see them.
func cutAttrs(attrs []slog.Attr) []slog.Attr {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = cutAttr(a)
	}
	return out
}

func cutAttr(a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		return slog.String(a.Key, cutString(a.Value.String(), MaxValueBytes))
	case slog.KindGroup:
		g := a.Value.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = cutAttr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if e, ok := a.Value.Any().(error); ok && len(e.Error()) > MaxValueBytes {
			return slog.String(a.Key, cutString(e.Error(), MaxValueBytes))
		}
	}
	return a
}

// cutString cuts s to max bytes (on a rune boundary) and says how long it was.
func cutString(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return strings.ToValidUTF8(s[:max], "") + "…(" + strconv.Itoa(len(s)) + " bytes)"
}
