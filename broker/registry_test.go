package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// readFrame reads any frame and returns its type and raw bytes.
func (f *fakeExt) readFrame() (protocol.FrameType, []byte) {
	f.t.Helper()
	_ = f.ws.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := f.ws.ReadMessage()
	if err != nil {
		f.t.Fatalf("read: %v", err)
	}
	var env protocol.Envelope
	_ = json.Unmarshal(data, &env)
	return env.Type, data
}

// serve answers every request with result until the socket closes.
func (f *fakeExt) serve(result any) {
	for {
		var r protocol.Request
		if err := f.ws.ReadJSON(&r); err != nil {
			return
		}
		raw, _ := json.Marshal(result)
		if f.ws.WriteJSON(protocol.Response{Type: protocol.TypeResponse, ID: r.ID, Result: raw}) != nil {
			return
		}
	}
}

func waitChange(t *testing.T, b *Broker, cond func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		ch := b.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatal("condition not reached within 5s")
		}
	}
}

func profileBySlug(b *Broker, slug string) (Profile, bool) {
	for _, p := range b.Profiles() {
		if p.Slug == slug {
			return p, true
		}
	}
	return Profile{}, false
}

func TestPairingApproveIssuesSecret(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	f := hello(t, url, "7e57ab1e-0000-4000-8000-000000000001", "Work Laptop 💻")
	pairing := f.readPairing()
	if len(pairing.Code) != CodeLength || !strings.Contains(pairing.Message, "tether profiles approve "+pairing.Code) ||
		!strings.Contains(pairing.Message, "10 minutes") {
		t.Fatalf("got %+v, want pairing with the code and the approve command", pairing)
	}
	if p := b.Pending(); len(p) != 1 || p[0].Label != "Work Laptop 💻" || p[0].Code != pairing.Code {
		t.Fatalf("pending = %+v", p)
	}
	if len(b.Profiles()) != 0 {
		t.Fatal("a profile waiting for approval is already usable")
	}
	if _, err := b.Approve("nope"); !errors.Is(err, ErrUnknownProfile) {
		t.Fatalf("approve of an unknown name: %v", err)
	}
	// Not by label: any process may claim one.
	if _, err := b.Approve("work laptop"); !errors.Is(err, ErrUnknownProfile) {
		t.Fatalf("approve by label: %v", err)
	}
	// The code as a user may type it: lower case, with a dash.
	prof, err := b.Approve(strings.ToLower(pairing.Code[:3] + "-" + pairing.Code[3:]))
	if err != nil {
		t.Fatal(err)
	}
	var ack protocol.HelloAck
	f.read(&ack)
	if ack.Type != protocol.TypeHelloAck || len(ack.Secret) != 64 || ack.AssignedSlug != "work-laptop" || prof.Slug != "work-laptop" {
		t.Fatalf("ack = %+v, profile %+v", ack, prof)
	}
	go f.serve(protocol.TabsListResult{})
	if err := b.Call(context.Background(), "work-laptop", protocol.MethodTabsList, &protocol.TabsListParams{}, nil, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if len(b.Pending()) != 0 {
		t.Fatal("still pending after approval")
	}
}

func TestDenyRefusesAndCloses(t *testing.T) {
	b, url := newTestBroker(t, Config{})
	f := hello(t, url, "deadbeef-1", "Guest")
	if typ, _ := f.readFrame(); typ != protocol.TypePairing {
		t.Fatalf("got %s, want pairing", typ)
	}
	if _, err := b.Deny("deadbeef"); !errors.Is(err, ErrUnknownProfile) || !strings.Contains(err.Error(), "prefix") {
		t.Fatalf("deny by id prefix: %v", err)
	}
	denied, err := b.Deny("deadbeef-1")
	if err != nil {
		t.Fatal(err)
	}
	if denied.ID != "deadbeef-1" || denied.Label != "Guest" || len(denied.Code) != CodeLength {
		t.Fatalf("Deny returned %+v, want the denied entry", denied)
	}
	var r protocol.Refused
	f.read(&r)
	if r.Code != protocol.CodePairingDenied || !strings.Contains(r.Message, "Reconnect") {
		t.Fatalf("got %+v", r)
	}
	if _, _, err := f.ws.ReadMessage(); err == nil {
		t.Fatal("socket still open after deny")
	}
}

func TestCallExplainsPendingApproval(t *testing.T) {
	b, url := newTestBroker(t, Config{ConnectWait: 50 * time.Millisecond})
	f := hello(t, url, "abcdef12-3", "Home")
	code := f.readPairing().Code
	err := b.Call(context.Background(), "", protocol.MethodTabsList, &protocol.TabsListParams{}, nil, time.Second)
	// The agent learns how to ask, not the code: the user must take it from Chrome.
	if !errors.Is(err, ErrNoProfile) || !strings.Contains(err.Error(), "tether profiles approve CODE") ||
		!strings.Contains(err.Error(), `"Home"`) || strings.Contains(err.Error(), code) {
		t.Fatalf("got %v", err)
	}
}

func TestImposterIsRefusedAndLiveSocketKept(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	real, _ := connect(t, b, url, "1111-real", "Work")
	secrets.Store("1111-real", "")                       // the imposter does not know the secret
	defer secrets.Store("1111-real", "not the real one") // leave no empty secret behind
	imp := hello(t, url, "1111-real", "Work")
	var r protocol.Refused
	imp.read(&r)
	if r.Code != protocol.CodeUnauthorized || !strings.Contains(r.Message, "tether profiles forget work") {
		t.Fatalf("imposter got %+v", r)
	}
	secrets.Store("1111-real", "0000")
	imp2 := hello(t, url, "1111-real", "Work")
	imp2.read(&r)
	if r.Code != protocol.CodeUnauthorized {
		t.Fatalf("wrong secret got %+v", r)
	}
	go real.serve(protocol.TabsListResult{})
	if err := b.Call(context.Background(), "work", protocol.MethodTabsList, &protocol.TabsListParams{}, nil, 5*time.Second); err != nil {
		t.Fatalf("the real profile stopped working: %v", err)
	}
}

func TestProfileCap(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	exts := make([]*fakeExt, MaxProfiles)
	for i := range MaxProfiles {
		exts[i], _ = connect(t, b, url, fmt.Sprintf("cap-%02d", i), fmt.Sprintf("P%d", i))
	}
	// A known profile that is disconnected may reconnect even at the cap…
	exts[0].ws.Close()
	waitChange(t, b, func() bool { p, _ := profileBySlug(b, "p0"); return !p.Connected })
	connect(t, b, url, "cap-extra", "Extra") // takes the free slot
	connect(t, b, url, "cap-00", "P0")       // known: always admitted
	// …a new one is refused with a reason, and nobody is evicted.
	f := hello(t, url, "cap-new", "New")
	var r protocol.Refused
	f.read(&r)
	if r.Code != protocol.CodeTooManyProfiles || !strings.Contains(r.Message, "32") {
		t.Fatalf("33rd profile got %+v", r)
	}
	connected := 0
	for _, p := range b.Profiles() {
		if p.Connected {
			connected++
		}
	}
	if connected != MaxProfiles+1 {
		t.Fatalf("%d connected, want %d (the cap plus the known profile)", connected, MaxProfiles+1)
	}
}

func TestDisconnectKeepsRecordAndCallsWaitForReconnect(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true, ConnectWait: 100 * time.Millisecond})
	f, _ := connect(t, b, url, "dc-1", "Home")
	f.ws.Close()
	waitChange(t, b, func() bool { p, _ := profileBySlug(b, "home"); return !p.Connected })
	p, ok := profileBySlug(b, "home")
	if !ok || p.LastSeen.IsZero() {
		t.Fatalf("record lost on disconnect: %+v", b.Profiles())
	}
	err := b.Call(context.Background(), "home", protocol.MethodTabsList, &protocol.TabsListParams{}, nil, time.Second)
	if !errors.Is(err, ErrProfileDisconnected) || !strings.Contains(err.Error(), "chrome://extensions") {
		t.Fatalf("call to a disconnected profile: %v", err)
	}

	// A profile that comes back within ConnectWait serves the waiting call.
	b.cfg.ConnectWait = 10 * time.Second
	errc := make(chan error, 1)
	go func() {
		errc <- b.Call(context.Background(), "home", protocol.MethodTabsList, &protocol.TabsListParams{}, nil, 5*time.Second)
	}()
	f2, ack := connect(t, b, url, "dc-1", "Home")
	if ack.AssignedSlug != "home" {
		t.Fatalf("slug after reconnect %q", ack.AssignedSlug)
	}
	go f2.serve(protocol.TabsListResult{})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestRegistryPersistsSlugsAndSecrets(t *testing.T) {
	store := filepath.Join(t.TempDir(), "profiles.json")
	b, url := newTestBroker(t, Config{AutoApprove: true, StorePath: store})
	connect(t, b, url, "per-a", "Work")
	connect(t, b, url, "per-b", "Work")
	b.Close()
	info, err := os.Stat(store)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("store: %v %v", err, info)
	}
	raw, _ := os.ReadFile(store)
	if sa, _ := secrets.Load("per-a"); strings.Contains(string(raw), sa.(string)) {
		t.Fatal("the store holds a secret in clear")
	}

	// After a restart, reconnecting in the other order keeps the slugs.
	b2, url2 := newTestBroker(t, Config{StorePath: store})
	if got := len(b2.Profiles()); got != 2 {
		t.Fatalf("%d profiles after restart", got)
	}
	_, ackB := connect(t, b2, url2, "per-b", "Work")
	_, ackA := connect(t, b2, url2, "per-a", "Work")
	if ackA.AssignedSlug != "work" || ackB.AssignedSlug != "work-2" {
		t.Fatalf("slugs after restart: a=%s b=%s", ackA.AssignedSlug, ackB.AssignedSlug)
	}
	if ackA.Secret != "" {
		t.Fatal("a known profile was issued a new secret")
	}
	// Rename: the slug follows the label.
	_, ack := connect(t, b2, url2, "per-a", "Personal 🏠")
	if ack.AssignedSlug != "personal" || ack.AssignedLabel != "Personal 🏠" {
		t.Fatalf("after rename: %+v", ack)
	}
}

func TestCorruptStoreIsNotReplaced(t *testing.T) {
	store := filepath.Join(t.TempDir(), "profiles.json")
	if err := os.WriteFile(store, []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{StorePath: store}); err == nil || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("got %v", err)
	}
	if b, _ := os.ReadFile(store); string(b) != "{broken" {
		t.Fatal("corrupt store was rewritten")
	}
}

// A registry written by a newer Tether (a higher format) is refused, and
// left as it is: saving it would drop the fields this one does not know.
func TestNewerStoreIsNotDowngraded(t *testing.T) {
	store := filepath.Join(t.TempDir(), "profiles.json")
	newer := `{"version": 2, "profiles": [{"id": "p1", "label": "Work", "slug": "work", "secretHash": "00", "color": "teal"}]}`
	if err := os.WriteFile(store, []byte(newer), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{StorePath: store}); err == nil || !strings.Contains(err.Error(), "newer Tether") || !strings.Contains(err.Error(), "move the file aside") {
		t.Fatalf("got %v, want a refusal naming the newer format and what to do", err)
	}
	if b, _ := os.ReadFile(store); string(b) != newer {
		t.Fatalf("the newer registry was rewritten:\n%s", b)
	}
}

func TestPruneAndForget(t *testing.T) {
	store := filepath.Join(t.TempDir(), "profiles.json")
	now := time.Now()
	old := []storedProfile{
		{ID: "old-1", Label: "Old", Slug: "old", SecretHash: hashSecret("x"), LastSeen: now.Add(-31 * 24 * time.Hour)},
		{ID: "new-1", Label: "New", Slug: "new", SecretHash: hashSecret("y"), LastSeen: now.Add(-29 * 24 * time.Hour)},
		{ID: "new-2", Label: "Other", Slug: "other", SecretHash: hashSecret("z"), LastSeen: now},
	}
	if err := saveStore(store, old); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{StorePath: store})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := profileBySlug(b, "old"); ok {
		t.Fatal("a record unseen for 31 days was kept")
	}
	if _, ok := profileBySlug(b, "new"); !ok {
		t.Fatal("a record seen 29 days ago was pruned")
	}
	if _, err := ForgetStored(store, "new"); err != nil {
		t.Fatal(err)
	}
	list, _ := ListStored(store)
	if len(list) != 1 || list[0].Slug != "other" {
		t.Fatalf("after forget: %+v", list)
	}
}

func TestDefaultTabIsTheCurrentOneAndTabsChangedUpdates(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "tabs-1", "Work",
		protocol.TabInfo{Tab: 1, URL: "https://a.example/"}, protocol.TabInfo{Tab: 2, URL: "https://b.example/", Current: true})
	errc := make(chan error, 1)
	go func() {
		errc <- b.Call(context.Background(), "", protocol.MethodClick, &protocol.ClickParams{Ref: "e1"}, nil, 5*time.Second)
	}()
	r := f.readRequest()
	var p protocol.ClickParams
	_ = json.Unmarshal(r.Params, &p)
	if p.Tab != 2 {
		t.Fatalf("click without a tab went to tab %d, want the current tab 2", p.Tab)
	}
	f.answer(r.ID, protocol.PageResult{})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	f.send(protocol.TabsChanged{Type: protocol.TypeTabsChanged, Change: protocol.TabClosed, Tab: 2,
		Tabs: []protocol.TabInfo{{Tab: 1, URL: "https://a.example/", Current: true}}})
	waitChange(t, b, func() bool { p, _ := profileBySlug(b, "work"); return len(p.Tabs) == 1 })
}

func TestDefaultProfileIsTheMostRecentlyUsed(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	work, _ := connect(t, b, url, "mru-w", "Work")
	home, _ := connect(t, b, url, "mru-h", "Home")
	go work.serve(protocol.TabsListResult{})
	go home.serve(protocol.TabsListResult{})
	ctx := context.Background()
	call := func(profile string) {
		if err := b.Call(ctx, profile, protocol.MethodTabsList, &protocol.TabsListParams{}, nil, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	call("work")
	b.mu.Lock()
	got := b.defaultLocked().stored.Slug
	b.mu.Unlock()
	if got != "work" {
		t.Fatalf("default after using work = %s", got)
	}
	call("home")
	b.mu.Lock()
	got = b.defaultLocked().stored.Slug
	b.mu.Unlock()
	if got != "home" {
		t.Fatalf("default after using home = %s", got)
	}
}

// TestMutatingCallsSerializePerTab: on one tab, mutating calls run one at a
// time in arrival order while reads proceed; other tabs run in parallel.
func TestMutatingCallsSerializePerTab(t *testing.T) {
	b, url := newTestBroker(t, Config{AutoApprove: true})
	f, _ := connect(t, b, url, "q-1", "Work")
	ctx := context.Background()
	errc := make(chan error, 4)
	do := func(method protocol.Method, params any) {
		go func() { errc <- b.Call(ctx, "", method, params, nil, 10*time.Second) }()
	}
	do(protocol.MethodClick, &protocol.ClickParams{TabParams: protocol.TabParams{Tab: 1}, Ref: "A"})
	a := f.readRequest()
	do(protocol.MethodClick, &protocol.ClickParams{TabParams: protocol.TabParams{Tab: 1}, Ref: "B"})
	waitQueued(t, b, "q-1", 1, 1)
	do(protocol.MethodSnapshot, &protocol.TabParams{Tab: 1})
	if r := f.readRequest(); r.Method != protocol.MethodSnapshot {
		t.Fatalf("got %s while click A was running; a read must pass the queue", r.Method)
	} else {
		f.answer(r.ID, protocol.PageResult{})
	}
	do(protocol.MethodClick, &protocol.ClickParams{TabParams: protocol.TabParams{Tab: 2}, Ref: "C"})
	if r := f.readRequest(); !strings.Contains(string(r.Params), `"C"`) {
		t.Fatalf("got %s, want the click on tab 2 to run in parallel", r.Params)
	} else {
		f.answer(r.ID, protocol.PageResult{})
	}
	f.answer(a.ID, protocol.PageResult{})
	if r := f.readRequest(); !strings.Contains(string(r.Params), `"B"`) {
		t.Fatalf("got %s, want click B after A", r.Params)
	} else {
		f.answer(r.ID, protocol.PageResult{})
	}
	for range 4 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

// waitQueued waits until n calls wait in the queue of (profile, tab).
func waitQueued(t *testing.T, b *Broker, id string, tab, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		b.mu.Lock()
		q := b.records[id].queue(tab)
		b.mu.Unlock()
		q.mu.Lock()
		got := len(q.waiters)
		q.mu.Unlock()
		if got >= n {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("%d calls never queued on tab %d", n, tab)
}

func TestTabQueueIsFIFO(t *testing.T) {
	var q tabQueue
	release, _ := q.acquire(context.Background())
	order := make(chan int, 5)
	for i := range 5 {
		go func() {
			rel, err := q.acquire(context.Background())
			if err != nil {
				t.Error(err)
				return
			}
			order <- i
			rel()
		}()
		for { // wait until goroutine i is queued, so arrival order is known
			q.mu.Lock()
			n := len(q.waiters)
			q.mu.Unlock()
			if n == i+1 {
				break
			}
			runtime.Gosched()
		}
	}
	// A waiter that gives up leaves the queue without taking a turn.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.acquire(ctx); err == nil {
		t.Fatal("acquire with a cancelled context succeeded while busy")
	}
	release()
	for want := range 5 {
		if got := <-order; got != want {
			t.Fatalf("turn %d went to waiter %d", want, got)
		}
	}
	if rel, err := q.acquire(context.Background()); err != nil {
		t.Fatal(err)
	} else {
		rel()
	}
}
