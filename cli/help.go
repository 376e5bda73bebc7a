package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// wantsHelp reports whether args ask for help: -h, -help or --help before
// any "--" (what follows "--" belongs to another program, e.g. the browser).
func wantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// helpOutput is where a command's usage goes: stdout when the user asked for
// help (the command then exits 0), stderr when it follows a usage error.
func helpOutput(args []string) io.Writer {
	if wantsHelp(args) {
		return os.Stdout
	}
	return os.Stderr
}

// commandUsage returns the lines of the top-level usage that describe cmd
// ("" is bare `tether`): each "  tether CMD …" line with its continuation
// lines, under a "Usage:" header.
func commandUsage(cmd string) string {
	var b strings.Builder
	b.WriteString("Usage:\n")
	in := false
	for _, line := range strings.Split(usage, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "tether") {
			fields := strings.Fields(trimmed)
			name := ""
			if len(fields) > 1 && !strings.HasPrefix(fields[1], "[") {
				name = fields[1]
			}
			in = name == cmd || (cmd == "resume" && name == "pause")
		} else if trimmed == "" || !strings.HasPrefix(line, "    ") {
			in = false
		}
		if in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// newFlagSet is a flag set for cmd whose usage is cmd's lines of the
// top-level usage followed by its flags; it goes to stdout for -h/--help
// (see helpOutput). Parse then returns flag.ErrHelp, which main turns
// into exit status 0.
func newFlagSet(cmd string, args []string) *flag.FlagSet {
	name := cmd
	if name == "" {
		name = "tether"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(helpOutput(args))
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), commandUsage(cmd))
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(fs.Output(), "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}
