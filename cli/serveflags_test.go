package cli

import (
	"flag"
	"slices"
	"testing"
)

// serveFlags keeps every flag `tether serve` ran with but the port, one
// entry per value of a repeatable flag, so `tether token rotate` restarts
// the daemon the same way (it dropped --enable-tools).
func TestServeFlags(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.Int("port", 0, "")
	var allow stringList
	fs.Var(&allow, "allow-extension", "")
	fs.Bool("auto-approve-profiles", false, "")
	fs.String("enable-tools", "", "")
	fs.String("unattended", "deny", "")
	if err := fs.Parse([]string{"--port", "5000", "--allow-extension", "a", "--allow-extension=b", "--enable-tools=browser_evaluate", "--auto-approve-profiles"}); err != nil {
		t.Fatal(err)
	}
	got := serveFlags(fs)
	want := []string{"--allow-extension=a", "--allow-extension=b", "--auto-approve-profiles=true", "--enable-tools=browser_evaluate"}
	if !slices.Equal(got, want) {
		t.Fatalf("serveFlags = %q, want %q", got, want)
	}
}
