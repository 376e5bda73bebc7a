package clients

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Codex's config.toml (docs/mcp-clients.md §2, §4) is edited as text: only the
// lines of our [mcp_servers.tether] table change, every other byte is kept.
// The result is parsed with go-toml and compared with the input, outside our
// table and inside it; any difference refuses the edit, so a line-based
// splice can never damage the file.

// parseTOML decodes a TOML document; a *ParseError names line and column.
func parseTOML(path string, b []byte) (map[string]any, error) {
	m := map[string]any{}
	if err := toml.Unmarshal(b, &m); err != nil {
		pe := &ParseError{Path: path, Msg: err.Error()}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			pe.Line, pe.Column = de.Position()
		}
		return nil, pe
	}
	return m, nil
}

// tomlTether returns mcp_servers.tether, or nil.
func tomlTether(m map[string]any) map[string]any {
	ms, _ := m["mcp_servers"].(map[string]any)
	t, _ := ms[ServerName].(map[string]any)
	return t
}

// withoutTether is m without mcp_servers.tether; an mcp_servers left empty
// counts as absent.
func withoutTether(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	if ms, ok := m["mcp_servers"].(map[string]any); ok {
		rest := make(map[string]any, len(ms))
		for k, v := range ms {
			if k != ServerName {
				rest[k] = v
			}
		}
		if len(rest) == 0 {
			delete(out, "mcp_servers")
		} else {
			out["mcp_servers"] = rest
		}
	}
	return out
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return jsonString(k)
}

// renderTOML renders a value Tether writes: JSON string escapes are a subset
// of TOML basic-string escapes; objects become inline tables.
func renderTOML(v any) string {
	switch v := v.(type) {
	case string:
		return jsonString(v)
	case []string:
		return stringArray(v)
	case fields:
		parts := make([]string, len(v))
		for i, f := range v {
			parts[i] = tomlKey(f.key) + " = " + renderTOML(f.value)
		}
		if len(parts) == 0 {
			return "{}"
		}
		return "{ " + strings.Join(parts, ", ") + " }"
	}
	panic(fmt.Sprintf("clients: cannot render %T as TOML", v))
}

// parseDottedKey parses a TOML key (bare, "basic" or 'literal' parts joined
// by dots); ok is false for anything else.
func parseDottedKey(s string) (parts []string, ok bool) {
	i := 0
	skip := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
	}
	for {
		skip()
		if i >= len(s) {
			return nil, false
		}
		switch s[i] {
		case '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, false
			}
			u, err := strconv.Unquote(s[i : j+1])
			if err != nil {
				return nil, false
			}
			parts = append(parts, u)
			i = j + 1
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			parts = append(parts, s[i+1:i+1+j])
			i += j + 2
		default:
			j := i
			for j < len(s) && (s[j] == '_' || s[j] == '-' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if j == i {
				return nil, false
			}
			parts = append(parts, s[i:j])
			i = j
		}
		skip()
		if i == len(s) {
			return parts, true
		}
		if s[i] != '.' {
			return nil, false
		}
		i++
	}
}

// indexOutsideQuotes is the index of the first c in s outside quotes, or -1.
func indexOutsideQuotes(s string, c byte) int {
	var q byte
	for i := 0; i < len(s); i++ {
		switch {
		case q == 0 && s[i] == c:
			return i
		case q == 0 && (s[i] == '"' || s[i] == '\''):
			q = s[i]
		case q == '"' && s[i] == '\\':
			i++
		case q != 0 && s[i] == q:
			q = 0
		}
	}
	return -1
}

// tline is one line of a TOML file, with its terminator.
type tline struct {
	text   string
	header []string // the table's key when the line is a [table] header
	array  bool     // [[array table]] header
	key    string   // first part of the key when the line starts a key = value
	inML   bool     // inside a multi-line string
}

func scanTOML(text string) []tline {
	raw := strings.SplitAfter(text, "\n")
	if raw[len(raw)-1] == "" {
		raw = raw[:len(raw)-1]
	}
	lines := make([]tline, len(raw))
	ml := "" // the delimiter of the multi-line string open at the start of a line
	for i, s := range raw {
		lines[i].text = s
		lines[i].inML = ml != ""
		start := ml != ""
		ml = multiLineOpen(s, ml)
		if start {
			continue
		}
		t := strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(t, "["):
			inner := strings.TrimPrefix(t, "[")
			array := strings.HasPrefix(inner, "[")
			if array {
				inner = inner[1:]
			}
			if end := indexOutsideQuotes(inner, ']'); end >= 0 {
				if k, ok := parseDottedKey(inner[:end]); ok {
					lines[i].header, lines[i].array = k, array
				}
			}
		case t == "" || strings.HasPrefix(t, "#"):
		default:
			if eq := indexOutsideQuotes(t, '='); eq > 0 {
				if k, ok := parseDottedKey(t[:eq]); ok {
					lines[i].key = k[0]
				}
			}
		}
	}
	return lines
}

// multiLineOpen scans one line, starting inside the multi-line string
// delimited by ml ("" for none), and returns the delimiter of the multi-line
// string still open at its end. Comments and one-line strings are skipped.
func multiLineOpen(s, ml string) string {
	for i := 0; i < len(s); {
		if ml != "" {
			if ml == `"""` && s[i] == '\\' {
				i += 2
				continue
			}
			if strings.HasPrefix(s[i:], ml) {
				i += 3
				for i < len(s) && s[i] == ml[0] { // up to two quotes may end the content
					i++
				}
				ml = ""
				continue
			}
			i++
			continue
		}
		switch c := s[i]; {
		case c == '#':
			return ""
		case strings.HasPrefix(s[i:], `"""`), strings.HasPrefix(s[i:], `'''`):
			ml = s[i : i+3]
			i += 3
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c && s[j] != '\n' {
				if c == '"' && s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
		default:
			i++
		}
	}
	return ml
}

func isOurs(h []string) bool {
	return len(h) >= 2 && h[0] == "mcp_servers" && h[1] == ServerName
}

// valueDepth is the bracket depth left open at the end of a line's value
// (for arrays and inline tables spanning lines).
func valueDepth(s string, depth int) int {
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q == '"' && c == '\\':
			i++
		case q != 0:
			if c == q {
				q = 0
			}
		case c == '"' || c == '\'':
			q = c
		case c == '#':
			return depth
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
		}
	}
	return depth
}

// tomlSpan finds our table: the header line, and the end (exclusive) of its
// body before trailing blank and comment lines. start is -1 when absent.
func tomlSpan(path string, lines []tline, m map[string]any) (start, end int, err error) {
	start = -1
	for i, l := range lines {
		if l.header == nil {
			continue
		}
		if isOurs(l.header) && (len(l.header) > 2 || l.array) {
			return 0, 0, &ShapeError{Path: path, Msg: "[mcp_servers.tether] has sub-tables or is an array of tables; merge them into one [mcp_servers.tether] table"}
		}
		if isOurs(l.header) {
			start = i
		}
	}
	if start < 0 {
		if tomlTether(m) != nil {
			return -1, 0, &ShapeError{Path: path, Msg: "mcp_servers.tether is defined without a [mcp_servers.tether] header (inline or dotted keys); rewrite it as a [mcp_servers.tether] table, or remove it"}
		}
		return -1, 0, nil
	}
	end = len(lines)
	for i := start + 1; i < len(lines); i++ {
		if lines[i].header != nil {
			end = i
			break
		}
	}
	for end > start+1 {
		t := strings.TrimSpace(lines[end-1].text)
		if lines[end-1].inML || lines[end-1].key != "" || t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		end--
	}
	return start, end, nil
}

func newline(text string) string {
	if strings.Contains(text, "\r\n") {
		return "\r\n"
	}
	return "\n"
}

func joinLines(lines []tline) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text)
	}
	return b.String()
}

// tomlConnect makes [mcp_servers.tether] say entry, keeping the user's other
// keys in it.
func tomlConnect(path string, b []byte, entry fields) ([]byte, Change, error) {
	bom := bytes.HasPrefix(b, utf8BOM)
	text := string(bytes.TrimPrefix(b, utf8BOM))
	m0, err := parseTOML(path, []byte(text))
	if err != nil {
		return nil, "", err
	}
	want := map[string]any{}
	old := tomlTether(m0)
	for k, v := range old {
		if !slices.Contains(ownedTOMLKeys, k) {
			want[k] = v
		}
	}
	for _, f := range entry {
		want[f.key] = plain(f.value)
	}
	if old != nil && reflect.DeepEqual(old, want) {
		return b, Unchanged, nil
	}
	lines := scanTOML(text)
	start, end, err := tomlSpan(path, lines, m0)
	if err != nil {
		return nil, "", err
	}
	nl := newline(text)
	var out string
	change := Updated
	if start < 0 {
		change = Added
		out = text
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += nl
		}
		if strings.TrimSpace(out) != "" && !strings.HasSuffix(out, nl+nl) {
			out += nl
		}
		out += "[mcp_servers.tether]" + nl
		for _, f := range entry {
			out += tomlKey(f.key) + " = " + renderTOML(f.value) + nl
		}
	} else {
		var body []tline
		done := map[string]bool{}
		lastKV := 0 // index in body after the last key line
		for i := start + 1; i < end; i++ {
			l := lines[i]
			if l.key == "" || l.inML || !slices.Contains(ownedTOMLKeys, l.key) {
				body = append(body, l)
				if l.key != "" {
					lastKV = len(body)
				}
				continue
			}
			// Skip the continuation lines of a value spanning lines.
			for d := valueDepth(l.text[strings.IndexByte(l.text, '=')+1:], 0); d > 0 && i+1 < end; {
				i++
				d = valueDepth(lines[i].text, d)
			}
			v, ok := entry.get(l.key)
			if !ok || done[l.key] {
				continue
			}
			done[l.key] = true
			indent := leadingSpace([]byte(l.text))
			body = append(body, tline{text: indent + tomlKey(l.key) + " = " + renderTOML(v) + nl, key: l.key})
			lastKV = len(body)
		}
		var add []tline
		for _, f := range entry {
			if !done[f.key] {
				add = append(add, tline{text: tomlKey(f.key) + " = " + renderTOML(f.value) + nl, key: f.key})
			}
		}
		body = slices.Insert(body, lastKV, add...)
		header := lines[start]
		if !strings.HasSuffix(header.text, "\n") {
			header.text += nl
		}
		rest := lines[end:]
		if len(rest) == 0 && len(body) > 0 {
			// Our table ended the file: keep the file's last-line terminator as it was.
			if !strings.HasSuffix(lines[len(lines)-1].text, "\n") {
				body[len(body)-1].text = strings.TrimSuffix(body[len(body)-1].text, nl)
			}
		}
		out = joinLines(lines[:start]) + header.text + joinLines(body) + joinLines(rest)
	}
	m1, err := parseTOML(path, []byte(out))
	if err != nil || !reflect.DeepEqual(withoutTether(m0), withoutTether(m1)) || !reflect.DeepEqual(tomlTether(m1), want) {
		return nil, "", &ShapeError{Path: path, Msg: "Tether could not edit [mcp_servers.tether] without changing other settings; edit that table by hand (or remove it and connect again)"}
	}
	res := []byte(out)
	if bom {
		res = append(slices.Clone(utf8BOM), res...)
	}
	return res, change, nil
}

// tomlDisconnect removes [mcp_servers.tether] and the blank line Connect put
// before it.
func tomlDisconnect(path string, b []byte) ([]byte, Change, error) {
	bom := bytes.HasPrefix(b, utf8BOM)
	text := string(bytes.TrimPrefix(b, utf8BOM))
	m0, err := parseTOML(path, []byte(text))
	if err != nil {
		return nil, "", err
	}
	lines := scanTOML(text)
	start, end, err := tomlSpan(path, lines, m0)
	if err != nil {
		return nil, "", err
	}
	if start < 0 {
		return b, Unchanged, nil
	}
	blank := func(i int) bool { return i < len(lines) && strings.TrimSpace(lines[i].text) == "" }
	restBlank := true
	for i := end; i < len(lines); i++ {
		restBlank = restBlank && blank(i)
	}
	switch {
	case start > 0 && blank(start-1) && (restBlank || blank(end)):
		start-- // the blank line Connect put before the table
	case start == 0 && blank(end):
		end++ // the table opened the file: don't leave it starting blank
	}
	out := joinLines(lines[:start]) + joinLines(lines[end:])
	m1, err := parseTOML(path, []byte(out))
	if err != nil || !reflect.DeepEqual(withoutTether(m0), m1) && !reflect.DeepEqual(withoutTether(m0), withoutTether(m1)) || tomlTether(m1) != nil {
		return nil, "", &ShapeError{Path: path, Msg: "Tether could not remove [mcp_servers.tether] without changing other settings; remove that table by hand"}
	}
	res := []byte(out)
	if bom {
		res = append(slices.Clone(utf8BOM), res...)
	}
	return res, Removed, nil
}
