// Command genproto writes the protocol's JSON Schema to the path given as its
// only argument (the Makefile passes extension/src/protocol.schema.json).
package main

import (
	"fmt"
	"os"

	"github.com/tether-browser/tether/protocol"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genproto OUT.json")
		os.Exit(2)
	}
	b, err := protocol.Schema()
	if err != nil {
		fmt.Fprintln(os.Stderr, "genproto:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "genproto:", err)
		os.Exit(1)
	}
}
