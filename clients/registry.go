package clients

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// Paths, keys and entry shapes below are those docs/mcp-clients.md explains
// (§1 paths, §2 entry shapes, §3 reload behaviour, §4 traps, §5 the write
// procedure). Section numbers in comments point there.

// registry lists the supported clients, in --list order.
var registry = []Client{
	{
		ID: "claude-desktop", Name: "Claude Desktop",
		format: formatJSON, key: "mcpServers",
		stdio: plainStdio,
		// §2: Claude Desktop skips url entries; remote servers go through
		// Connectors, which run in Anthropic's cloud and can't reach loopback.
		http:         nil,
		locations:    claudeDesktopLocations,
		all:          true,
		Reload:       "Quit Claude Desktop completely (closing its window is not enough) and start it again.",
		NeedsRestart: true,
	},
	{
		ID: "claude-code", Name: "Claude Code",
		format: formatJSON, key: "mcpServers",
		// §2: "type" is optional for stdio; `claude mcp add` writes it.
		stdio: typedStdio("stdio"),
		// §2: "type" is required for a url entry.
		http: typedHTTP("http", "url"),
		locations: func(h Host) []location {
			return []location{{file: filepath.Join(h.Home, ".claude.json"), dir: filepath.Join(h.Home, ".claude")}}
		},
		Reload:       "Start a new Claude Code session (or run /mcp in a running one).",
		NeedsRestart: true,
	},
	{
		ID: "cursor", Name: "Cursor",
		format: formatJSON, key: "mcpServers",
		stdio: plainStdio,
		http:  untypedHTTP("url"),
		locations: func(h Host) []location {
			d := filepath.Join(h.Home, ".cursor")
			return []location{{file: filepath.Join(d, "mcp.json"), dir: d}}
		},
		Reload:       "Turn Tether on in Cursor Settings → MCP, or reload the window.",
		NeedsRestart: false,
	},
	{
		ID: "vscode", Name: "VS Code",
		// §1: the key is "servers", not "mcpServers"; §2: docs mark "type"
		// as required.
		format: formatJSON, key: "servers",
		stdio: typedStdio("stdio"),
		http:  typedHTTP("http", "url"),
		locations: func(h Host) []location {
			d := filepath.Join(h.appConfig(), "Code", "User")
			return []location{{file: filepath.Join(d, "mcp.json"), dir: d}}
		},
		Reload:       "In VS Code, start Tether from the MCP servers list (it asks you to trust it the first time).",
		NeedsRestart: false,
	},
	{
		ID: "windsurf", Name: "Windsurf",
		format: formatJSON, key: "mcpServers",
		stdio: plainStdio,
		// §2: write serverUrl; one vendor reports url does not connect.
		http: untypedHTTP("serverUrl"),
		locations: func(h Host) []location {
			d := filepath.Join(h.Home, ".codeium", "windsurf")
			return []location{{file: filepath.Join(d, "mcp_config.json"), dir: d}}
		},
		Reload:       "Press Refresh in Windsurf's MCP panel.",
		NeedsRestart: false,
	},
	{
		ID: "zed", Name: "Zed",
		format: formatJSON, key: "context_servers",
		stdio: plainStdio,
		http:  untypedHTTP("url"),
		locations: func(h Host) []location {
			var d string
			if h.OS == "windows" {
				d = filepath.Join(h.appData(), "Zed")
			} else {
				// §1: ~/.config/zed on macOS too.
				d = filepath.Join(h.xdgConfig(), "zed")
			}
			return []location{{file: filepath.Join(d, "settings.json"), dir: d}}
		},
		Reload:       "Nothing to do: Zed restarts changed servers by itself.",
		NeedsRestart: false,
		Watches:      true,
	},
	{
		ID: "codex", Name: "Codex",
		format: formatTOML,
		stdio:  plainStdio,
		// §2 and §4: url plus http_headers; "headers" is ignored and an
		// inline bearer_token is rejected.
		http: func(o Options) fields {
			return fields{{"url", o.URL}, {"http_headers", fields{{"Authorization", "Bearer " + o.Token}}}}
		},
		locations: func(h Host) []location {
			d := h.getenv("CODEX_HOME")
			if d == "" {
				d = filepath.Join(h.Home, ".codex")
			}
			return []location{{file: filepath.Join(d, "config.toml"), dir: d}}
		},
		Reload:       "Start a new Codex session.",
		NeedsRestart: true,
	},
	{
		ID: "gemini", Name: "Gemini CLI",
		format: formatJSON, key: "mcpServers",
		stdio: plainStdio,
		// §2: "url" means SSE; "httpUrl" is streamable HTTP.
		http: untypedHTTP("httpUrl"),
		locations: func(h Host) []location {
			d := filepath.Join(h.Home, ".gemini")
			return []location{{file: filepath.Join(d, "settings.json"), dir: d}}
		},
		Reload:       "Start a new Gemini CLI session, or run /mcp refresh.",
		NeedsRestart: true,
	},
	{
		ID: "cline", Name: "Cline",
		format: formatJSON, key: "mcpServers",
		stdio: typedStdio("stdio"),
		// §2: without "type" a url entry parses as SSE.
		http:         typedHTTP("streamableHttp", "url"),
		locations:    clineLocations,
		Reload:       "Nothing to do: Cline watches its settings file.",
		NeedsRestart: false,
		Watches:      true,
	},
	{
		ID: "lmstudio", Name: "LM Studio",
		format: formatJSON, key: "mcpServers",
		stdio: plainStdio,
		http:  untypedHTTP("url"),
		locations: func(h Host) []location {
			d := filepath.Join(h.Home, ".lmstudio")
			return []location{{file: filepath.Join(d, "mcp.json"), dir: d}}
		},
		Reload:       "Restart LM Studio if Tether does not show up in its Program tab.",
		NeedsRestart: false,
	},
}

func init() {
	for i := range registry {
		registry[i].HTTP = registry[i].http != nil
	}
}

// ownedKeys are the entry keys Tether writes in JSON configs. On update,
// owned keys the new entry lacks are removed (e.g. "url" when switching to
// stdio); every other key the user added to our entry ("disabled",
// "autoApprove", "timeout"…) is kept.
var ownedKeys = []string{"type", "command", "args", "env", "url", "serverUrl", "httpUrl", "headers"}

// ownedTOMLKeys are the keys Tether writes in [mcp_servers.tether].
var ownedTOMLKeys = []string{"command", "args", "env", "url", "http_headers"}

// plainStdio is §2's stdio shape without "type" (Claude Desktop, Cursor,
// Windsurf, Zed, Codex, Gemini CLI, LM Studio).
func plainStdio(o Options) fields {
	f := fields{{"command", o.Executable}, {"args", []string{"mcp"}}}
	var env fields
	if o.ConfigDir != "" {
		env = append(env, field{"TETHER_CONFIG_DIR", o.ConfigDir})
	}
	if o.Port != 0 {
		env = append(env, field{"TETHER_PORT", strconv.Itoa(o.Port)})
	}
	if env != nil {
		f = append(f, field{"env", env})
	}
	return f
}

func typedStdio(typ string) func(Options) fields {
	return func(o Options) fields { return append(fields{{"type", typ}}, plainStdio(o)...) }
}

func untypedHTTP(urlKey string) func(Options) fields {
	return func(o Options) fields {
		return fields{{urlKey, o.URL}, {"headers", fields{{"Authorization", "Bearer " + o.Token}}}}
	}
}

func typedHTTP(typ, urlKey string) func(Options) fields {
	return func(o Options) fields { return append(fields{{"type", typ}}, untypedHTTP(urlKey)(o)...) }
}

// claudeDesktopLocations: §1 and §4. On Windows the MSIX build (the default
// since Feb 2026) reads only its virtualized %LOCALAPPDATA%\Packages\Claude_*
// \LocalCache\Roaming\Claude folder, while "Edit Config" may open the classic
// %APPDATA%\Claude file: when an MSIX package exists we write both. Linux has
// no official build; unofficial ones read ~/.config/Claude.
func claudeDesktopLocations(h Host) []location {
	const file = "claude_desktop_config.json"
	switch h.OS {
	case "darwin":
		d := filepath.Join(h.Home, "Library", "Application Support", "Claude")
		return []location{{file: filepath.Join(d, file), dir: d}}
	case "windows":
		var locs []location
		pkgs, _ := filepath.Glob(filepath.Join(h.localAppData(), "Packages", "Claude_*"))
		sort.Strings(pkgs)
		for _, p := range pkgs {
			d := filepath.Join(p, "LocalCache", "Roaming", "Claude")
			locs = append(locs, location{file: filepath.Join(d, file), dir: p})
		}
		classic := filepath.Join(h.appData(), "Claude")
		return append(locs, location{file: filepath.Join(classic, file), dir: classic})
	default:
		d := filepath.Join(h.xdgConfig(), "Claude")
		return []location{{file: filepath.Join(d, file), dir: d}}
	}
}

// clineLocations: §1 and §4. Builds from 2026 use ~/.cline/data/settings;
// older ones keep the file in VS Code's globalStorage. Both are checked; the
// ones that exist are written.
func clineLocations(h Host) []location {
	const file = "cline_mcp_settings.json"
	newDir := filepath.Join(h.Home, ".cline")
	oldDir := filepath.Join(h.appConfig(), "Code", "User", "globalStorage", "saoudrizwan.claude-dev")
	return []location{
		{file: filepath.Join(newDir, "data", "settings", file), dir: newDir},
		{file: filepath.Join(oldDir, "settings", file), dir: oldDir},
	}
}

func (h Host) getenv(k string) string {
	if h.Getenv == nil {
		return ""
	}
	return h.Getenv(k)
}

// xdgConfig is $XDG_CONFIG_HOME, else ~/.config (used on macOS too by the
// clients that follow XDG, such as Zed).
func (h Host) xdgConfig() string {
	if d := h.getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return filepath.Join(h.Home, ".config")
}

// appData is %APPDATA%, else <home>\AppData\Roaming.
func (h Host) appData() string {
	if d := h.getenv("APPDATA"); d != "" {
		return d
	}
	return filepath.Join(h.Home, "AppData", "Roaming")
}

// localAppData is %LOCALAPPDATA%, else <home>\AppData\Local.
func (h Host) localAppData() string {
	if d := h.getenv("LOCALAPPDATA"); d != "" {
		return d
	}
	return filepath.Join(h.Home, "AppData", "Local")
}

// appConfig is where Electron apps such as VS Code keep their settings, as
// os.UserConfigDir computes it per OS.
func (h Host) appConfig() string {
	switch h.OS {
	case "darwin":
		return filepath.Join(h.Home, "Library", "Application Support")
	case "windows":
		return h.appData()
	default:
		return h.xdgConfig()
	}
}

// targets returns the config files Connect writes for c, and whether the
// client looks installed (one of its folders exists). Files that already
// exist are preferred; else those whose folder exists; else the first
// candidate (§5.1). With c.all, every candidate is a target once any exists.
func (h Host) targets(c Client) (files []string, installed bool) {
	locs := c.locations(h)
	var existing, inDir []string
	for _, l := range locs {
		if isFile(l.file) {
			existing = append(existing, l.file)
		}
		if isDir(l.dir) || isFile(l.file) {
			inDir = append(inDir, l.file)
		}
	}
	installed = len(inDir) > 0
	switch {
	case c.all && installed:
		for _, l := range locs {
			files = append(files, l.file)
		}
	case len(existing) > 0:
		files = existing
	case len(inDir) > 0:
		files = inDir
	default:
		files = []string{locs[0].file}
	}
	return files, installed
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
