package mcp

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/protocol"
	"github.com/tether-browser/tether/test/mcpclient"
)

// page is a 40-line snapshot; with changed set, line 20's button says Saved.
func page(url string, changed bool) protocol.PageResult {
	var lines []string
	for i := range 40 {
		line := fmt.Sprintf("  - listitem: \"Row %d\"", i)
		if i == 20 {
			line = `  - button "Save" [ref=e20]`
			if changed {
				line = `  - button "Saved" [disabled] [ref=e20]`
			}
		}
		lines = append(lines, line)
	}
	return protocol.PageResult{Tab: 2, URL: url, Title: "Rows", Snapshot: "- list \"Rows\":\n" + strings.Join(lines, "\n")}
}

// TestActionResultsCarryChanges: after a whole snapshot, an action's
// result is the changes since it (with context and refs, plainly marked),
// or says nothing changed; a navigation, another document, a change not
// clearly smaller than the page, or a session without a baseline gets the
// whole tree.
func TestActionResultsCarryChanges(t *testing.T) {
	b := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodSnapshot: page("https://a.example/", false)}}
	c := newClient(t, b)
	if text, _ := callTool(t, c, "browser_snapshot", nil); strings.Contains(text, "CHANGES ONLY") || !strings.Contains(text, `listitem: "Row 39"`) || !strings.Contains(text, "Tab 2. Tree 1 of this tab.") {
		t.Fatalf("browser_snapshot is not the whole tree 1:\n%s", text)
	}

	b.results[protocol.MethodClick] = page("https://a.example/", true)
	text, _ := callTool(t, c, "browser_click", map[string]any{"ref": "e20"})
	for _, want := range []string{"Clicked e20.", "Tab 2: CHANGES ONLY, turning tree 1 into tree 2 (snapshots with ref or depth, cut or partial, are no trees).", `-  - button "Save" [ref=e20]`, `+  - button "Saved" [disabled] [ref=e20]`, ` - listitem: "Row 19"`, "URL: https://a.example/"} {
		if !strings.Contains(text, want) {
			t.Errorf("the click's changes lack %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, `"Row 5"`) {
		t.Errorf("the changes carry an unchanged line far from them:\n%s", text)
	}

	text, _ = callTool(t, c, "browser_click", map[string]any{"ref": "e20"})
	if !strings.Contains(text, "Tab 2: the page has not changed since tree 2, the last whole tree you got of it") {
		t.Errorf("an action that changed nothing:\n%s", text)
	}

	// Only the title changed (document.title): not "has not changed".
	retitled := page("https://a.example/", true)
	retitled.Title = "Rows (2 unsaved)"
	b.results[protocol.MethodClick] = retitled
	text, _ = callTool(t, c, "browser_click", map[string]any{"ref": "e20"})
	if strings.Contains(text, "has not changed") || !strings.Contains(text, "Title: Rows (2 unsaved) (was: Rows)") || !strings.Contains(text, "CHANGES ONLY, turning tree 2 into tree 3: only the page's title changed") {
		t.Errorf("a change of the title alone:\n%s", text)
	}
	b.results[protocol.MethodClick] = retitled
	if text, _ = callTool(t, c, "browser_click", map[string]any{"ref": "e20"}); !strings.Contains(text, "has not changed since tree 3") {
		t.Errorf("the new title did not become the baseline's:\n%s", text)
	}

	// A subtree read since does not stand for the page: the changes say
	// which tree they are against.
	b.results[protocol.MethodSnapshot] = protocol.PageResult{Tab: 2, URL: "https://a.example/", Title: "Rows", Snapshot: `- button "Save" [ref=e20]`}
	callTool(t, c, "browser_snapshot", map[string]any{"ref": "e20"})
	b.results[protocol.MethodClick] = page("https://a.example/", false)
	// (The subtree got no number: it is no tree the changes build on.)
	if text, _ := callTool(t, c, "browser_click", map[string]any{"ref": "e20"}); !strings.Contains(text, "CHANGES ONLY, turning tree 3 into tree 4") {
		t.Errorf("the changes do not say they are against the last whole tree:\n%s", text)
	}
	b.results[protocol.MethodClick] = page("https://a.example/next", true)
	if text, _ = callTool(t, c, "browser_click", map[string]any{"ref": "e20"}); strings.Contains(text, "CHANGES ONLY") || !strings.Contains(text, `"Row 39"`) || !strings.Contains(text, "Tab 2. Tree 5 of this tab.") {
		t.Errorf("another document is not whole:\n%s", text)
	}

	// Another document at the same URL (a reload): whole, however small
	// the change.
	reloaded := page("https://a.example/next", true)
	reloaded.Doc = 7
	b.results[protocol.MethodClick] = reloaded
	if text, _ = callTool(t, c, "browser_click", map[string]any{"ref": "e20"}); strings.Contains(text, "CHANGES ONLY") || strings.Contains(text, "has not changed") || !strings.Contains(text, `"Row 39"`) {
		t.Errorf("a reload (document 7 at the same URL) is not whole:\n%s", text)
	}
	if text, _ = callTool(t, c, "browser_click", map[string]any{"ref": "e20"}); !strings.Contains(text, "has not changed since tree 6") {
		t.Errorf("the same document again:\n%s", text)
	}

	other := page("https://a.example/next", false)
	other.Snapshot = strings.ReplaceAll(other.Snapshot, "Row", "Line")
	b.results[protocol.MethodClick] = other
	if text, _ = callTool(t, c, "browser_click", map[string]any{"ref": "e20"}); strings.Contains(text, "CHANGES ONLY") || !strings.Contains(text, `"Line 39"`) {
		t.Errorf("a change of every line is not whole:\n%s", text)
	}

	b.results[protocol.MethodNavigate] = other
	if text, _ = callTool(t, c, "browser_navigate", map[string]any{"url": "https://a.example/next"}); strings.Contains(text, "CHANGES ONLY") || strings.Contains(text, "has not changed") {
		t.Errorf("a navigation is not whole:\n%s", text)
	}

	// Another session has no baseline of the tab: its first result is whole.
	c2 := newClientWith(t, b, Config{Version: "test", Fence: "FENCE"})
	b.results[protocol.MethodClick] = page("https://a.example/", true)
	if text, _ = callTool(t, c2, "browser_click", map[string]any{"ref": "e20"}); strings.Contains(text, "CHANGES ONLY") {
		t.Errorf("a session's first result is a diff:\n%s", text)
	}
}

// TestChangesNeverOutweighThePage: on a small page, where the changes'
// explanation would take more room than the whole tree, the result is the
// whole tree.
func TestChangesNeverOutweighThePage(t *testing.T) {
	small := func(label string) protocol.PageResult {
		return protocol.PageResult{Tab: 3, URL: "https://a.example/", Title: "Small",
			Snapshot: "- main [ref=e1]:\n  - heading \"Small\" [level=1]\n  - paragraph: One\n  - paragraph: Two\n  - paragraph: Three\n  - paragraph: Four\n  - button \"" + label + "\" [ref=e2]\n" +
				"  - paragraph: Five\n  - paragraph: Six\n  - paragraph: Seven\n  - paragraph: Eight\n  - paragraph: Nine\n  - paragraph: Ten"}
	}
	b := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodSnapshot: small("Save")}}
	c := newClient(t, b)
	whole, _ := callTool(t, c, "browser_snapshot", nil)
	b.results[protocol.MethodClick] = small("Saved")
	text, _ := callTool(t, c, "browser_click", map[string]any{"ref": "e2"})
	if strings.Contains(text, "CHANGES ONLY") || !strings.Contains(text, "paragraph: One") {
		t.Errorf("on a small page (whole tree %d characters) the changes came, %d characters:\n%s", len(whole), len(text), text)
	}
}

func TestSnapshotDiff(t *testing.T) {
	got := snapshotDiff("a\nb\nc\nd\ne", "a\nb\nC\nd\ne\nf")
	want := "@@ -2,4 +2,5 @@\n b\n-c\n+C\n d\n e\n+f" // runs two lines apart share one @@
	if got != want {
		t.Fatalf("diff:\n%s\nwant:\n%s", got, want)
	}
	// Among identical lines, only the line numbers say where a run goes.
	got = snapshotDiff("h\np\np\np\np\np\np\nz", "h\np\np\np\nnew\np\np\np\nz")
	want = "@@ -4,2 +4,3 @@\n p\n+new\n p"
	if got != want {
		t.Fatalf("insert among identical lines:\n%s\nwant:\n%s", got, want)
	}
	got = snapshotDiff("a\nb\nc\nd\ne", "b\nc\nd\ne\nf\ng")
	want = "@@ -1,2 +1 @@\n-a\n b\n@@ -5 +4,3 @@\n e\n+f\n+g"
	if got != want {
		t.Fatalf("runs at both ends:\n%s\nwant:\n%s", got, want)
	}
	if d := snapshotDiff("same", "same"); d != "" {
		t.Fatalf("no change gave %q", d)
	}
}

// TestBaselineAcrossProfileNames: a tab named with and without its profile
// (or by slug, by id or by a prefix) is one tab to the agent, which sees
// "Tab 2" either way: the changes are always against the last whole tree
// it got of it, whatever name the call used, and its trees are numbered
// as one tab's.
func TestBaselineAcrossProfileNames(t *testing.T) {
	b := &fakeBrowser{
		results:  map[protocol.Method]any{protocol.MethodSnapshot: page("https://a.example/", false)},
		profiles: []Profile{{ID: "p-1234", Slug: "work", Connected: true}},
	}
	c := newClient(t, b)
	callTool(t, c, "browser_snapshot", nil) // tree 1, without a profile: Save
	// By slug: the same tab, so the changes since tree 1 (Save → Saved).
	b.results[protocol.MethodClick] = page("https://a.example/", true)
	if text, _ := callTool(t, c, "browser_click", map[string]any{"profile": "work", "ref": "e20"}); !strings.Contains(text, "CHANGES ONLY, turning tree 1 into tree 2") {
		t.Fatalf("a click naming the profile by slug did not get the changes since the snapshot without it, as tree 2:\n%s", text)
	}
	// By a prefix, then by id: nothing changed since tree 2.
	for _, name := range []string{"wo", "p-1234"} {
		text, _ := callTool(t, c, "browser_click", map[string]any{"profile": name, "ref": "e20"})
		if !strings.Contains(text, "the page has not changed since tree 2") {
			t.Errorf("profile %q: not the same tab's tree 2, unchanged:\n%s", name, text)
		}
	}

	// Two profiles keep a baseline each for their tabs of the same number;
	// the agent reads both as "Tab 2", so their trees are numbered as one
	// tab's: a number names one tree.
	b.profiles = append(b.profiles, Profile{ID: "p-5678", Slug: "home", Connected: true})
	b.results[protocol.MethodSnapshot] = page("https://a.example/", false)
	text, _ := callTool(t, c, "browser_snapshot", map[string]any{"profile": "work"})
	work := treeOf(t, text)
	b.results[protocol.MethodSnapshot] = page("https://b.example/", false)
	text, _ = callTool(t, c, "browser_snapshot", map[string]any{"profile": "home"})
	home := treeOf(t, text)
	if home <= work {
		t.Errorf("home's tab 2 got tree %d after work's tab 2 got tree %d: one number for two trees of \"Tab 2\"", home, work)
	}
	b.results[protocol.MethodClick] = page("https://a.example/", true)
	text, _ = callTool(t, c, "browser_click", map[string]any{"ref": "e20"}) // reaches work
	if want := fmt.Sprintf("turning tree %d into tree %d", work, home+1); !strings.Contains(text, want) {
		t.Errorf("another profile's tab of the same number dropped this one's baseline, or the tree is not the next (%s):\n%s", want, text)
	}
	// The session's call without a profile now reaches home (work went
	// away): its changes are against home's tree, by home's number.
	b.profiles[0], b.profiles[1] = b.profiles[1], b.profiles[0]
	b.results[protocol.MethodClick] = page("https://b.example/", true)
	text, _ = callTool(t, c, "browser_click", map[string]any{"ref": "e20"})
	if want := fmt.Sprintf("turning tree %d into tree %d", home, home+2); !strings.Contains(text, want) {
		t.Errorf("a call that reached the other profile's tab 2: want %q:\n%s", want, text)
	}
}

// treeOf is the tree number a result names ("Tree N of this tab", or the
// one changes turn into).
func treeOf(t *testing.T, text string) int {
	t.Helper()
	m := regexp.MustCompile(`Tree (\d+) of this tab|into tree (\d+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("the result names no tree:\n%s", text)
	}
	n, _ := strconv.Atoi(m[1] + m[2])
	return n
}

// TestTreeNumbersNeverRepeat: calls at once on one tab, and a tab whose
// baseline another session pushed out, never give two trees one number.
func TestTreeNumbersNeverRepeat(t *testing.T) {
	b := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodSnapshot: page("https://a.example/", false)}}
	srv := NewServer(b, Config{Version: "test", Fence: "FENCE"})
	c := newClientOf(t, srv)
	callTool(t, c, "browser_snapshot", nil)
	b.results[protocol.MethodClick] = page("https://a.example/", true)
	var wg sync.WaitGroup
	var mu sync.Mutex
	given := map[int]int{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text, _, _ := mcpclient.Call(context.Background(), c, "browser_click", map[string]any{"ref": "e20"}, nil)
			if m := regexp.MustCompile(`into tree (\d+)|Tree (\d+) of this tab`).FindStringSubmatch(text); m != nil {
				n, _ := strconv.Atoi(m[1] + m[2])
				mu.Lock()
				given[n]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for n, k := range given {
		if k > 1 {
			t.Errorf("%d clicks at once were each given tree %d", k, n)
		}
	}

	// Another session fills the baselines; this one's tab 2 goes on
	// from its last number.
	last := 0
	for n := range given {
		last = max(last, n)
	}
	other := newClientOf(t, srv)
	for i := range maxBaselines + 1 {
		p := page("https://a.example/", false)
		p.Tab = 100 + i
		b.results[protocol.MethodSnapshot] = p
		callTool(t, other, "browser_snapshot", map[string]any{"tab": 100 + i})
	}
	b.results[protocol.MethodSnapshot] = page("https://c.example/", false)
	text, _ := callTool(t, c, "browser_snapshot", nil)
	if got := treeOf(t, text); got <= last {
		t.Errorf("after its baseline was pushed out, the tab's next tree is %d; it already got trees up to %d", got, last)
	}
}

// TestBaselineNotPoisoned: an error, a partial (deadline-cut) or cut
// result, a dialog's and a subtree read leave the baseline alone: the next
// changes are against the last whole tree.
func TestBaselineNotPoisoned(t *testing.T) {
	b := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodSnapshot: page("https://a.example/", false)}}
	c := newClient(t, b)
	callTool(t, c, "browser_snapshot", nil)

	junk := page("https://a.example/", false)
	junk.Snapshot = "- paragraph: read so far"
	partial, cut := junk, junk
	partial.Partial = true
	cut.Omitted = 30
	for _, r := range []protocol.PageResult{partial, cut} {
		b.results[protocol.MethodClick] = r
		if text, _ := callTool(t, c, "browser_click", map[string]any{"ref": "e20"}); strings.Contains(text, "CHANGES ONLY") {
			t.Fatalf("a partial or cut result came as changes:\n%s", text)
		}
	}
	b.err = errors.New("stale_ref: gone")
	if _, isErr := callTool(t, c, "browser_click", map[string]any{"ref": "e20"}); !isErr {
		t.Fatal("the failed click did not fail")
	}
	b.err = nil
	b.results[protocol.MethodSnapshot] = junk
	callTool(t, c, "browser_snapshot", map[string]any{"depth": 1})
	callTool(t, c, "browser_snapshot", map[string]any{"urls": true})

	b.results[protocol.MethodClick] = page("https://a.example/", true)
	text, _ := callTool(t, c, "browser_click", map[string]any{"ref": "e20"})
	if !strings.Contains(text, "CHANGES ONLY") || !strings.Contains(text, `-  - button "Save" [ref=e20]`) || strings.Contains(text, "read so far") {
		t.Errorf("the changes are not against the last whole tree:\n%s", text)
	}
}

// TestRepeatKeepsItsTree: the repeat of a call (the same idempotency key,
// its first answer perhaps lost) answers as the first did, with the same
// tree number; a new call after it gets the next.
func TestRepeatKeepsItsTree(t *testing.T) {
	b := &fakeBrowser{results: map[protocol.Method]any{protocol.MethodClick: page("https://a.example/", true)}}
	c := newClient(t, b)
	meta := &mcpgo.Meta{AdditionalFields: map[string]any{protocol.MetaIdempotencyKey: "k-tree"}}
	first, _, err := mcpclient.Call(context.Background(), c, "browser_click", map[string]any{"ref": "e20"}, meta)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := mcpclient.Call(context.Background(), c, "browser_click", map[string]any{"ref": "e20"}, meta)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first, "Tree 1 of this tab.") || again != first {
		t.Fatalf("the repeat answered otherwise:\nfirst:\n%s\nrepeat:\n%s", first, again)
	}
	b.results[protocol.MethodSnapshot] = page("https://a.example/", true)
	if text, _ := callTool(t, c, "browser_snapshot", nil); !strings.Contains(text, "Tree 2 of this tab.") {
		t.Errorf("the next whole tree is not tree 2:\n%s", text)
	}
}

// TestBaselinesKeepTheMostRecent: over maxBaselines, the least recently
// put baseline goes first; putting one again makes it the most recent.
func TestBaselinesKeepTheMostRecent(t *testing.T) {
	b := newBaselines()
	key := func(i int) baselineKey { return baselineKey{session: "s", profile: "p", tab: i} }
	p := protocol.PageResult{URL: "https://a.example/", Snapshot: "- button \"Save\" [ref=e1]"}
	for i := range maxBaselines {
		b.put(key(i), p, 1)
	}
	b.put(key(0), p, 2) // tab 0 is now the most recent; tab 1 the least
	b.put(key(maxBaselines), p, 1)
	if _, ok := b.get(key(1)); ok {
		t.Error("the least recently put baseline was kept over the bound")
	}
	if got, ok := b.get(key(0)); !ok || got.n != 2 {
		t.Errorf("the baseline put again was dropped or not replaced: %+v %v", got, ok)
	}
	if b.m.Len() != maxBaselines || b.bytes != maxBaselines*len(p.Snapshot) {
		t.Errorf("kept %d baselines (%d bytes), want %d (%d bytes)", b.m.Len(), b.bytes, maxBaselines, maxBaselines*len(p.Snapshot))
	}
	// Over the bytes bound, the oldest go until it holds.
	big := p
	big.Snapshot = strings.Repeat("x", maxBaselineBytes-100)
	b.put(key(maxBaselines+1), big, 1)
	if _, ok := b.get(key(maxBaselines + 1)); b.bytes > maxBaselineBytes || !ok || b.m.Len() >= maxBaselines {
		t.Errorf("over the bytes bound: %d baselines, %d bytes", b.m.Len(), b.bytes)
	}
}
