//go:build !windows

package e2e

import (
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/logs"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
)

// dirBytes is the size of every file under dir, and of the log files alone.
func dirBytes(t *testing.T, dir string) (all, logBytes int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return nil // removed meanwhile (a rotated backup)
		}
		all += info.Size()
		if name := e.Name(); strings.HasPrefix(name, "tether") && strings.HasSuffix(name, ".log") || strings.HasPrefix(name, "mcp-bridge") {
			logBytes += info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return all, logBytes
}

// A drive-by flood, nothing of it authenticated, leaves the config dir's
// logs under their cap (issue 12, "Logs"): web-page POSTs to /mcp, rebinding
// Host headers, sockets from web pages, bad hellos, and unapproved sockets
// spamming frames.
func TestDriveByFloodStaysUnderTheLogCap(t *testing.T) {
	parallel(t)
	d := StartDaemon(t, Binary(t))
	base := d.Record.URL()
	wsURL := strings.Replace(base, "http://", "ws://", 1) + "/extension"
	before, _ := dirBytes(t, d.Paths.Dir)
	client := &http.Client{Timeout: 10 * time.Second}
	junk := strings.Repeat("\x1b[31m∞", 2000) // 10 KB of escapes and multibyte text per value

	var wg sync.WaitGroup
	run := func(workers, n int, f func(i int)) {
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < n; i += workers {
					f(i)
				}
			}(w)
		}
	}
	post := func(host, origin string) {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
		req.Header.Set("Content-Type", "text/plain")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if host != "" {
			req.Host = host
		}
		if resp, err := client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	start := time.Now()
	// Web pages POSTing to /mcp, some with a long Origin.
	run(4, 3000, func(i int) { post("", "https://evil.example/"+junk[:i%len(junk)]) })
	// DNS-rebinding Hosts.
	run(2, 500, func(i int) { post(fmt.Sprintf("evil%d.example%s", i, strings.Repeat(".a", 500)), "") })
	// Missing or wrong tokens on the control routes.
	run(2, 500, func(i int) {
		req, _ := http.NewRequest("POST", base+apitype.PathProfileApprove, strings.NewReader(`{"name":"x"}`))
		req.Header.Set("Authorization", "Bearer "+junk)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	// Refused local API requests with a path of up to 512 KB, from a web
	// page (no-cors fetch: Origin) and from a local process (no token): the
	// check logs the path through log.With, which once escaped the cut.
	longPath := base + apitype.PathPrefix + strings.Repeat("A", 512<<10)
	run(2, 40, func(i int) {
		req, _ := http.NewRequest("GET", longPath, nil)
		if i%2 == 0 {
			req.Header.Set("Origin", "https://evil.example")
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	// Sockets from web pages.
	run(4, 1000, func(i int) {
		h := http.Header{"Origin": {"https://evil.example/" + junk[:i%1000]}}
		if ws, _, err := websocket.DefaultDialer.Dial(wsURL, h); err == nil {
			ws.Close()
		}
	})
	extOrigin := http.Header{"Origin": {"chrome-extension://" + broker.DefaultExtensionID}}
	// Bad hellos, half of them after a challenge (the socket offered a
	// nonce), half on sockets that offered none.
	run(4, 500, func(i int) {
		d := *websocket.DefaultDialer
		if i%2 == 0 {
			d.Subprotocols = []string{protocol.Subprotocol, protocol.NonceSubprotocolPrefix + protocol.NewNonce()}
		}
		ws, _, err := d.Dial(wsURL, extOrigin)
		if err != nil {
			return
		}
		defer ws.Close()
		_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"`+junk+`"}`))
		_ = ws.SetReadDeadline(time.Now().Add(10 * time.Second))
		for { // the challenge, if any, and the refusal, until the daemon closes
			if _, _, err := ws.ReadMessage(); err != nil {
				break
			}
		}
	})
	// Unapproved sockets: the challenge, a hello with a fresh id (held for
	// approval), then frames of every wrong kind.
	run(4, 4, func(i int) {
		s, _, err := exthandshake.Open(nil, wsURL, extOrigin, "")
		if err != nil {
			return
		}
		ws := s.WS
		defer ws.Close()
		hello := protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: fmt.Sprintf("f100d%03d-0000-4000-8000-000000000000", i),
			Label: junk, ExtVersion: junk, Tabs: []protocol.TabInfo{}}
		if err := ws.WriteJSON(hello); err != nil {
			return
		}
		go func() { // drain the daemon's frames
			for {
				if _, _, err := ws.ReadMessage(); err != nil {
					return
				}
			}
		}()
		frames := [][]byte{
			[]byte(`{"type":"` + junk + `"}`),
			[]byte(`{"type":"response","id":"` + junk + `","error":{"code":"` + junk + `","message":"` + junk + `"}}`),
			[]byte(`{"type":"tabs_changed","tabs":"` + junk + `"}`),
			[]byte(junk),
		}
		for n := 0; n < 2000; n++ {
			if err := ws.WriteMessage(websocket.TextMessage, frames[n%len(frames)]); err != nil {
				return
			}
		}
	})
	wg.Wait()
	// The daemon still answers, and has written what it will.
	if _, err := client.Get(base + "/health"); err != nil {
		t.Fatalf("the daemon does not answer after the flood: %v", err)
	}
	var after, logBytes int64
	for deadline, last := time.Now().Add(15*time.Second), int64(-1); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		after, logBytes = dirBytes(t, d.Paths.Dir)
		if after == last {
			break
		}
		last = after
	}
	t.Logf("flood of %s: config dir %d → %d bytes (+%d), logs %d bytes; cap %d", time.Since(start).Round(time.Millisecond), before, after, after-before, logBytes, logs.TotalCap)
	if logBytes > logs.TotalCap {
		t.Errorf("the logs hold %d bytes after the flood, over their cap of %d", logBytes, logs.TotalCap)
	}
	if after-before > logs.TotalCap {
		t.Errorf("the flood grew the config dir by %d bytes, over the log cap of %d", after-before, logs.TotalCap)
	}
	logText, err := os.ReadFile(d.Paths.LogFile())
	if err != nil {
		t.Fatal(err)
	}
	if testing.Verbose() {
		t.Logf("tether.log:\n%s", logText)
	}
	for _, line := range strings.Split(string(logText), "\n") {
		if len(line) > 4<<10 {
			t.Errorf("a %d-byte line in tether.log: a value the sender chose was not cut: %.200s", len(line), line)
			break
		}
	}
	for _, msg := range []string{"request refused: browser origin on the MCP endpoint", "local API request refused: browser origin"} {
		if n := strings.Count(string(logText), `msg="`+msg+`"`); n > logs.DefaultBurst {
			t.Errorf("%d lines %q in a minute, want at most %d", n, msg, logs.DefaultBurst)
		}
	}
}
