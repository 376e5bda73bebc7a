package cli

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestHelpExitsZero runs this test binary as `tether CMD --help` (the
// TETHER_TEST_MAIN switch below) for every subcommand: each must exit 0
// and print its usage on stdout, with nothing on stderr.
func TestHelpExitsZero(t *testing.T) {
	cases := [][]string{
		{"serve", "--help"}, {"mcp", "--help"}, {"browser", "--help"}, {"browser", "-h"},
		{"profiles", "--help"}, {"profiles", "approve", "--help"}, {"connect", "--help"},
		{"disconnect", "--help"}, {"token", "--help"}, {"token", "rotate", "--help"},
		{"timeline", "--help"}, {"timeline", "export", "--help"}, {"pause", "--help"},
		{"resume", "-h"}, {"version", "--help"}, {"help"}, {"--help"},
	}
	for _, args := range cases {
		name := strings.Join(args, " ")
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainProcess$")
		cmd.Env = append(os.Environ(), "TETHER_TEST_MAIN="+strings.Join(args, "\x1f"), "TETHER_CONFIG_DIR="+t.TempDir())
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			t.Errorf("tether %s: exit %d, stderr %q", name, exitErr.ExitCode(), errOut.String())
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "Usage:") && !strings.HasPrefix(out.String(), "Tether lets") {
			t.Errorf("tether %s: stdout does not start with the usage: %q", name, out.String())
		}
		if strings.Contains(out.String()+errOut.String(), "help requested") {
			t.Errorf("tether %s: prints flag's %q", name, "help requested")
		}
		if errOut.Len() > 0 {
			t.Errorf("tether %s: stderr %q", name, errOut.String())
		}
	}
	// A real usage error still fails, on stderr.
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainProcess$")
	cmd.Env = append(os.Environ(), "TETHER_TEST_MAIN=serve\x1f--bogus", "TETHER_CONFIG_DIR="+t.TempDir())
	var errOut strings.Builder
	cmd.Stderr = &errOut
	if err := cmd.Run(); err == nil || !strings.Contains(errOut.String(), "-bogus") {
		t.Errorf("tether serve --bogus: err %v, stderr %q; want a failure naming the flag", err, errOut.String())
	}
}

// TestMainProcess is Main itself, run by TestHelpExitsZero in a child.
func TestMainProcess(t *testing.T) {
	args := os.Getenv("TETHER_TEST_MAIN")
	if args == "" {
		t.Skip("only run as a child of TestHelpExitsZero")
	}
	Main(append([]string{"tether"}, strings.Split(args, "\x1f")...))
	os.Exit(0)
}
