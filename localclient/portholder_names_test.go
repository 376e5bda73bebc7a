package localclient

import "testing"

func TestAcceptsLoopback(t *testing.T) {
	for ip, want := range map[string]bool{
		"127.0.0.1":        true,
		"127.0.1.1":        true,
		"0.0.0.0":          true,
		"192.168.1.1":      false,
		"::":               true,
		"::ffff:127.0.0.1": true,
		"::1":              false, // takes no IPv4
		"*":                true,  // lsof's any address
		"[::]":             true,
		"not an address":   false,
	} {
		if got := acceptsLoopback(ip); got != want {
			t.Errorf("acceptsLoopback(%q) = %v, want %v", ip, got, want)
		}
	}
}

// TestPrintableProcessName: a process picks its own name; naming it must
// not put terminal escapes or bidirectional marks on the user's screen.
func TestPrintableProcessName(t *testing.T) {
	if got := printable("evil\x1b]0;owned\x07\u202ename"); got != "evil?]0;owned??name" {
		t.Errorf("printable = %q", got)
	}
	if got := printable("python3"); got != "python3" {
		t.Errorf("printable(python3) = %q", got)
	}
}
