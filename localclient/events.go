package localclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tether-browser/tether/apitype"
)

// Stream is an open GET /api/events: Next returns its events in order.
type Stream struct {
	body io.ReadCloser
	r    *bufio.Reader
	// idle ends the stream when nothing, not even a ping, arrives for
	// this long (a daemon that died without closing the socket).
	idle  time.Duration
	timer *time.Timer
}

// maxEventBytes bounds one event's data (a State with many profiles and
// tabs is tens of KB).
const maxEventBytes = 8 << 20

// Events opens the event stream. after is the Seq of the last event the
// caller saw (sent as Last-Event-ID; 0: none), so that the daemon sends
// what was missed, or a KindResync event when it no longer has it. Close
// the stream, or end ctx, to stop.
func (c *Client) Events(ctx context.Context, after uint64) (*Stream, error) {
	path := apitype.PathEvents
	resp, err := c.sendEvents(ctx, path, after)
	if err != nil {
		return nil, err
	}
	s := &Stream{body: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10), idle: 3 * apitype.PingInterval}
	s.timer = time.AfterFunc(s.idle, func() { resp.Body.Close() })
	return s, nil
}

func (c *Client) sendEvents(ctx context.Context, path string, after uint64) (*http.Response, error) {
	// send sets no Last-Event-ID; the query parameter would not be the
	// standard way, so wrap the transport's request instead.
	hc := *c.stream
	if after > 0 {
		hc.Transport = lastEventID{after: after, next: transportOf(c.stream)}
	}
	return c.send(ctx, &hc, http.MethodGet, path, nil, nil, "text/event-stream")
}

type lastEventID struct {
	after uint64
	next  http.RoundTripper
}

func (l lastEventID) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Last-Event-ID", strconv.FormatUint(l.after, 10))
	return l.next.RoundTrip(r)
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}

// Close ends the stream.
func (s *Stream) Close() error {
	s.timer.Stop()
	return s.body.Close()
}

// Next returns the next event. It returns an error when the stream ends:
// the daemon stopped, ctx ended, or nothing arrived for three ping
// intervals.
func (s *Stream) Next() (apitype.Event, error) {
	var ev apitype.Event
	var data strings.Builder
	var kind string
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return ev, fmt.Errorf("the event stream ended: %w", err)
		}
		s.timer.Reset(s.idle)
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if data.Len() == 0 {
				continue // a ping's blank line, or an event without data
			}
			if err := json.Unmarshal([]byte(data.String()), &ev); err != nil {
				return ev, fmt.Errorf("the event stream sent a malformed event: %w", err)
			}
			if ev.Kind == "" {
				ev.Kind = kind
			}
			return ev, nil
		case strings.HasPrefix(line, ":"):
			// a comment: the daemon's ping
		case strings.HasPrefix(line, "data:"):
			if data.Len()+len(line) > maxEventBytes {
				return ev, fmt.Errorf("the event stream sent an event over %d bytes", maxEventBytes)
			}
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case strings.HasPrefix(line, "event:"):
			kind = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		}
		// "id:" repeats Event.Seq, which the data carries; other fields
		// (retry:) are not used.
	}
}
