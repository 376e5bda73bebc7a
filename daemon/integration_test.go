package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/exthandshake"
	"github.com/tether-browser/tether/test/fakeext"
	"github.com/tether-browser/tether/test/mcpclient"
	"github.com/tether-browser/tether/timeline"
)

// startDaemon runs the real daemon in-process on a free port.
func startDaemon(t *testing.T, autoApprove bool) (config.Paths, string) {
	t.Helper()
	p := config.Paths{Dir: filepath.Join(t.TempDir(), "cfg")}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Config{Paths: p, Port: 0, Version: "test", Logger: slog.New(slog.DiscardHandler),
			AutoApproveProfiles: autoApprove, Ready: func(a string) { addrc <- a }})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	select {
	case a := <-addrc:
		return p, a
	case err := <-done:
		t.Fatalf("daemon: %v", err)
	}
	return p, ""
}

func mcpClient(t *testing.T, p config.Paths, addr string) *client.Client {
	t.Helper()
	token, err := p.ReadToken()
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.NewStreamableHttpClient("http://"+addr+PathMCP,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mcpclient.Initialize(ctx, c, "integration"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func toolText(t *testing.T, c *client.Client, name string, args map[string]any) (string, bool) {
	t.Helper()
	text, isErr, err := mcpclient.Call(context.Background(), c, name, args, nil)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return "", true
	}
	return text, isErr
}

// echo answers every request with a page titled after the profile and tab.
func echo(id string) fakeext.Handler {
	return func(req protocol.Request) (any, *protocol.Error) {
		var p protocol.TabParams
		_ = json.Unmarshal(req.Params, &p)
		return protocol.PageResult{Tab: p.Tab, Title: "profile " + id, URL: "https://example.com/", Snapshot: "- text: " + id}, nil
	}
}

// TestThirtyTwoProfiles: 32 fake profiles connect over real WebSockets, a
// 33rd is refused, one reconnects with its secret and keeps its slug, and an
// MCP client's calls reach the profile they name, in parallel.
func TestThirtyTwoProfiles(t *testing.T) {
	p, addr := startDaemon(t, true)
	url := "ws://" + addr + PathExtension
	exts := make([]*fakeext.Ext, broker.MaxProfiles)
	for i := range exts {
		id := fmt.Sprintf("%08x-0000-4000-8000-%012d", i+1, i)
		e, err := fakeext.Dial(url, protocol.Hello{ProfileID: id, Label: fmt.Sprintf("Profile %02d", i),
			Tabs: []protocol.TabInfo{{Tab: 1, Title: "t", URL: "https://example.com/", Current: true}}}, "")
		if err != nil {
			t.Fatalf("profile %d: %v", i, err)
		}
		t.Cleanup(func() { e.Close() })
		go e.Serve(echo(id))
		exts[i] = e
	}
	_, err := fakeext.Dial(url, protocol.Hello{ProfileID: "ffffffff-33", Label: "One too many"}, "")
	if !errors.Is(err, fakeext.ErrRefused) || !strings.Contains(err.Error(), "too_many_profiles") {
		t.Fatalf("33rd profile: %v", err)
	}

	// Profile 07 reconnects with its secret: same slug, calls still route.
	old := exts[7]
	old.Close()
	again, err := fakeext.Dial(url, protocol.Hello{ProfileID: old.ProfileID, Label: "Profile 07",
		Tabs: []protocol.TabInfo{{Tab: 1, Current: true}}}, old.Secret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { again.Close() })
	if again.Ack.AssignedSlug != "profile-07" {
		t.Fatalf("slug after reconnect %q", again.Ack.AssignedSlug)
	}
	if !again.ProfileProven || again.Ack.Secret != "" || again.Secret != old.Secret {
		t.Fatalf("reconnect: the daemon proved the profile's key: %v; ack %+v", again.ProfileProven, again.Ack)
	}
	go again.Serve(echo(old.ProfileID))

	c := mcpClient(t, p, addr)
	var wg sync.WaitGroup
	for i, e := range exts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slug := fmt.Sprintf("profile-%02d", i)
			text, isErr := toolText(t, c, "browser_snapshot", map[string]any{"profile": slug, "tab": 1})
			if isErr || !strings.Contains(text, "Title: profile "+e.ProfileID) {
				t.Errorf("%s: (isError=%v) %s", slug, isErr, text)
			}
		}()
	}
	wg.Wait()
	list, _ := toolText(t, c, "browser_tabs", nil)
	if n := strings.Count(list, ", connected"); n != broker.MaxProfiles {
		t.Fatalf("browser_tabs lists %d connected profiles, want %d:\n%s", n, broker.MaxProfiles, list)
	}
	text, isErr := toolText(t, c, "browser_snapshot", map[string]any{"profile": "profile-0"})
	if !isErr || !strings.Contains(text, "ambiguous") {
		t.Fatalf("ambiguous prefix: (isError=%v) %s", isErr, text)
	}
}

// TestPairingThroughTheControlAPI: without auto-approval a new profile waits,
// `tether profiles approve` (the control API) pairs it, and `forget` removes it.
func TestPairingThroughTheControlAPI(t *testing.T) {
	p, addr := startDaemon(t, false)
	url := "ws://" + addr + PathExtension
	type dialed struct {
		e   *fakeext.Ext
		err error
	}
	res := make(chan dialed, 1)
	pairing := make(chan string, 1)
	onPairing := func(msg string) { pairing <- msg }
	go func() {
		e, err := fakeext.Dial(url, protocol.Hello{ProfileID: "c0ffee00-1", Label: "Work"}, "", onPairing)
		res <- dialed{e, err}
	}()
	ctx := context.Background()
	code := pairingCode(t, waitPairing(t, pairing))
	lc := localclient.New(p)
	list, err := lc.Profiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Pending) != 1 || list.Pending[0].Label != "Work" || list.Pending[0].Code != code {
		t.Fatalf("pending = %+v, want code %s", list.Pending, code)
	}
	// The id prefix Tether once printed no longer approves: only the code or the full id.
	if _, err := lc.ApproveProfile(ctx, "c0ffee00"); err == nil || !strings.Contains(err.Error(), "code") {
		t.Fatalf("approve by id prefix: %v", err)
	}
	approved, err := lc.ApproveProfile(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	d := <-res
	if d.err != nil || d.e.Ack.Secret == "" || approved.Slug != "work" {
		t.Fatalf("after approval: %v %+v %+v", d.err, d.e, approved)
	}
	d.e.Close()
	if _, err := lc.ApproveProfile(ctx, "nobody"); err == nil || !strings.Contains(err.Error(), "no profile waiting") {
		t.Fatalf("approve nobody: %v", err)
	}
	if _, err := lc.ForgetProfile(ctx, "work"); err != nil {
		t.Fatal(err)
	}
	// Forgotten: its old secret no longer matters (the daemon no longer
	// proves it holds its key, and ignores its proof); it must pair again.
	go func() {
		e, err := fakeext.Dial(url, protocol.Hello{ProfileID: "c0ffee00-1", Label: "Work"}, d.e.Secret, onPairing)
		res <- dialed{e, err}
	}()
	code = pairingCode(t, waitPairing(t, pairing))
	denied, err := lc.DenyProfile(ctx, code)
	if err != nil {
		t.Fatal(err)
	}
	if denied.Label != "Work" || denied.Code != code || denied.ID != "c0ffee00-1" {
		t.Fatalf("deny answered %+v, want the denied browser", denied)
	}
	if d := <-res; !errors.Is(d.err, fakeext.ErrRefused) || !strings.Contains(d.err.Error(), "pairing_denied") {
		t.Fatalf("after deny: %v", d.err)
	}
	// The denied browser stopped asking: the listing says so, and how to
	// pair it after all.
	list, err = lc.Profiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Refused) != 1 || list.Refused[0].ID != "c0ffee00-1" || list.Refused[0].Refusal != "pairing_denied" ||
		!strings.Contains(list.Refused[0].NextStep, "restart the browser") {
		t.Fatalf("refused in the listing: %+v", list.Refused)
	}
	// The state the tray and the window follow holds it too.
	st, err := lc.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Refused) != 1 || st.Refused[0].Label != "Work" || st.Refused[0].Reason != "you denied it" || st.Refused[0].AtMs == 0 {
		t.Fatalf("refused in the state: %+v", st.Refused)
	}
}

// TestApproveWhileOutOfTheList: a browser whose socket went away while it
// waited (pushed out by a flood, or reconnecting) is approved by its code
// through the control API, which answers status "approved"; its next hello
// is paired at once, with a secret.
func TestApproveWhileOutOfTheList(t *testing.T) {
	p, addr := startDaemon(t, false)
	url := "ws://" + addr + PathExtension
	s, _, err := exthandshake.Open(nil, url, http.Header{"Origin": {"chrome-extension://" + broker.DefaultExtensionID}}, "")
	if err != nil {
		t.Fatal(err)
	}
	ws := s.WS
	hello := protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: "5eed0000-1", Label: "Work", Tabs: []protocol.TabInfo{}}
	if err := ws.WriteJSON(hello); err != nil {
		t.Fatal(err)
	}
	var pf protocol.Pairing
	if err := ws.ReadJSON(&pf); err != nil || pf.Code == "" {
		t.Fatalf("pairing: %v %+v", err, pf)
	}
	ws.Close()
	ctx := context.Background()
	lc := localclient.New(p)
	for { // the daemon notices the socket went away
		list, err := lc.Profiles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Pending) == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	approved, err := lc.ApproveProfile(ctx, pf.Code)
	if err != nil {
		t.Fatal(err)
	}
	if approved.Status != "approved" || approved.Slug != "" || approved.Label != "Work" {
		t.Fatalf("approve answered %+v, want status approved", approved)
	}
	e, err := fakeext.Dial(url, protocol.Hello{ProfileID: "5eed0000-1", Label: "Work"}, "")
	if err != nil || e.Ack.Secret == "" || e.Ack.AssignedSlug != "work" {
		t.Fatalf("next hello: %v %+v", err, e)
	}
	e.Close()
}

// pairingCode takes the code out of a pairing message ("… tether profiles approve K7M4PX …").
func pairingCode(t *testing.T, msg string) string {
	t.Helper()
	m := regexp.MustCompile(`tether profiles approve ([` + broker.CodeAlphabet + `]{6})\b`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("no code in the pairing message %q", msg)
	}
	return m[1]
}

func waitPairing(t *testing.T, pairing <-chan string) string {
	t.Helper()
	select {
	case msg := <-pairing:
		return msg
	case <-time.After(10 * time.Second):
		t.Fatal("no pairing frame within 10s")
		return ""
	}
}

// TestTimelineRecordsTheResolvedTarget: with two profiles connected, a call
// that names none goes to the most recently used one; the timeline names
// that profile and its current tab, not "unknown".
func TestTimelineRecordsTheResolvedTarget(t *testing.T) {
	p, addr := startDaemon(t, true)
	url := "ws://" + addr + PathExtension
	for i, label := range []string{"Work", "Home"} {
		id := fmt.Sprintf("%08x-0000-4000-8000-000000000000", i+1)
		e, err := fakeext.Dial(url, protocol.Hello{ProfileID: id, Label: label,
			Tabs: []protocol.TabInfo{{Tab: 3, Title: "t", URL: "https://example.com/", Current: true, Active: true}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		go e.Serve(echo(id))
	}
	c := mcpClient(t, p, addr)
	if _, isErr := toolText(t, c, "browser_snapshot", map[string]any{"profile": "home"}); isErr {
		t.Fatal("snapshot of home failed")
	}
	if text, isErr := toolText(t, c, "browser_snapshot", nil); isErr {
		t.Fatalf("unnamed snapshot: %s", text)
	}
	// Read through the local API, as the window and the CLI do: a query
	// sees every row of the calls that finished before it (the daemon's
	// writer stores them off the call path).
	api := localclient.New(p)
	rows, err := api.Timeline(context.Background(), apitype.TimelineFilter{Limit: 1})
	if err != nil || len(rows) != 1 {
		t.Fatalf("timeline: %v, %v", rows, err)
	}
	if rows[0].Profile != "home" || rows[0].Tab != 3 {
		t.Fatalf("the unnamed call is recorded on profile %q tab %d, want home tab 3 (the broker's pick)", rows[0].Profile, rows[0].Tab)
	}

	// A call with invalid arguments is refused with a readable error, and
	// is on the timeline too.
	if text, isErr := toolText(t, c, "browser_snapshot", map[string]any{"tab": "3"}); !isErr || !strings.Contains(text, "tab: got string, want integer") {
		t.Fatalf("invalid arguments: (isError=%v) %s", isErr, text)
	}
	rows, err = api.Timeline(context.Background(), apitype.TimelineFilter{Limit: 1})
	if err != nil || len(rows) != 1 || rows[0].Outcome != string(timeline.Error) || !strings.Contains(rows[0].Error, "got string, want integer") {
		t.Fatalf("the invalid call on the timeline: %+v, %v", rows, err)
	}
}

// Attack: a broker in remote mode also runs with --auto-approve-profiles
// (for its own headless Chrome). A client on the internet forges the
// extension's Origin through the proxy: it must get a pairing code for the
// operator, not be paired at once; a local socket still is.
func TestAutoApproveNotThroughTheProxy(t *testing.T) {
	_, addr := startDaemonWith(t, func(c *Config) {
		c.AutoApproveProfiles = true
		remoteSettings(t, c)
	})
	url := "ws://" + addr + PathExtension
	s, _, err := exthandshake.Open(nil, url, http.Header{
		"Origin": {"chrome-extension://" + broker.DefaultExtensionID}, "Host": {"tether.example.org"},
		"X-Forwarded-Proto": {"https"}, "X-Forwarded-For": {"203.0.113.9"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	ws := s.WS
	defer ws.Close()
	if err := ws.WriteJSON(protocol.Hello{Type: protocol.TypeHello, Protocol: protocol.Version, ProfileID: "f0e9ed00-1", Label: "Forged", Tabs: []protocol.TabInfo{}}); err != nil {
		t.Fatal(err)
	}
	var pf protocol.Pairing
	if err := ws.ReadJSON(&pf); err != nil || pf.Type != protocol.TypePairing || pf.Code == "" {
		t.Fatalf("a socket through the proxy got %+v (%v), want a pairing code", pf, err)
	}
	e, err := fakeext.Dial(url, protocol.Hello{ProfileID: "10ca1000-1", Label: "Local"}, "")
	if err != nil || e.Ack.Secret == "" {
		t.Fatalf("local socket: %v %+v", err, e)
	}
}
