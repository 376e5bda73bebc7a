//go:build !windows

package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
)

// diffPage is a page whose buttons make the changes a diff finds hard:
// an item inserted among identical ones, a state-only change, items
// reordered, an element moved, text that starts with "+", "-" or a space,
// long lines, unicode, a title-only change.
const diffPage = `<!doctype html><html><head><title>Diff bench</title></head><body>
<main>
<h1>Diff bench</h1>
<div id="same"><p>Same</p><p>Same</p><p>Same</p><p>Same</p><p>Same</p><p>Same</p></div>
<ul id="dels"></ul>
<label><input type="checkbox" id="cb"> Agree</label>
<label>Name <input id="name"></label>
<label>Size <select id="size"><option>Small</option><option>Large</option></select></label>
<div id="order"><button>One</button><button>Two</button><button>Three</button></div>
<section aria-label="Left" id="left"><button id="mover">Mover</button></section>
<section aria-label="Right" id="right"><p>Right side</p></section>
<div id="odd"></div>
<button id="insert">Insert</button>
<button id="reverse">Reverse</button>
<button id="move">Move</button>
<button id="plus">Plus</button>
<button id="retitle">Retitle</button>
<button id="other">Other</button>
<button id="push">Push</button>
<button id="rerender">Rerender</button>
<button id="grow">Grow</button>
<label>Notes <textarea id="notes"></textarea></label>
<ul id="big"></ul>
</main>
<script>
const $ = (s) => document.querySelector(s);
for (let i = 0; i < 5; i++) {
  const li = document.createElement('li');
  li.innerHTML = 'Same item <button>Delete</button>';
  li.querySelector('button').onclick = () => li.remove();
  $('#dels').append(li);
}
let n = 0;
$('#insert').onclick = () => { const p = document.createElement('p'); p.textContent = 'New ' + (++n); $('#same').children[3].before(p); };
$('#reverse').onclick = () => { const o = $('#order'); [...o.children].reverse().forEach((b) => o.append(b)); };
$('#move').onclick = () => { const m = $('#mover'); (m.parentElement.id === 'left' ? $('#right') : $('#left')).prepend(m); };
$('#plus').onclick = () => {
  for (const t of ['+ plus line', '- minus line', '  spaced', '@@', '日本語 ✓ 👍🏽 café', 'x'.repeat(600)]) {
    const p = document.createElement('p'); p.textContent = t; $('#odd').append(p);
  }
};
$('#retitle').onclick = () => { document.title = 'Diff bench ' + (++n); };
$('#other').onclick = () => { const p = document.createElement('p'); p.textContent = 'Same'; $('#same').prepend(p); };
$('#rerender').onclick = () => { const o = $('#order'); [...o.children].forEach((b) => b.replaceWith(b.cloneNode(true))); };
$('#grow').onclick = () => {
  const big = $('#big');
  if (big.children.length) { const li = document.createElement('li'); li.textContent = 'Row'; big.children[150].after(li); return; }
  for (let i = 0; i < 300; i++) { const li = document.createElement('li'); li.textContent = 'Row'; big.append(li); }
};
$('#push').onclick = () => { history.pushState({}, '', '?pushed=' + (++n)); };
</script>
</body></html>`

// userEval runs js in the page whose URL has urlPart, as the user's own
// doing (over CDP, not through Tether).
func userEval(t *testing.T, devtools context.Context, urlPart, js string) {
	t.Helper()
	pctx, _ := PageTab(t, devtools, urlPart)
	if _, err := chromedp.Run(pctx, chromedp.Evaluate[any](js)); err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
}

// pageView is a page result as an agent reads it.
type pageView struct {
	kind       string // "whole", "changes" or "unchanged"
	url, title string
	body       string // the tree (whole) or the diff (changes)
	// from and tree are the numbers of the tree changes start from and of
	// the tree the result is (0: none given).
	from, tree int
}

var (
	wholeTree     = regexp.MustCompile(`(?m)^Tab \d+\. Tree (\d+) of this tab\.`)
	changesTrees  = regexp.MustCompile(`CHANGES ONLY, turning tree (\d+) .*?into tree (\d+)`)
	unchangedTree = regexp.MustCompile(`the page has not changed since tree (\d+),`)
)

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

var fenceOpen = regexp.MustCompile(`(?m)^<([A-Za-z0-9_-]+)>$`)

// readResult splits a page result into what it is and its fenced content.
func readResult(t *testing.T, text string) pageView {
	t.Helper()
	var v pageView
	switch {
	case strings.Contains(text, "CHANGES ONLY"):
		v.kind = "changes"
		if m := changesTrees.FindStringSubmatch(text); m != nil {
			v.from, v.tree = atoi(m[1]), atoi(m[2])
		}
	case strings.Contains(text, "the page has not changed since tree"):
		v.kind = "unchanged"
		if m := unchangedTree.FindStringSubmatch(text); m != nil {
			v.from, v.tree = atoi(m[1]), atoi(m[1])
		}
		return v
	default:
		v.kind = "whole"
		if m := wholeTree.FindStringSubmatch(text); m != nil {
			v.tree = atoi(m[1])
		}
	}
	m := fenceOpen.FindStringSubmatchIndex(text)
	if m == nil {
		t.Fatalf("no fence in:\n%s", text)
	}
	name := text[m[2]:m[3]]
	inner := text[m[1]+1:]
	end := strings.LastIndex(inner, "\n</"+name+">")
	if end < 0 {
		t.Fatalf("fence %s not closed:\n%s", name, text)
	}
	inner = inner[:end]
	head, body, _ := strings.Cut(inner, "\n\n")
	for _, l := range strings.Split(head, "\n") {
		if u, ok := strings.CutPrefix(l, "URL: "); ok {
			v.url = u
		}
		if ti, ok := strings.CutPrefix(l, "Title: "); ok {
			v.title, _, _ = strings.Cut(ti, " (was: ")
		}
	}
	v.body = body
	return v
}

var hunkHead = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// applyDiff applies a CHANGES ONLY diff to the tree the agent holds. With
// line numbers in the run headers (@@ -a,b +c,d @@), each run goes where
// they say (and its old lines must be there); without them, where its old
// lines (context and removed) first occur after the previous run, as an
// agent would guess. ambiguous reports runs whose old lines occur more
// than once there: a reader cannot know where they go.
func applyDiff(t *testing.T, tree, diff string) (out string, ambiguous []string) {
	t.Helper()
	model := strings.Split(tree, "\n")
	type hunk struct {
		head     string
		old, new []string
	}
	var hunks []hunk
	for _, l := range strings.Split(diff, "\n") {
		if strings.HasPrefix(l, "@@") {
			hunks = append(hunks, hunk{head: l})
			continue
		}
		if len(hunks) == 0 || l == "" {
			t.Fatalf("diff line outside a run or without a prefix: %q in\n%s", l, diff)
		}
		h := &hunks[len(hunks)-1]
		switch l[0] {
		case ' ':
			h.old = append(h.old, l[1:])
			h.new = append(h.new, l[1:])
		case '-':
			h.old = append(h.old, l[1:])
		case '+':
			h.new = append(h.new, l[1:])
		default:
			t.Fatalf("diff line with no +, - or space: %q", l)
		}
	}
	var res []string
	cursor := 0
	for _, h := range hunks {
		at := -1
		if m := hunkHead.FindStringSubmatch(h.head); m != nil {
			at, _ = strconv.Atoi(m[1])
			if len(h.old) > 0 {
				at-- // 1-based; an empty old side names the line before
			}
			if at < cursor || at+len(h.old) > len(model) || strings.Join(model[at:at+len(h.old)], "\n") != strings.Join(h.old, "\n") {
				t.Fatalf("run %q does not match the tree at its line", h.head)
			}
		} else {
			var found []int
			for i := cursor; i+len(h.old) <= len(model); i++ {
				if strings.Join(model[i:i+len(h.old)], "\n") == strings.Join(h.old, "\n") {
					found = append(found, i)
				}
			}
			if len(found) == 0 {
				t.Fatalf("run's old lines are not in the tree:\n%s", strings.Join(h.old, "\n"))
			}
			if len(found) > 1 {
				ambiguous = append(ambiguous, strings.Join(h.old, "\n"))
			}
			at = found[0]
		}
		res = append(res, model[cursor:at]...)
		res = append(res, h.new...)
		cursor = at + len(h.old)
	}
	res = append(res, model[cursor:]...)
	return strings.Join(res, "\n"), ambiguous
}

// agentView is what an agent knows of a tab: the tree and title of its
// last whole result, with each CHANGES ONLY result since applied.
type agentView struct {
	t            *testing.T
	ctx          context.Context
	agent, other *client.Client // other: another app, with its own baseline
	tab          int
	model, title string
	tree         int // the number of the tree the agent holds
}

// check compares the agent's view with a fresh snapshot the other app
// takes (which leaves the agent's baseline alone).
func (v *agentView) check(step string) {
	v.t.Helper()
	fresh := readResult(v.t, mustCall(v.t, v.ctx, v.other, "browser_snapshot", map[string]any{"tab": v.tab}))
	if fresh.body != v.model {
		v.t.Fatalf("after %s the agent's view is not the page.\nagent's view:\n%s\n\npage:\n%s", step, v.model, fresh.body)
	}
	if fresh.title != v.title {
		v.t.Fatalf("after %s the agent thinks the title is %q; it is %q", step, v.title, fresh.title)
	}
}

// act runs an action of the agent, folds its result into the view, and
// checks the view against the page.
func (v *agentView) act(step, tool string, args map[string]any) pageView {
	v.t.Helper()
	text := mustCall(v.t, v.ctx, v.agent, tool, args)
	r := readResult(v.t, text)
	if r.kind != "whole" && r.from != v.tree {
		v.t.Errorf("%s: the result starts from tree %d; the agent holds tree %d:\n%s", step, r.from, v.tree, text)
	}
	if r.tree == 0 {
		v.t.Errorf("%s: the result names no tree:\n%s", step, text)
	}
	v.tree = r.tree
	switch r.kind {
	case "whole":
		v.model, v.title = r.body, r.title
	case "changes":
		v.title = r.title
		if r.body == "" { // the title alone changed
			break
		}
		var amb []string
		v.model, amb = applyDiff(v.t, v.model, r.body)
		if len(amb) > 0 {
			v.t.Errorf("%s: a run of the changes fits more than one place in the tree:\n%s\n\nresult:\n%s", step, strings.Join(amb, "\n--\n"), text)
		}
	}
	v.t.Logf("%s: %s\n%s", step, r.kind, text)
	v.check(step)
	return r
}

// ref is the ref of the element with this role and name in the view.
func (v *agentView) ref(role, name string) string { return ref(v.t, v.model, role, name) }

// TestChangesOnlyKeepTheAgentsView: an agent that applies each CHANGES
// ONLY result to the last whole tree it got holds exactly the page a fresh
// snapshot shows, over many successive actions of every kind, changes made
// by another app in between included; a partial snapshot does not become
// the baseline; the result says plainly which it is.
func TestChangesOnlyKeepTheAgentsView(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(diffPage))
	}))
	defer srv.Close()
	b := StartBrowser(t, d)
	devtools := b.DevTools(t)
	ctx := Context(t, 6*time.Minute)
	agent := stdioClient(t, ctx, d)
	other := stdioClient(t, ctx, d) // another app: its own baseline

	navText := mustCall(t, ctx, agent, "browser_navigate", map[string]any{"url": srv.URL + "/bench"})
	tab := resultTab(navText)
	nav := readResult(t, navText)
	if nav.kind != "whole" {
		t.Fatalf("navigate gave %s", nav.kind)
	}
	v := &agentView{t: t, ctx: ctx, agent: agent, other: other, tab: tab, model: nav.body, title: nav.title, tree: nav.tree}
	act, refOf := v.act, v.ref

	act("insert among identical lines", "browser_click", map[string]any{"ref": refOf("button", "Insert")})
	act("insert again", "browser_click", map[string]any{"ref": refOf("button", "Insert")})
	act("check a box", "browser_click", map[string]any{"ref": refOf("checkbox", "Agree")})
	// The same tab named by its profile's slug, then by a prefix of its id:
	// still the tab the agent holds, so changes against its last tree.
	prof := regexp.MustCompile(`profile "([^"]+)" \(([0-9a-f]{4})`).FindStringSubmatch(mustCall(t, ctx, agent, "browser_tabs", map[string]any{}))
	if prof == nil {
		t.Fatal("browser_tabs names no profile")
	}
	if v := act("named by slug", "browser_click", map[string]any{"profile": prof[1], "ref": refOf("checkbox", "Agree")}); v.kind != "changes" {
		t.Errorf("the tab named by its profile's slug gave %s, want changes against the tree the agent holds", v.kind)
	}
	if v := act("named by an id prefix", "browser_click", map[string]any{"profile": prof[2], "ref": refOf("checkbox", "Agree")}); v.kind != "changes" {
		t.Errorf("the tab named by a prefix of its profile's id gave %s, want changes", v.kind)
	}
	act("type", "browser_type", map[string]any{"ref": refOf("textbox", "Name"), "text": "+ ünïcode -"})
	act("select", "browser_select_option", map[string]any{"ref": refOf("combobox", "Size"), "values": []string{"Large"}})
	act("reverse", "browser_click", map[string]any{"ref": refOf("button", "Reverse")})
	act("move", "browser_click", map[string]any{"ref": refOf("button", "Move")})
	act("odd lines", "browser_click", map[string]any{"ref": refOf("button", "Plus")})
	dels := regexp.MustCompile(`button "Delete" \[ref=([^\]]+)\]`).FindAllStringSubmatch(v.model, -1)
	if len(dels) != 5 {
		t.Fatalf("want 5 Delete buttons:\n%s", v.model)
	}
	act("delete an identical item", "browser_click", map[string]any{"ref": dels[2][1]})

	// The user changes the page (another app may not act in a tab in use
	// for 10 s); then a partial snapshot of the agent's.
	userEval(t, devtools, "/bench", `document.getElementById('other').click()`)
	if part := readResult(t, mustCall(t, ctx, agent, "browser_snapshot", map[string]any{"depth": 1})); part.kind != "whole" {
		t.Fatalf("a snapshot with depth gave %s", part.kind)
	}
	act("after another app and a partial snapshot", "browser_click", map[string]any{"ref": dels[0][1]})
	act("move back", "browser_click", map[string]any{"ref": refOf("button", "Move")})
	act("press a key", "browser_press_key", map[string]any{"key": "End"})
	act("hover", "browser_hover", map[string]any{"ref": refOf("button", "One")})
	act("scroll", "browser_scroll", map[string]any{"to": "bottom"})
	act("retitle", "browser_click", map[string]any{"ref": refOf("button", "Retitle")})
	act("re-render: the same lines with new refs", "browser_click", map[string]any{"ref": refOf("button", "Rerender")})
	act("a long list of identical rows", "browser_click", map[string]any{"ref": refOf("button", "Grow")})
	act("a row inserted among them", "browser_click", map[string]any{"ref": refOf("button", "Grow")})
	act("several lines of text", "browser_type", map[string]any{"ref": refOf("textbox", "Notes"), "text": "first\n- second\n+ third"})
	if v := act("push state", "browser_click", map[string]any{"ref": refOf("button", "Push")}); v.kind != "whole" {
		t.Errorf("a same-document navigation (pushState) gave %s, want the whole tree", v.kind)
	}
	act("insert after push", "browser_click", map[string]any{"ref": refOf("button", "Insert")})
}

// docPage is mostly text (lines without refs), with a button that reloads
// it, a link to itself and a cross-origin frame whose content changes.
func docPage(frameURL string) string {
	var sb strings.Builder
	sb.WriteString(`<!doctype html><html><head><title>Doc bench</title></head><body><main><h1>Doc bench</h1>`)
	for i := range 60 {
		sb.WriteString("<p>Paragraph number " + strconv.Itoa(i) + " of a long text that has no refs at all.</p>")
	}
	sb.WriteString(`<p id="count"></p><button onclick="location.reload()">Reload</button>
<button onclick="document.getElementById('count').textContent = 'Clicked ' + (++window.n)">Count</button>
<a href="/doc">Same page</a> <a href="#part">Hash</a>
<iframe src="` + frameURL + `" title="Frame"></iframe>
<script>window.n = 0;</script></main></body></html>`)
	return sb.String()
}

const framePage = `<!doctype html><html><body><p id="f">Frame text</p><button onclick="document.getElementById('f').textContent = 'Frame changed ' + (++window.k)">In frame</button><script>window.k = 0;</script></body></html>`

// TestChangesOnlyAcrossDocuments: what an agent holds stays the page across
// a reload (a new document at the same URL), a link to the page itself, a
// hash change, a change inside a cross-origin frame, and the user leaving
// and coming back between the agent's calls; and it says which it is.
func TestChangesOnlyAcrossDocuments(t *testing.T) {
	parallel(t)
	RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow")
	var frameURL string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/frame":
			w.Write([]byte(framePage))
		case "/away":
			w.Write([]byte(`<!doctype html><title>Away</title><p>Away</p>`))
		default:
			w.Write([]byte(docPage(frameURL)))
		}
	}))
	defer srv.Close()
	// The frame comes from another origin (localhost, not 127.0.0.1).
	frameURL = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/frame"
	b := StartBrowser(t, d)
	devtools := b.DevTools(t)
	ctx := Context(t, 6*time.Minute)
	agent := stdioClient(t, ctx, d)
	other := stdioClient(t, ctx, d)

	navText := mustCall(t, ctx, agent, "browser_navigate", map[string]any{"url": srv.URL + "/doc"})
	tab := resultTab(navText)
	nav := readResult(t, navText)
	v := &agentView{t: t, ctx: ctx, agent: agent, other: other, tab: tab, model: nav.body, title: nav.title, tree: nav.tree}
	act, refOf := v.act, v.ref
	waitLoaded := func(urlPart string) {
		t.Helper()
		for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(100 * time.Millisecond) {
			if _, _, err := findPage(devtools, urlPart); err == nil {
				break
			}
		}
		pctx, _ := PageTab(t, devtools, urlPart)
		if _, err := chromedp.Run(pctx, chromedp.WaitReady("body")); err != nil {
			t.Fatal(err)
		}
	}

	act("count", "browser_click", map[string]any{"ref": refOf("button", "Count")})
	act("in frame", "browser_click", map[string]any{"ref": refOf("button", "In frame")})
	if v := act("reload", "browser_click", map[string]any{"ref": refOf("button", "Reload")}); v.kind != "whole" {
		t.Errorf("a reload (a new document at the same URL) gave %s, want the whole tree", v.kind)
	}
	if v := act("link to itself", "browser_click", map[string]any{"ref": refOf("link", "Same page")}); v.kind != "whole" {
		t.Errorf("a link to the page itself (a new document) gave %s, want the whole tree", v.kind)
	}
	act("hash", "browser_click", map[string]any{"ref": refOf("link", "Hash")})
	// The user goes away and back between the agent's calls.
	userEval(t, devtools, "/doc", `location.href = '/away'`)
	waitLoaded("/away")
	userEval(t, devtools, "/away", `history.back()`)
	waitLoaded("/doc")
	act("count after the user came back", "browser_click", map[string]any{"ref": refOf("button", "Count")})
}
