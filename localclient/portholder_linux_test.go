package localclient

// The helpers of portholder_linux.go, which only Linux builds.

import "testing"

func TestAcceptsLoopback(t *testing.T) {
	for hex, want := range map[string]bool{
		"0100007F":                         true,  // 127.0.0.1
		"00000000":                         true,  // 0.0.0.0
		"0101A8C0":                         false, // 192.168.1.1
		"00000000000000000000000000000000": true,  // ::
		"0000000000000000FFFF00000100007F": true,  // ::ffff:127.0.0.1
		"00000000000000000000000001000000": false, // ::1 takes no IPv4
	} {
		if got := acceptsLoopback(hex); got != want {
			t.Errorf("acceptsLoopback(%s) = %v, want %v", hex, got, want)
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
