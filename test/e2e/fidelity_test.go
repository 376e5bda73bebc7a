//go:build !windows

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/chromedp"

	"github.com/tether-browser/tether/test/textmetrics"
)

// comparedRoles are the interactive roles whose nodes the fidelity test
// compares with Chromium's accessibility tree (issue: "Snapshot fidelity").
var comparedRoles = map[string]bool{"button": true, "link": true, "textbox": true, "searchbox": true, "combobox": true,
	"checkbox": true, "radio": true, "menuitem": true, "tab": true, "switch": true, "slider": true, "spinbutton": true,
	"option": true, "listbox": true}

// norm collapses Unicode white space (NBSP included) to single spaces.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

var snapLineRe = regexp.MustCompile(`^\s*- (\w+)(?: "((?:[^"\\]|\\.)*)")?`)

// ourNodes parses a snapshot into (role, name) keys for the compared roles.
func ourNodes(snapshot string) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(snapshot, "\n") {
		m := snapLineRe.FindStringSubmatch(line)
		if m == nil || !comparedRoles[m[1]] {
			continue
		}
		name := m[2]
		if u, err := strconv.Unquote(`"` + name + `"`); err == nil {
			name = u
		}
		out[m[1]+"|"+norm(strings.TrimSuffix(name, "…"))]++
	}
	return out
}

// chromiumNodes reads Chromium's own tree over CDP (the harness only).
func chromiumNodes(t *testing.T, alloc context.Context, urlPart string) map[string]int {
	t.Helper()
	// Detached again at once: the fidelity test reads every corpus page.
	id, _, err := findPage(alloc, urlPart)
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := chromedp.NewContext(alloc, chromedp.WithTargetID(id), chromedp.WithDetachOnCancel())
	defer cancel()
	res, err := chromedp.Call(pctx, accessibility.GetFullAXTree, accessibility.GetFullAXTreeParams{})
	if err != nil {
		t.Fatalf("getFullAXTree: %v", err)
	}
	out := map[string]int{}
	for _, n := range res.Nodes {
		if n.Ignored || n.Role == nil {
			continue
		}
		var role, name string
		_ = json.Unmarshal(n.Role.Value, &role)
		if !comparedRoles[role] {
			continue
		}
		if n.Name != nil {
			_ = json.Unmarshal(n.Name.Value, &name)
		}
		out[role+"|"+norm(name)]++
	}
	return out
}

// matchCount is the multiset intersection size, with names compared after
// our snapshot's trimming (a name we cut with … matches by prefix).
func matchCount(ours, theirs map[string]int) int {
	n := 0
	for k, c := range theirs {
		n += min(c, ours[k])
	}
	return n
}

func total(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

// TestSnapshotFidelity compares our snapshot with Chromium's accessibility
// tree on every page of the corpus: recall = matched / Chromium's count,
// precision = matched / ours, on (role, whitespace-normalized name). On the
// same pages it scores browser_read {mode: readable} against each page's
// expected.html (word-bag F1).
func TestSnapshotFidelity(t *testing.T) {
	parallelLong(t)
	RequireChromium(t)
	dir, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "corpus", "readability"))
	pages, _ := filepath.Glob(filepath.Join(dir, "*", "source.html"))
	if len(pages) == 0 {
		t.Skipf("no corpus at %s (../shared is absent); skipping the fidelity test", dir)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	// The pages are read in fidelityShards browsers side by side (each with
	// its own daemon), pages[i], pages[i+n], … in shard i; the figures are
	// over all pages.
	shards := make([][]fidelityPage, fidelityShards)
	t.Run("shards", func(t *testing.T) {
		for i := range shards {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				var mine []string
				for j := i; j < len(pages); j += len(shards) {
					mine = append(mine, pages[j])
				}
				shards[i] = fidelityShard(t, srv.URL, mine)
			})
		}
	})
	var matched, theirsN, oursN int
	var f1s []float64
	var report []string
	for _, shard := range shards {
		for _, pg := range shard {
			matched, theirsN, oursN = matched+pg.matched, theirsN+pg.theirs, oursN+pg.ours
			if pg.f1 >= 0 {
				f1s = append(f1s, pg.f1)
			}
			report = append(report, pg.line)
		}
	}
	slices.Sort(report)
	t.Logf("per page:\n%s", strings.Join(report, "\n"))
	recall := float64(matched) / float64(max(theirsN, 1))
	precision := float64(matched) / float64(max(oursN, 1))
	t.Logf("overall: recall %.4f, precision %.4f (matched %d, chromium %d, ours %d)", recall, precision, matched, theirsN, oursN)
	if out := os.Getenv("TETHER_FIDELITY_OUT"); out != "" {
		_ = os.WriteFile(out, []byte(fmt.Sprintf(`{"recall": %.4f, "precision": %.4f}`, recall, precision)), 0o644)
	}
	if recall < 0.95 {
		t.Errorf("overall recall %.4f is below 0.95", recall)
	}
	if len(f1s) == 0 {
		t.Fatal("browser_read scored no page")
	}
	slices.Sort(f1s)
	above := 0
	for _, f := range f1s {
		if f >= 0.7 {
			above++
		}
	}
	median := f1s[len(f1s)/2]
	t.Logf("reading mode: %d pages, median F1 %.3f, p10 %.3f, min %.3f, %d%% ≥ 0.7", len(f1s), median, f1s[len(f1s)/10], f1s[0], 100*above/len(f1s))
	if median < 0.85 || float64(above) < 0.8*float64(len(f1s)) {
		t.Errorf("reading quality too low: median F1 %.3f, %d of %d pages ≥ 0.7", median, above, len(f1s))
	}
}

// fidelityShards is how many browsers TestSnapshotFidelity reads the
// corpus in at once.
const fidelityShards = 3

// fidelityPage is one corpus page's figures: matched, Chromium's (theirs)
// and our (ours) compared nodes, browser_read's F1 (-1: no expected.html)
// and its report line.
type fidelityPage struct {
	matched, theirs, ours int
	f1                    float64
	line                  string
}

// fidelityShard reads pages (source.html paths under the corpus that base
// serves) in a browser of its own, paired with a daemon of its own that
// snapshots uncut.
func fidelityShard(t *testing.T, base string, pages []string) []fidelityPage {
	cfgDir := filepath.Join(t.TempDir(), "config")
	if err := os.MkdirAll(cfgDir, 0o700); err != nil {
		t.Fatal(err)
	}
	// The whole snapshot, uncut: the comparison is about what we see.
	if err := os.WriteFile(filepath.Join(cfgDir, "settings.json"), []byte(`{"snapshotMaxChars": 10000000}`), 0o600); err != nil {
		t.Fatal(err)
	}
	d := StartDaemonAt(t, Binary(t), cfgDir, 0, "--auto-approve-profiles")
	b := StartBrowser(t, d)
	alloc := b.DevTools(t)
	ctx := Context(t, 15*time.Minute)
	c := stdioClient(t, ctx, d)
	var out []fidelityPage
	for i, p := range pages {
		name := filepath.Base(filepath.Dir(p))
		url := base + "/" + name + "/source.html"
		text, isErr := call(t, ctx, c, "browser_navigate", map[string]any{"url": url})
		if isErr {
			t.Errorf("%s: %s", name, text)
			continue
		}
		if i == 0 {
			// Some pages call alert() from their first inline scripts, before
			// Tether's hooks are in: those dialogs are the user's to answer.
			AnswerDialogsAsUser(t, alloc, base)
		}
		ours := ourNodes(text)
		theirs := chromiumNodes(t, alloc, "/"+name+"/source.html")
		m := matchCount(ours, theirs)
		if os.Getenv("TETHER_FIDELITY_DIFF") == name {
			for k, n := range theirs {
				if ours[k] < n {
					t.Logf("missing %dx %q", n-ours[k], k)
				}
			}
			for k, n := range ours {
				if theirs[k] < n {
					t.Logf("extra   %dx %q", n-theirs[k], k)
				}
			}
		}
		pg := fidelityPage{matched: m, theirs: total(theirs), ours: total(ours), f1: -1}
		recall, precision := 1.0, 1.0
		if pg.theirs > 0 {
			recall = float64(m) / float64(pg.theirs)
		}
		if pg.ours > 0 {
			precision = float64(m) / float64(pg.ours)
		}
		if want, err := os.ReadFile(filepath.Join(filepath.Dir(p), "expected.html")); err == nil {
			md, isErr := call(t, ctx, c, "browser_read", map[string]any{"mode": "readable"})
			if isErr {
				t.Errorf("%s: browser_read: %s", name, md)
			} else {
				pg.f1 = textmetrics.F1(md, textmetrics.HTMLText(string(want)))
			}
		}
		pg.line = fmt.Sprintf("%-45s recall %.3f precision %.3f (chromium %d, ours %d) read F1 %.3f", name, recall, precision, pg.theirs, pg.ours, pg.f1)
		out = append(out, pg)
	}
	return out
}
