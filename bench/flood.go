package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/e2e"
)

// floodResult is what an unauthenticated flood did to a daemon: how many
// hostile inputs of each kind it sent, how the config dir grew, and whether
// a real client still got through afterwards.
type floodResult struct {
	Duration time.Duration
	// Attacks counts the inputs sent per attack, in attackNames order.
	Attacks map[string]int64
	// DirBefore and DirAfter are the config dir's bytes (every file).
	DirBefore, DirAfter int64
	// RSSMaxKB is the daemon's largest RSS during the flood.
	RSSMaxKB int
	// HealthyAfter: /health answered and an authenticated initialize worked
	// right after the flood.
	HealthyAfter bool
}

// attackNames are the flood's attackers, each a goroutine pool hammering
// the daemon as fast as it answers.
var attackNames = []string{
	"web page POST /mcp (browser Origin)",
	"POST /mcp without the token",
	"POST /mcp with a rebinding Host",
	"extension socket with a web Origin",
	"extension-origin socket that never says hello",
	"forged hello with a random profile id, then 100 frames",
}

func runFlood(args []string) int {
	fs := flag.NewFlagSet("flood", flag.ExitOnError)
	bin := fs.String("bin", "bin/tether", "the tether binary (make build)")
	dur := fs.Duration("duration", 20*time.Second, "how long the flood lasts")
	_ = fs.Parse(args)
	ctx, cancel := context.WithTimeout(context.Background(), *dur+2*time.Minute)
	defer cancel()
	r, err := measureFlood(ctx, *bin, *dur)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	writeFlood(os.Stdout, r)
	return 0
}

// measureFlood starts `tether serve` in a fresh config dir and floods it for
// dur with inputs that carry no secret (attackNames), then measures what
// they left behind.
func measureFlood(ctx context.Context, bin string, dur time.Duration) (*floodResult, error) {
	tmp, err := os.MkdirTemp("", "tether-flood-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	paths := config.Paths{Dir: filepath.Join(tmp, "config")}
	cmd := exec.Command(bin, "serve", "--port", "0")
	cmd.Env = append(os.Environ(), config.EnvConfigDir+"="+paths.Dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	log := e2e.NewLogWatcher(stderr)
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	}()
	if _, _, err := log.WaitFor(0, 20*time.Second, "tether daemon listening"); err != nil {
		return nil, fmt.Errorf("daemon did not start: %w", err)
	}
	rec, err := paths.ReadDaemonRecord()
	if err != nil {
		return nil, err
	}
	token, err := paths.ReadToken()
	if err != nil {
		return nil, err
	}
	r := &floodResult{Duration: dur, Attacks: map[string]int64{}}
	if r.DirBefore, err = dirBytes(paths.Dir); err != nil {
		return nil, err
	}

	base := rec.URL()
	wsURL := fmt.Sprintf("ws://127.0.0.1:%d/extension", rec.Port)
	extOrigin := "chrome-extension://" + broker.DefaultExtensionID
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	post := func(h http.Header, host string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)))
		req.Header = h
		req.Header.Set("Content-Type", "application/json")
		if host != "" {
			req.Host = host
		}
		if resp, err := hc.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	// dial opens the extension socket with origin, offering a fresh nonce
	// as the extension does (protocol 4), so the daemon sends its
	// challenge: the work any local program can make it do.
	dial := func(origin string) *websocket.Conn {
		d := websocket.Dialer{HandshakeTimeout: 5 * time.Second,
			Subprotocols: []string{protocol.Subprotocol, protocol.NonceSubprotocolPrefix + protocol.NewNonce()}}
		c, resp, err := d.DialContext(ctx, wsURL, http.Header{"Origin": {origin}})
		if resp != nil && resp.Body != nil {
			resp.Body.Close()
		}
		if err != nil {
			return nil
		}
		return c
	}
	attacks := map[string]func(){
		attackNames[0]: func() { post(http.Header{"Origin": {"https://evil.example"}}, "") },
		attackNames[1]: func() { post(http.Header{}, "") },
		attackNames[2]: func() {
			post(http.Header{"Authorization": {"Bearer " + token}}, fmt.Sprintf("evil.example:%d", rec.Port))
		},
		attackNames[3]: func() {
			if c := dial("https://evil.example"); c != nil {
				c.Close()
			}
		},
		attackNames[4]: func() {
			if c := dial(extOrigin); c != nil {
				// Hold it until the daemon drops it (or the flood ends),
				// reading the challenge on the way.
				_ = c.SetReadDeadline(time.Now().Add(dur))
				for {
					if _, _, err := c.ReadMessage(); err != nil {
						break
					}
				}
				c.Close()
			}
		},
		attackNames[5]: func() {
			c := dial(extOrigin)
			if c == nil {
				return
			}
			defer c.Close()
			// The challenge, then the hello.
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
			_ = c.SetReadDeadline(time.Time{})
			id := make([]byte, 16)
			_, _ = rand.Read(id)
			hello, _ := json.Marshal(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version,
				ProfileID: hex.EncodeToString(id), Label: "Work\x1b[31m", ExtVersion: "0.0.0"})
			if c.WriteMessage(websocket.TextMessage, hello) != nil {
				return
			}
			junk := bytes.Repeat([]byte("x"), 64<<10)
			for range 100 {
				if c.WriteMessage(websocket.TextMessage, junk) != nil {
					return
				}
			}
		},
	}
	var counts sync.Map
	end := time.Now().Add(dur)
	var wg sync.WaitGroup
	for _, name := range attackNames {
		n := new(atomic.Int64)
		counts.Store(name, n)
		workers := 4
		if name == attackNames[4] {
			workers = 24 // more than the daemon lets wait for a hello
		}
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) && ctx.Err() == nil {
					attacks[name]()
					n.Add(1)
				}
			}()
		}
	}
	// The daemon's RSS, once a second, while the flood lasts.
	stopRSS := make(chan struct{})
	rssDone := make(chan struct{})
	go func() {
		defer close(rssDone)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			if kb, err := rssKB(cmd.Process.Pid); err == nil {
				r.RSSMaxKB = max(r.RSSMaxKB, kb)
			}
			select {
			case <-t.C:
			case <-stopRSS:
				return
			}
		}
	}()
	wg.Wait()
	close(stopRSS)
	<-rssDone
	counts.Range(func(k, v any) bool {
		r.Attacks[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	// The rate-limited log writes its summaries when a minute closes; what
	// the flood cost is measured once the daemon is done with it.
	if r.DirAfter, err = dirBytes(paths.Dir); err != nil {
		return nil, err
	}
	r.HealthyAfter = healthyAfter(ctx, base, token)
	return r, nil
}

// healthyAfter reports whether /health answers and an authenticated MCP
// initialize succeeds.
func healthyAfter(ctx context.Context, base, token string) bool {
	resp, err := http.Get(base + "/health")
	if err != nil {
		return false
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", bytes.NewReader([]byte(body)))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// dirBytes is the size of every regular file under dir.
func dirBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

func writeFlood(w io.Writer, r *floodResult) {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	var total int64
	for _, n := range r.Attacks {
		total += n
	}
	p("An unauthenticated local flood for %s against `tether serve` in a fresh config dir (no browser): every attacker in a loop, as fast as the daemon answers. None of them has the token or a pairing secret.\n\n", r.Duration)
	p("| attack | inputs sent |\n|---|---|\n")
	for _, name := range attackNames {
		p("| %s | %d |\n", name, r.Attacks[name])
	}
	p("| **all** | **%d** (%.0f/s) |\n\n", total, float64(total)/r.Duration.Seconds())
	p("| metric | value |\n|---|---|\n")
	p("| config dir before → after | %s → %s (+%s; the logs' cap is 10 MB) |\n", kb(int(r.DirBefore)), kb(int(r.DirAfter)), kb(int(r.DirAfter-r.DirBefore)))
	p("| daemon RSS, max during the flood | %.1f MB |\n", float64(r.RSSMaxKB)/1024)
	p("| /health and an authenticated MCP initialize right after | %s |\n", map[bool]string{true: "answered", false: "**failed**"}[r.HealthyAfter])
}
