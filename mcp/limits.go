package mcp

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
)

// Limits on what clients and extensions send that Tether shows or stores
// (issue 12, "Limits").
const (
	// MaxClientNameChars caps clientInfo's name (and version), in
	// characters (runes): it is on every timeline row and approval prompt.
	MaxClientNameChars = 100
	// MaxErrorChars caps the text of a browser error reaching the agent,
	// in characters (runes): the extension's error messages are its own to
	// choose, and a forged extension could send megabytes.
	MaxErrorChars = 2000
)

// CleanClientName makes an MCP client's clientInfo name safe to show and
// store: control characters (a terminal escape, a newline) and bidirectional
// formatting characters (Unicode TR9 §2; U+202E would flip a timeline row)
// become spaces, runs of spaces one, and the result is cut to
// MaxClientNameChars characters. The same rule as the broker's profile
// labels. Square brackets become parentheses: Tether marks a name with its
// token in brackets ("agent [token ci]"), and a client must not forge that
// mark. "" stays "" (unknown client).
func CleanClientName(name string) string {
	if len(name) > 8*MaxClientNameChars {
		name = name[:8*MaxClientNameChars] // no need to look further: at most 4 bytes a rune
	}
	name = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == unicode.ReplacementChar:
			return ' '
		case r == '[':
			return '('
		case r == ']':
			return ')'
		}
		return r
	}, strings.ToValidUTF8(name, " "))
	name = strings.Join(strings.Fields(name), " ")
	if r := []rune(name); len(r) > MaxClientNameChars {
		name = strings.TrimSpace(string(r[:MaxClientNameChars]))
	}
	return name
}

// cleanInitialize is the server's before-initialize hook: the session
// stores the cleaned clientInfo, never the client's raw name, so that a
// 4 MiB name is neither kept per session nor shown anywhere.
func cleanInitialize(_ context.Context, _ any, req *mcpgo.InitializeRequest) {
	req.Params.ClientInfo.Name = CleanClientName(req.Params.ClientInfo.Name)
	req.Params.ClientInfo.Version = CleanClientName(req.Params.ClientInfo.Version)
	req.Params.ClientInfo.Title = CleanClientName(req.Params.ClientInfo.Title)
	req.Params.ClientInfo.Description = CleanClientName(req.Params.ClientInfo.Description)
	req.Params.ClientInfo.WebsiteURL = CleanClientName(req.Params.ClientInfo.WebsiteURL)
	req.Params.ClientInfo.Icons = nil // never shown
}

// capText cuts s to max characters (runes), saying how long it was.
func capChars(s string, max int) string {
	if len(s) <= max { // bytes ≥ runes: short enough
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + fmt.Sprintf("… (cut: %d characters in all)", len(r))
}
