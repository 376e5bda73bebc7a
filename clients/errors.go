package clients

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownClient: the client id is not one of All().
var ErrUnknownClient = errors.New("unknown client")

// ErrNoHTTP: the client's config file cannot hold a streamable HTTP entry
// (Claude Desktop: docs/mcp-clients.md §2).
var ErrNoHTTP = errors.New("this client only runs MCP servers over stdio")

// ErrRefused is matched (errors.Is) by every error for a config file Tether
// would not edit; the file was left byte-identical.
var ErrRefused = errors.New("config file left unchanged")

// ParseError: a config file does not parse as its format. Tether left it
// byte-identical.
type ParseError struct {
	// Path is the config file.
	Path string
	// Line and Column (1-based; 0 when unknown) locate the error. Columns
	// count bytes, a BOM excluded.
	Line, Column int
	// Msg is the parser's message.
	Msg string
}

func (e *ParseError) Error() string {
	loc := e.Path
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", e.Path, e.Line, e.Column)
	}
	return fmt.Sprintf("%s: %s; Tether did not change the file: fix it (or move it away) and try again", loc, e.Msg)
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *ParseError) Is(target error) bool { return target == ErrRefused }

// ShapeError: a config file parses but is not shaped as expected (the servers
// key is not an object, our entry appears twice, our TOML table is written in
// a form we can't splice). Tether left it byte-identical.
type ShapeError struct {
	Path string
	Msg  string
}

func (e *ShapeError) Error() string {
	msg := e.Msg
	if !strings.Contains(msg, "fix") {
		msg += "; Tether did not change the file: fix it by hand and try again"
	}
	return e.Path + ": " + msg
}

// Is makes errors.Is(err, ErrRefused) true.
func (e *ShapeError) Is(target error) bool { return target == ErrRefused }
