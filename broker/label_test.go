package broker

import (
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// A label from any local process is shown in terminals and the window: no
// escape sequences, newlines or bidi overrides survive, and escape
// sequences leave nothing behind (issue 12: "[31m" stayed in label and slug).
func TestCleanLabel(t *testing.T) {
	for in, want := range map[string]string{
		"Work":                               "Work",
		"  \t":                               "Chrome",
		"\x1b[31mRED\x1b[0m\x1b]0;pwned\x07": "RED",
		"\x1b[1;31;40mWork\x1b[m Laptop":     "Work Laptop",
		"a\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\b": "alinkb",
		"\x1bPq#0;2;0;0;0\x1b\\Home":                       "Home",
		"\u009b31mC1\u009b0m":                              "C1",
		"\u009d0;title\u009cok":                            "ok",
		"x\x1b(By\x1b7z\x1bc":                              "xyz",
		"cut \x1b[31":                                      "cut",
		"cut \x1b]0;never ends":                            "cut",
		"lone \x1b":                                        "lone",
		"Home\nSLUG  LABEL":                                "Home SLUG LABEL",
		"evil\u202eexe.txt":                                "evil exe.txt",
		"Laptop 💻":                                         "Laptop 💻",
		"a\u2066b\u2069":                                   "a b",
		"bad \xff utf8":                                    "bad \uFFFD utf8",
		"[31m typed by hand":                               "[31m typed by hand",
		strings.Repeat("a", 63) + " bcd":                   strings.Repeat("a", 63),
	} {
		if got := cleanLabel(in); got != want {
			t.Errorf("cleanLabel(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Slugify(cleanLabel("\x1b[31mWork\x1b[0m")); got != "work" {
		t.Errorf("slug of a coloured label = %q, want work", got)
	}
}

var validSlug = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// FuzzCleanLabel checks cleanLabel's promises on any input: valid UTF-8, no
// control or bidi characters (so no escape sequence can reach a terminal),
// 1 to MaxLabelRunes runes, no space at either end or twice in a row,
// idempotent, and a valid slug. The seed corpus is in
// testdata/fuzz/FuzzCleanLabel; run with
// go test -run '^$' -fuzz FuzzCleanLabel -fuzztime 30s ./broker
func FuzzCleanLabel(f *testing.F) {
	for _, s := range []string{"Work", "\x1b[31mRED\x1b[0m", "\x1b]0;t\x07x", "\u009b1m", "a\u202eb", strings.Repeat("é", 70)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := cleanLabel(in)
		if !utf8.ValidString(out) {
			t.Fatalf("cleanLabel(%q) = %q: invalid UTF-8", in, out)
		}
		for _, r := range out {
			if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
				t.Fatalf("cleanLabel(%q) = %q keeps %U", in, out, r)
			}
		}
		if n := utf8.RuneCountInString(out); n < 1 || n > MaxLabelRunes {
			t.Fatalf("cleanLabel(%q) = %q: %d runes", in, out, n)
		}
		if out != strings.Join(strings.Fields(out), " ") {
			t.Fatalf("cleanLabel(%q) = %q: stray spaces", in, out)
		}
		if again := cleanLabel(out); again != out {
			t.Fatalf("not idempotent: cleanLabel(%q) = %q, then %q", in, out, again)
		}
		if slug := Slugify(out); !validSlug.MatchString(slug) {
			t.Fatalf("Slugify(cleanLabel(%q)) = %q, not a valid slug", in, slug)
		}
	})
}
