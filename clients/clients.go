// Package clients registers Tether with MCP clients (Claude Desktop, Claude
// Code, Cursor, VS Code, Windsurf, Zed, Codex, Gemini CLI, Cline, LM Studio):
// it detects which are installed, computes their config paths per OS, and
// reads, edits and writes their config files.
//
// Every surface (the CLI today, the tray and the window later) goes through
// one API: Host.List, Host.Connect, Host.Disconnect and Host.RotateToken.
//
// The writing rules come from issue 5 (docs/mcp-clients.md §5 gives them
// with their reasons): edit in place (JSONC through github.com/tailscale/hujson's syntax tree,
// Codex TOML by splicing the text of our own table and checking the result
// with github.com/pelletier/go-toml/v2), keep every byte outside our entry
// (comments, key order, other servers, unknown keys, a BOM, CRLF line ends),
// be idempotent, back the file up next to itself before each change (keeping
// MaxBackups), write atomically keeping the file's mode, and refuse, leaving
// it byte-identical, a file that does not parse.
package clients

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"
)

// ServerName is the name of Tether's entry in every client's config: it is
// lowercase with no underscore, which every client accepts (Claude Code allows
// only [A-Za-z0-9_-]; Gemini CLI splits tool names on "_"). docs/mcp-clients.md §5.5.
const ServerName = "tether"

// DefaultMaxBackups is how many backups of one config file Host keeps when
// Host.MaxBackups is 0.
const DefaultMaxBackups = 5

// Client describes one MCP client Tether can register with.
type Client struct {
	// ID is the CLI name, e.g. "claude-desktop".
	ID string
	// Name is the product name shown to the user, e.g. "Claude Desktop".
	Name string
	// HTTP reports whether the client's config file accepts a streamable HTTP
	// entry (`tether connect --http`). Claude Desktop does not (docs/mcp-clients.md §2).
	HTTP bool
	// Reload tells the user what to do for the client to pick up a change
	// (docs/mcp-clients.md §3).
	Reload string
	// NeedsRestart is true when the client reads its config only at start, so
	// the user has to restart it (as opposed to refreshing or nothing).
	NeedsRestart bool
	// Watches is true when the client reloads its config file by itself
	// (docs/mcp-clients.md §3: "nothing"), after a removal too.
	Watches bool

	format    format
	key       string // the servers object in JSON: "mcpServers", "servers", "context_servers"
	stdio     func(o Options) fields
	http      func(o Options) fields
	locations func(h Host) []location
	// all makes every location a target, not only the preferred one(s): Claude
	// Desktop on Windows reads the MSIX path but "Edit Config" may open the
	// classic one, so we write both (docs/mcp-clients.md §4).
	all bool
}

type format int

const (
	formatJSON format = iota // JSON or JSONC, edited through hujson
	formatTOML               // Codex's config.toml
)

// location is one candidate config file: the file itself and the folder whose
// existence tells the client is installed there.
type location struct {
	file string
	dir  string
}

// Host is the machine whose clients are listed and edited: its OS, home dir
// and environment. Tests set every field to cover linux, darwin and windows
// from one machine; CurrentHost fills them for the running process.
type Host struct {
	// OS is "linux", "darwin" or "windows" (runtime.GOOS values). Other Unix
	// systems are treated as linux.
	OS string
	// Home is the user's home dir (os.UserHomeDir). Every path is under it,
	// or under a folder named by Getenv.
	Home string
	// Getenv reads environment variables: XDG_CONFIG_HOME (linux), APPDATA
	// and LOCALAPPDATA (windows), CODEX_HOME (all). nil reads none, and the
	// defaults under Home are used.
	Getenv func(string) string
	// Now stamps backups; nil means time.Now.
	Now func() time.Time
	// MaxBackups is how many backups of one file to keep; 0 means
	// DefaultMaxBackups.
	MaxBackups int
}

// Options is what Connect writes.
type Options struct {
	// Executable is the absolute path of the tether binary, symlinks resolved
	// (see Executable). The stdio entry runs it with the argument "mcp".
	Executable string
	// ConfigDir, when not empty, is passed to the stdio entry as
	// TETHER_CONFIG_DIR. Set it only when the config dir is not the default
	// one (config.Paths.IsDefault), so the entry stays portable otherwise.
	ConfigDir string
	// Port, when not 0, is passed to the stdio entry as TETHER_PORT: the
	// port of a daemon the entry starts (or finds) when it is not the
	// default one. Set it only for a port other than config.DefaultPort.
	Port int
	// HTTP writes a streamable HTTP entry instead of a stdio one. Connect
	// refuses it for a client whose Client.HTTP is false (ErrNoHTTP).
	HTTP bool
	// URL is the daemon's MCP endpoint, e.g. http://127.0.0.1:47615/mcp.
	URL string
	// Token is the bearer token, written literally into the header: the file
	// is the user's own and keeps its mode (issue 5); RotateToken rewrites it.
	Token string
}

// Executable returns the absolute path of the running binary with symlinks
// resolved, as the stdio entry needs it: clients never use PATH for it
// (GUI apps on macOS don't have the shell's PATH, docs/mcp-clients.md §2).
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Abs(exe)
}

// CurrentHost describes the running process's machine.
func CurrentHost() (Host, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return Host{}, err
	}
	return Host{OS: runtime.GOOS, Home: home, Getenv: os.Getenv}, nil
}

// All returns every supported client, in the order --list shows them.
func All() []Client {
	out := make([]Client, len(registry))
	copy(out, registry)
	return out
}

// Lookup returns the client with the given ID.
func Lookup(id string) (Client, bool) {
	for _, c := range registry {
		if c.ID == id {
			return c, true
		}
	}
	return Client{}, false
}

// Change says what happened to one config file.
type Change string

const (
	// Added: our entry was not there and now is.
	Added Change = "added"
	// Updated: our entry was there with other values (a moved binary, another
	// token or port, stdio ↔ HTTP) and was rewritten.
	Updated Change = "updated"
	// Unchanged: the file already said what we would write (or, for
	// Disconnect, had no entry of ours); it was not touched.
	Unchanged Change = "unchanged"
	// Removed: our entry was removed.
	Removed Change = "removed"
)

// FileResult is the outcome for one config file.
type FileResult struct {
	// Path is the config file.
	Path string
	// Change is what happened to it.
	Change Change
	// Backup is the copy of the previous file made before the change, or ""
	// when none was made (no change, or the file did not exist).
	Backup string
}

// Outcome is what Connect, Disconnect and RotateToken report for one client,
// so every surface can show it.
type Outcome struct {
	Client Client
	// Files has one result per config file written or checked.
	Files []FileResult
	// Changed is true when any file changed.
	Changed bool
	// NeedsRestart is true when the client must be restarted for a change to
	// take effect; Client.Reload says how.
	NeedsRestart bool
}

// Mode is the transport of an entry.
type Mode string

const (
	ModeStdio Mode = "stdio"
	ModeHTTP  Mode = "http"
)

// FileStatus is what one config file says about Tether.
type FileStatus struct {
	// Path is the config file.
	Path string
	// Exists is false when the file does not exist yet.
	Exists bool
	// Connected is true when the file has an entry named ServerName.
	Connected bool
	// Mode is the entry's transport, when Connected.
	Mode Mode
	// Command is the entry's command (stdio) and URL its URL (HTTP).
	Command, URL string
	// Err is set when the file cannot be read or parsed.
	Err error
}

// Status is one client as --list shows it.
type Status struct {
	Client Client
	// Installed is true when the client's config folder exists: every client
	// creates it on first start.
	Installed bool
	// Files are the config files Connect would write.
	Files []FileStatus
	// Connected is true when every file in Files has our entry.
	Connected bool
}

// Lines describes the outcome for the user, one line per file, then the
// step that makes the client pick the change up (when something changed).
// connect says whether it was Connect (else Disconnect).
func (o Outcome) Lines(connect bool) []string {
	var out []string
	for _, f := range o.Files {
		switch {
		case f.Change == Unchanged && connect:
			out = append(out, fmt.Sprintf("%s: already connected in %s", o.Client.Name, f.Path))
		case f.Change == Unchanged:
			out = append(out, fmt.Sprintf("%s: no Tether entry in %s", o.Client.Name, f.Path))
		default:
			out = append(out, fmt.Sprintf("%s: %s Tether in %s", o.Client.Name, f.Change, f.Path))
			if f.Backup != "" {
				out = append(out, "  previous file saved as "+f.Backup)
			}
		}
	}
	switch {
	case o.Changed && !connect && o.Client.Watches:
		out = append(out, "  next: nothing to do: "+o.Client.Name+" notices the change and drops Tether by itself")
	case o.Changed && !connect:
		// Reload says how to pick up a new entry ("Turn Tether on in …"),
		// which does not fit a removal.
		out = append(out, "  next: restart or reload "+o.Client.Name+" so that it drops Tether")
	case o.Changed && o.Client.Reload != "":
		out = append(out, "  next: "+o.Client.Reload)
	}
	return out
}
