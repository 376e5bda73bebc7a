package broker

import (
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Slugify derives a profile slug from a label: lowercase ASCII letters and
// digits, words joined by "-"; accents are stripped (Unicode NFD, then
// combining marks dropped) and everything else (emoji, punctuation, other
// scripts) dropped; "" becomes "profile". "Work Laptop 💻" → "work-laptop",
// "Café" → "cafe".
func Slugify(label string) string {
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for _, r := range norm.NFD.String(label) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// a combining mark split off by NFD: drop it, keep its base letter
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			cur.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			cur.WriteRune(r + ('a' - 'A'))
		case r == ' ' || r == '-' || r == '_' || r == '.' || r == '/' || r == '\t':
			flush()
		default:
			// dropped: emoji, punctuation, non-ASCII letters
		}
	}
	flush()
	if len(words) == 0 {
		return "profile"
	}
	return strings.Join(words, "-")
}

// uniqueSlug returns base, or base-2, base-3… the first not in taken.
func uniqueSlug(base string, taken map[string]bool) string {
	if !taken[base] {
		return base
	}
	for i := 2; ; i++ {
		s := base + "-" + strconv.Itoa(i)
		if !taken[s] {
			return s
		}
	}
}
