package clients

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
)

// field is one key of an entry Tether writes; fields keeps their order.
type field struct {
	key   string
	value any // string, []string or fields
}

type fields []field

func (f fields) get(k string) (any, bool) {
	for _, x := range f {
		if x.key == k {
			return x.value, true
		}
	}
	return nil, false
}

// plain converts a value Tether writes to what encoding/json decodes the same
// JSON into, for semantic comparison.
func plain(v any) any {
	switch v := v.(type) {
	case []string:
		out := make([]any, len(v))
		for i, s := range v {
			out[i] = s
		}
		return out
	case fields:
		out := make(map[string]any, len(v))
		for _, f := range v {
			out[f.key] = plain(f.value)
		}
		return out
	default:
		return v
	}
}

// style is the layout Tether copies from a file for the text it inserts.
type style struct {
	unit string // one level of indentation, detected from the file ("  " by default)
	nl   string // "\n", or "\r\n" when the file uses CRLF
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// renderJSON renders v as JSON text whose first line continues a line
// indented by indent. Objects are one key per line when multiline, arrays are
// always inline (["mcp"]).
func renderJSON(v any, indent string, st style, multiline bool) string {
	switch v := v.(type) {
	case string:
		return jsonString(v)
	case []string:
		return stringArray(v)
	case fields:
		if len(v) == 0 {
			return "{}"
		}
		var b strings.Builder
		b.WriteString("{")
		inner := indent + st.unit
		for i, f := range v {
			if multiline {
				b.WriteString(st.nl + inner)
			} else if i > 0 {
				b.WriteString(" ")
			}
			b.WriteString(jsonString(f.key) + ": " + renderJSON(f.value, inner, st, multiline))
			if i < len(v)-1 {
				b.WriteString(",")
			}
		}
		if multiline {
			b.WriteString(st.nl + indent)
		}
		b.WriteString("}")
		return b.String()
	}
	panic(fmt.Sprintf("clients: cannot render %T", v))
}

var utf8BOM = []byte("\xef\xbb\xbf")

// jsonDoc is a parsed JSON or JSONC config file. Edits change its syntax tree
// (hujson keeps every comment, space and trailing comma as raw bytes), so
// packing it gives back the input byte for byte except where we edited.
type jsonDoc struct {
	bom  bool
	root hujson.Value
	st   style
}

var hujsonPos = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

// parseJSONDoc parses a config file's bytes. An empty (or blank) file is an
// empty object. The error for bytes that don't parse is a *ParseError.
func parseJSONDoc(path string, b []byte) (*jsonDoc, error) {
	d := &jsonDoc{st: style{unit: "  ", nl: "\n"}}
	b = bytes.Clone(b) // the tree aliases its input; the caller keeps b intact
	if bytes.HasPrefix(b, utf8BOM) {
		d.bom, b = true, b[len(utf8BOM):]
	}
	if bytes.Contains(b, []byte("\r\n")) {
		d.st.nl = "\r\n"
	}
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}" + d.st.nl)
	}
	v, err := hujson.Parse(b)
	if err != nil {
		pe := &ParseError{Path: path, Msg: err.Error()}
		if m := hujsonPos.FindStringSubmatch(err.Error()); m != nil {
			pe.Line, _ = strconv.Atoi(m[1])
			pe.Column, _ = strconv.Atoi(m[2])
			pe.Msg = m[3]
		}
		return nil, pe
	}
	root, ok := v.Value.(*hujson.Object)
	if !ok {
		return nil, &ShapeError{Path: path, Msg: "the top level is not a JSON object"}
	}
	d.root = v
	for _, m := range root.Members {
		if i := bytes.LastIndexByte(m.Name.BeforeExtra, '\n'); i >= 0 {
			if ind := leadingSpace(m.Name.BeforeExtra[i+1:]); ind != "" {
				d.st.unit = ind
			}
			break
		}
	}
	return d, nil
}

// pack returns the file's bytes.
func (d *jsonDoc) pack() []byte {
	out := d.root.Pack()
	if d.bom {
		out = append(slices.Clone(utf8BOM), out...)
	}
	return out
}

func (d *jsonDoc) rootObject() *hujson.Object { return d.root.Value.(*hujson.Object) }

// find returns the index of key in obj, or -1.
func find(obj *hujson.Object, key string) (int, error) {
	idx := -1
	for i, m := range obj.Members {
		if lit, ok := m.Name.Value.(hujson.Literal); ok && lit.String() == key {
			if idx >= 0 {
				return -1, fmt.Errorf("%q appears twice", key)
			}
			idx = i
		}
	}
	return idx, nil
}

func leadingSpace(b []byte) string {
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return string(b[:i])
}

func isSpace(b []byte) bool { return len(bytes.TrimSpace(b)) == 0 }

// lineIndent is the indentation of the line a member starts on, from the
// extra before its name; fallback when the member does not start a line.
func lineIndent(before []byte, fallback string) string {
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		return leadingSpace(before[i+1:])
	}
	return fallback
}

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	if out == nil {
		out = []byte{}
	}
	return out
}

func dropLeadingNL(b []byte) []byte {
	switch {
	case bytes.HasPrefix(b, []byte("\r\n")):
		return b[2:]
	case bytes.HasPrefix(b, []byte("\n")):
		return b[1:]
	}
	return b
}

// throughLastNL is b up to and including its last newline, or nil.
func throughLastNL(b []byte) []byte {
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		return b[:i+1]
	}
	return nil
}

func parseTrimmed(text string) hujson.ValueTrimmed {
	v, err := hujson.Parse([]byte(text))
	if err != nil {
		panic("clients: rendered invalid JSON: " + err.Error())
	}
	return v.Value
}

func plainJSON(v hujson.Value) any {
	c := v.Clone()
	c.BeforeExtra, c.AfterExtra = nil, nil
	c.Standardize()
	var out any
	if err := json.Unmarshal(c.Pack(), &out); err != nil {
		return nil
	}
	return out
}

// set makes obj[key] equal to v, replacing the value in place or appending a
// member laid out like its siblings. objIndent is the indentation of the line
// obj's key is on; inline is true when that key does not start a line (a
// one-line file), so an empty obj gets a one-line member. It reports whether
// anything changed.
func (d *jsonDoc) set(obj *hujson.Object, objIndent string, inline bool, key string, v any) (bool, error) {
	i, err := find(obj, key)
	if err != nil {
		return false, err
	}
	if i >= 0 {
		m := &obj.Members[i]
		if reflect.DeepEqual(plainJSON(m.Value), plain(v)) {
			return false, nil
		}
		multiline := bytes.IndexByte(m.Name.BeforeExtra, '\n') >= 0
		m.Value.Value = parseTrimmed(renderJSON(v, lineIndent(m.Name.BeforeExtra, objIndent), d.st, multiline))
		return true, nil
	}
	d.insert(obj, objIndent, inline, key, v)
	return true, nil
}

// insert appends key: v to obj. Comments between the last member and the
// closing brace stay before the new member (so a comment at the end of the
// last member's line stays on that line), a trailing comma stays trailing.
func (d *jsonDoc) insert(obj *hujson.Object, objIndent string, inline bool, key string, v any) {
	n := len(obj.Members)
	nl := []byte(d.st.nl)
	colon := []byte(" ")
	var indent string
	multiline := true
	if n > 0 {
		last := obj.Members[n-1]
		if isSpace(last.Value.BeforeExtra) && bytes.IndexByte(last.Value.BeforeExtra, '\n') < 0 {
			colon = last.Value.BeforeExtra
		}
		if bytes.IndexByte(last.Name.BeforeExtra, '\n') >= 0 {
			indent = lineIndent(last.Name.BeforeExtra, "")
		} else {
			multiline = false
		}
	} else {
		indent = objIndent + d.st.unit
		multiline = !inline
	}
	after := []byte(obj.AfterExtra)
	var before, newAfter []byte
	switch {
	case !multiline:
		if n > 0 {
			before = []byte(" ")
		}
		newAfter = after
	case bytes.IndexByte(after, '\n') >= 0:
		i := bytes.LastIndexByte(after, '\n')
		before = cat(after[:i+1], []byte(indent))
		newAfter = cat(nl, after[i+1:])
	case n == 0:
		lead := after
		if isSpace(after) {
			lead = nil
		}
		before = cat(lead, nl, []byte(indent))
		newAfter = cat(nl, []byte(objIndent))
	default:
		before = cat(nl, []byte(indent))
		newAfter = after
	}
	m := hujson.ObjectMember{
		Name:  hujson.Value{BeforeExtra: before, Value: hujson.String(key)},
		Value: hujson.Value{BeforeExtra: slices.Clone(colon), Value: parseTrimmed(renderJSON(v, indent, d.st, multiline))},
	}
	if n > 0 && obj.Members[n-1].Value.AfterExtra != nil {
		m.Value.AfterExtra = hujson.Extra{} // keep the trailing comma
	}
	obj.Members = append(obj.Members, m)
	obj.AfterExtra = newAfter
}

// remove deletes key from obj, the inverse of insert: the newline and
// indentation before the member go, comments around it stay.
func (d *jsonDoc) remove(obj *hujson.Object, key string) (bool, error) {
	i, err := find(obj, key)
	if err != nil || i < 0 {
		return false, err
	}
	n := len(obj.Members)
	m := obj.Members[i]
	head := throughLastNL(m.Name.BeforeExtra)
	join := func(rest []byte) []byte {
		if len(head) > 0 {
			rest = dropLeadingNL(rest)
		}
		return cat(head, rest)
	}
	if i == n-1 {
		var pre []byte
		if n > 1 {
			prev := &obj.Members[i-1].Value
			if m.Value.AfterExtra != nil { // trailing comma: it now follows prev
				if prev.AfterExtra == nil {
					prev.AfterExtra = hujson.Extra{}
				}
			} else {
				pre, prev.AfterExtra = prev.AfterExtra, nil
			}
		}
		after := cat(pre, join(obj.AfterExtra))
		if n == 1 && isSpace(after) {
			after = nil
		}
		obj.AfterExtra = after
	} else {
		next := &obj.Members[i+1].Name
		next.BeforeExtra = join(next.BeforeExtra)
	}
	obj.Members = slices.Delete(obj.Members, i, i+1)
	return true, nil
}

// connect makes <container>.tether say entry. An existing entry is patched
// key by key: owned keys are set or removed, the user's other keys stay.
func (d *jsonDoc) connect(path, container string, entry fields) (Change, error) {
	root := d.rootObject()
	ci, err := find(root, container)
	if err != nil {
		return "", &ShapeError{Path: path, Msg: err.Error()}
	}
	if ci < 0 {
		d.insert(root, "", false, container, fields{{ServerName, entry}})
		return Added, nil
	}
	cm := &root.Members[ci]
	cobj, ok := cm.Value.Value.(*hujson.Object)
	if !ok {
		return "", &ShapeError{Path: path, Msg: fmt.Sprintf("%q is not an object", container)}
	}
	cind := lineIndent(cm.Name.BeforeExtra, "")
	cinline := bytes.IndexByte(cm.Name.BeforeExtra, '\n') < 0
	ti, err := find(cobj, ServerName)
	if err != nil {
		return "", &ShapeError{Path: path, Msg: fmt.Sprintf("in %q: %v", container, err)}
	}
	if ti < 0 {
		d.insert(cobj, cind, cinline, ServerName, entry)
		return Added, nil
	}
	tm := &cobj.Members[ti]
	tobj, ok := tm.Value.Value.(*hujson.Object)
	if !ok {
		if _, err := d.set(cobj, cind, cinline, ServerName, entry); err != nil {
			return "", err
		}
		return Updated, nil
	}
	tind := lineIndent(tm.Name.BeforeExtra, cind+d.st.unit)
	tinline := bytes.IndexByte(tm.Name.BeforeExtra, '\n') < 0
	changed := false
	for _, k := range ownedKeys {
		var c bool
		var err error
		if v, ok := entry.get(k); ok {
			c, err = d.set(tobj, tind, tinline, k, v)
		} else {
			c, err = d.remove(tobj, k)
		}
		if err != nil {
			return "", &ShapeError{Path: path, Msg: fmt.Sprintf("in %q.%q: %v", container, ServerName, err)}
		}
		changed = changed || c
	}
	if changed {
		return Updated, nil
	}
	return Unchanged, nil
}

// disconnect removes <container>.tether; Unchanged when there is none.
func (d *jsonDoc) disconnect(path, container string) (Change, error) {
	root := d.rootObject()
	ci, err := find(root, container)
	if err != nil {
		return "", &ShapeError{Path: path, Msg: err.Error()}
	}
	if ci < 0 {
		return Unchanged, nil
	}
	cobj, ok := root.Members[ci].Value.Value.(*hujson.Object)
	if !ok {
		return Unchanged, nil
	}
	removed, err := d.remove(cobj, ServerName)
	if err != nil {
		return "", &ShapeError{Path: path, Msg: fmt.Sprintf("in %q: %v", container, err)}
	}
	if removed {
		return Removed, nil
	}
	return Unchanged, nil
}

// entry returns <container>.tether decoded, or nil.
func (d *jsonDoc) entry(container string) map[string]any {
	root := d.rootObject()
	ci, _ := find(root, container)
	if ci < 0 {
		return nil
	}
	cobj, ok := root.Members[ci].Value.Value.(*hujson.Object)
	if !ok {
		return nil
	}
	ti, _ := find(cobj, ServerName)
	if ti < 0 {
		return nil
	}
	m, _ := plainJSON(cobj.Members[ti].Value).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// stringArray renders an inline array of strings, ["mcp"], valid in both
// JSON and TOML (JSON string escapes are a subset of TOML basic strings').
func stringArray(v []string) string {
	parts := make([]string, len(v))
	for i, s := range v {
		parts[i] = jsonString(s)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
