package broker

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
)

// TestSlowLink: the daemon measures a profile's round trip from its pings
// (the extension's socket answers them by itself), shows it on the profile,
// lets a call wait its timeout plus the link (the timeout sent to the
// extension leaves the link out), and blames a timeout on a slow link on
// the link, not the page.
func TestSlowLink(t *testing.T) {
	const delay = SlowLinkRTT + 200*time.Millisecond
	b, url := newTestBroker(t, Config{AutoApprove: true})
	s, _, err := exthandshake.Open(nil, url, http.Header{"Origin": {testOrigin}}, "")
	if err != nil {
		t.Fatal(err)
	}
	ws := s.WS
	t.Cleanup(func() { ws.Close() })
	// A link that takes delay to carry a pong back.
	ws.SetPingHandler(func(data string) error {
		go func() {
			time.Sleep(delay)
			_ = ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
		}()
		return nil
	})
	f := &fakeExt{t: t, ws: ws}
	f.send(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: "slow1", Label: "Far", ExtVersion: "test"})
	var ack protocol.HelloAck
	f.read(&ack)
	reqs := make(chan protocol.Request, 4)
	go func() { // keeps reading, so pings are answered
		for {
			var r protocol.Request
			if ws.ReadJSON(&r) != nil {
				close(reqs)
				return
			}
			reqs <- r
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	var rtt time.Duration
	for rtt < delay && time.Now().Before(deadline) {
		if ps := b.Profiles(); len(ps) == 1 {
			rtt = ps[0].RTT
		}
		time.Sleep(10 * time.Millisecond)
	}
	if rtt < delay || rtt > delay+2*time.Second {
		t.Fatalf("profile RTT %s; want about %s", rtt, delay)
	}
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		errc <- b.Call(context.Background(), "", protocol.MethodClick, &protocol.ClickParams{Ref: "e1"}, nil, 50*time.Millisecond)
	}()
	req := <-reqs
	if req.TimeoutMs != 50 {
		t.Errorf("timeout sent to the extension %d ms; want 50 (the link left out)", req.TimeoutMs)
	}
	err = <-errc
	took := time.Since(start)
	if !errors.Is(err, ErrSlowLink) || !strings.Contains(err.Error(), `profile "Far"'s link is slow (RTT `) || !strings.Contains(err.Error(), "not the page") {
		t.Fatalf("timeout on a slow link: %v", err)
	}
	if !strings.Contains(err.Error(), "may or may not have acted") {
		t.Errorf("a click timed out on a slow link without saying its outcome is unknown: %v", err)
	}
	if took < 50*time.Millisecond+2*delay-100*time.Millisecond {
		t.Errorf("the call gave up after %s; the link's round trips (%s) must be added to its timeout", took, 2*rtt)
	}
}

func TestLinkAllowance(t *testing.T) {
	for _, tc := range []struct{ rtt, want time.Duration }{
		{0, 0}, {20 * time.Millisecond, 40 * time.Millisecond}, {time.Minute, MaxLinkAllowance},
	} {
		if got := linkAllowance(tc.rtt); got != tc.want {
			t.Errorf("linkAllowance(%s) = %s, want %s", tc.rtt, got, tc.want)
		}
	}
}

// TestPongEndsOnlyItsPingsWait: a ping is marked as waiting before it is
// written (its pong can be read before the write returns); its own pong,
// or a later ping's, ends the wait, and an earlier ping's late pong does
// not. Before, a pong read first left the mark set until the next ping's
// pong, 20 s later, shown meanwhile as a round trip of up to 20 s.
func TestPongEndsOnlyItsPingsWait(t *testing.T) {
	c := &conn{}
	now := time.Now()
	first := now.Add(-30 * time.Second).UnixNano() // a ping whose pong is late
	c.pingSent.Store(first)
	if rtt := c.linkRTT(); rtt < 29*time.Second {
		t.Fatalf("linkRTT %s while a ping has waited 30 s; want about 30 s", rtt)
	}
	c.pong(strconv.FormatInt(first-int64(time.Second), 10)) // an even earlier ping's pong
	if c.pingSent.Load() != first {
		t.Fatal("an earlier ping's pong ended the wait of a later ping")
	}
	c.pong(strconv.FormatInt(now.UnixNano(), 10)) // a later ping's pong: the link is up
	if c.pingSent.Load() != 0 {
		t.Fatal("a later ping's pong did not end the wait")
	}
	if rtt := c.linkRTT(); rtt > time.Second {
		t.Fatalf("linkRTT %s after a fresh pong; want the pong's round trip", rtt)
	}
	c.pong("not a time")
	if rtt := c.linkRTT(); rtt > time.Second {
		t.Fatalf("linkRTT %s after a malformed pong", rtt)
	}
}
