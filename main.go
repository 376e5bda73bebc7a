// Command tether is the Tether daemon and its command-line tools:
//
//	tether           run the daemon with the tray
//	tether serve     run the daemon without a UI
//	tether mcp       MCP stdio server for AI apps (starts the daemon if needed)
//	tether browser   launch Chromium with the Tether extension loaded
//	tether version   print the version
//
// The commands live in package cli; this file only dispatches to it.
package main

import (
	"os"

	"github.com/tether-browser/tether/cli"
)

func main() { cli.Main(os.Args) }
