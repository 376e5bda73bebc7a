package broker

import "testing"

// A label from any local process is shown in terminals and the window: no
// escape sequences, newlines or bidi overrides survive.
func TestCleanLabel(t *testing.T) {
	for in, want := range map[string]string{
		"Work":                               "Work",
		"  \t":                               "Chrome",
		"\x1b[31mRED\x1b[0m\x1b]0;pwned\x07": "[31mRED [0m ]0;pwned",
		"Home\nSLUG  LABEL":                  "Home SLUG LABEL",
		"evil\u202eexe.txt":                  "evil exe.txt",
		"Laptop 💻":                           "Laptop 💻",
		"a\u2066b\u2069":                     "a b",
	} {
		if got := cleanLabel(in); got != want {
			t.Errorf("cleanLabel(%q) = %q, want %q", in, got, want)
		}
	}
}
