// Labels: what any local process may claim as a profile's name, made safe
// to show.

package broker

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLabelRunes is the longest label kept, in runes (code points).
const MaxLabelRunes = 64

// cleanLabel makes an extension's label safe to show in a terminal, a log
// line or the window, as any local process can claim a label:
//   - terminal escape sequences (ECMA-48: CSI "ESC [ … final", OSC "ESC ] …
//     BEL|ST", DCS/SOS/PM/APC strings up to ST, two- and three-character
//     escapes such as "ESC ( B", and their C1 forms U+009B, U+009D…) are
//     removed whole, so "\x1b[31mRED" is "RED", not "[31mRED"; an
//     unterminated one runs to the end of the label;
//   - other control characters (a newline, a lone ESC) and bidirectional
//     formatting characters (U+202E would flip a table row; Unicode TR9 §2
//     lists them) become spaces;
//   - invalid UTF-8 becomes U+FFFD; runs of spaces become one, none at
//     either end; at most MaxLabelRunes runes are kept.
//
// The result is never empty ("Chrome" stands in), and cleaning it again
// changes nothing.
func cleanLabel(label string) string {
	label = stripEscapes(strings.ToValidUTF8(label, "\uFFFD"))
	label = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, label)
	label = strings.Join(strings.Fields(label), " ")
	if utf8.RuneCountInString(label) > MaxLabelRunes {
		label = strings.TrimRightFunc(string([]rune(label)[:MaxLabelRunes]), unicode.IsSpace)
	}
	if label == "" {
		return "Chrome"
	}
	return label
}

// C0 and C1 characters that start or end escape sequences.
const (
	esc = '\x1b'
	bel = '\x07'
	csi = '\u009b' // C1 form of ESC [
	st  = '\u009c' // C1 string terminator, ESC \
	osc = '\u009d' // C1 form of ESC ]
	dcs = '\u0090' // C1 form of ESC P
	sos = '\u0098' // C1 form of ESC X
	pm  = '\u009e' // C1 form of ESC ^
	apc = '\u009f' // C1 form of ESC _
)

// stripEscapes removes every terminal escape sequence from s (valid UTF-8),
// whole; see cleanLabel. Other characters are kept as they are.
func stripEscapes(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == esc || r >= 0x80 && r <= 0x9f }) {
		return s
	}
	rs := []rune(s)
	var out strings.Builder
	for i := 0; i < len(rs); {
		r := rs[i]
		switch {
		case r == esc && i+1 < len(rs):
			i = skipEscape(rs, i+1)
		case r == esc: // a lone ESC at the end
			i++
		case r == csi:
			i = skipCSI(rs, i+1)
		case r == osc:
			i = skipString(rs, i+1, true)
		case r == dcs || r == sos || r == pm || r == apc:
			i = skipString(rs, i+1, false)
		default:
			out.WriteRune(r)
			i++
		}
	}
	return out.String()
}

// skipEscape skips the rest of a sequence begun by ESC at rs[i-1] and
// returns the index after it.
func skipEscape(rs []rune, i int) int {
	switch rs[i] {
	case '[':
		return skipCSI(rs, i+1)
	case ']':
		return skipString(rs, i+1, true)
	case 'P', 'X', '^', '_':
		return skipString(rs, i+1, false)
	}
	// nF / Fp / Fe / Fs: intermediates 0x20–0x2F, then one final 0x30–0x7E.
	for i < len(rs) && rs[i] >= 0x20 && rs[i] <= 0x2f {
		i++
	}
	if i < len(rs) && rs[i] >= 0x30 && rs[i] <= 0x7e {
		i++
	}
	return i
}

// skipCSI skips a control sequence's parameters (0x30–0x3F), intermediates
// (0x20–0x2F) and final byte (0x40–0x7E) from rs[i]. A character outside
// those ends the sequence without being skipped (it is not part of it).
func skipCSI(rs []rune, i int) int {
	for i < len(rs) && rs[i] >= 0x20 && rs[i] <= 0x3f {
		i++
	}
	if i < len(rs) && rs[i] >= 0x40 && rs[i] <= 0x7e {
		i++
	}
	return i
}

// skipString skips a control string from rs[i] up to and including its
// terminator: ST (ESC \ or U+009C), or BEL too when bel is set (OSC). An
// unterminated string runs to the end.
func skipString(rs []rune, i int, belEnds bool) int {
	for ; i < len(rs); i++ {
		switch {
		case rs[i] == st, belEnds && rs[i] == bel:
			return i + 1
		case rs[i] == esc && i+1 < len(rs) && rs[i+1] == '\\':
			return i + 2
		}
	}
	return i
}
