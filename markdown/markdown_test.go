package markdown

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tether-browser/tether/test/textmetrics"
)

func TestFullModeMakesLinksAbsolute(t *testing.T) {
	page := `<html><head><title>T</title></head><body><h1>Hello</h1><p>See <a href="/docs/a">docs</a>, <a href="b.html">b</a>
	and <a href="javascript:alert(1)">this</a>.</p><img src="img/x.png" alt="x"><table><tr><th>k</th></tr><tr><td>v</td></tr></table></body></html>`
	r, err := Convert(page, "https://example.com/dir/page.html", Full)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Hello", "[docs](https://example.com/docs/a)", "[b](https://example.com/dir/b.html)", "![x](https://example.com/dir/img/x.png)", "| k |"} {
		if !strings.Contains(r.Markdown, want) {
			t.Errorf("lacks %q:\n%s", want, r.Markdown)
		}
	}
	if strings.Contains(r.Markdown, "javascript:") {
		t.Errorf("kept a javascript: link:\n%s", r.Markdown)
	}
}

func TestBaseElementIsHonoured(t *testing.T) {
	r, err := Convert(`<html><head><base href="https://cdn.example.org/root/"></head><body><a href="x">x</a></body></html>`, "https://example.com/", Full)
	if err != nil || !strings.Contains(r.Markdown, "https://cdn.example.org/root/x") {
		t.Fatalf("%v %s", err, r.Markdown)
	}
}

func TestReadableFallsBackToFull(t *testing.T) {
	r, err := Convert(`<html><body><button>Only a button</button></body></html>`, "https://example.com/", Readable)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mode != Full || !strings.Contains(r.Markdown, "Only a button") {
		t.Fatalf("mode %s: %q", r.Mode, r.Markdown)
	}
}

// TestReadableQualityOnTheCorpus converts each saved page of the shared
// corpus (as saved, not rendered: the end-to-end test covers rendered DOM)
// and compares its words with Readability's expected output.
func TestReadableQualityOnTheCorpus(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "corpus", "readability")
	pages, _ := filepath.Glob(filepath.Join(dir, "*", "source.html"))
	if len(pages) == 0 {
		t.Skipf("no corpus at %s (../shared is absent); skipping the reading-quality test", dir)
	}
	var scores []float64
	for _, src := range pages {
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(filepath.Dir(src), "expected.html"))
		if err != nil {
			continue
		}
		r, err := Convert(string(raw), "http://fakehost/test/page.html", Readable)
		if err != nil {
			t.Errorf("%s: %v", src, err)
			continue
		}
		scores = append(scores, textmetrics.F1(r.Markdown, textmetrics.HTMLText(string(want))))
	}
	slices.Sort(scores)
	median := scores[len(scores)/2]
	above := 0
	for _, s := range scores {
		if s >= 0.7 {
			above++
		}
	}
	t.Logf("%d pages: median F1 %.3f, min %.3f, %d%% ≥ 0.7", len(scores), median, scores[0], 100*above/len(scores))
	if median < 0.85 || float64(above) < 0.8*float64(len(scores)) {
		t.Fatalf("reading quality too low: median %.3f, %d of %d pages ≥ 0.7", median, above, len(scores))
	}
}
