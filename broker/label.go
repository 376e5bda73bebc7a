// Labels: what any local process may claim as a profile's name, made safe
// to show.

package broker

import (
	"strings"
	"unicode"
)

// cleanLabel makes an extension's label safe to show: control characters
// (a terminal escape, a newline) and bidirectional formatting characters
// (U+202E would flip a table row) become spaces, as any other process can
// claim a label (Unicode TR9 §2 lists the formatting characters).
func cleanLabel(label string) string {
	label = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, label)
	label = strings.Join(strings.Fields(label), " ")
	if label == "" {
		return "Chrome"
	}
	if r := []rune(label); len(r) > 64 {
		label = string(r[:64])
	}
	return label
}
