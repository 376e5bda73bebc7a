package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// argValidator checks tool arguments against each tool's input schema (JSON
// Schema, as MCP's SEP-1303 asks of servers) inside the guard middleware,
// so that a call with bad arguments is a tool error the model can fix,
// worded for it ("/tab: got string, want integer"), and is on the timeline
// like every other call. (mcp-go's own validation runs before any
// middleware and prints Go structs.)
type argValidator struct {
	schemas map[string]*jsonschema.Schema
	printer *message.Printer
}

// newArgValidator compiles the input schema of every tool.
func newArgValidator(tools []Tool) (*argValidator, error) {
	v := &argValidator{schemas: map[string]*jsonschema.Schema{}, printer: message.NewPrinter(language.English)}
	for _, t := range tools {
		raw := t.Def.RawInputSchema
		if len(raw) == 0 {
			b, err := json.Marshal(t.Def.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("tool %s: %w", t.Def.Name, err)
			}
			raw = b
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("tool %s input schema: %w", t.Def.Name, err)
		}
		url := "mem:///tether/tools/" + t.Def.Name + ".json"
		c := jsonschema.NewCompiler()
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("tool %s input schema: %w", t.Def.Name, err)
		}
		s, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("tool %s input schema: %w", t.Def.Name, err)
		}
		v.schemas[t.Def.Name] = s
	}
	return v, nil
}

// check returns "" when the call's arguments fit its tool's schema, else
// the tool error for the model.
func (v *argValidator) check(req mcpgo.CallToolRequest) string {
	s := v.schemas[req.Params.Name]
	if s == nil {
		return ""
	}
	// The arguments as sent (mcp-go keeps them: RawArguments) when they are
	// an object; else, e.g. none or null, as decoded ({} for none).
	b := bytes.TrimSpace(req.Params.RawArguments)
	if len(b) == 0 || b[0] != '{' {
		raw := req.Params.Arguments
		if raw == nil {
			raw = map[string]any{}
		}
		var err error
		if b, err = json.Marshal(raw); err != nil {
			return argError(req.Params.Name, err.Error())
		}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return argError(req.Params.Name, err.Error())
	}
	err = s.Validate(inst)
	if err == nil {
		return v.checkIntegers(req.Params.Name, s, inst)
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return argError(req.Params.Name, err.Error())
	}
	var parts []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		where := "arguments"
		if len(e.InstanceLocation) > 0 {
			where = strings.Join(e.InstanceLocation, ".")
		}
		parts = append(parts, where+": "+e.ErrorKind.LocalizedString(v.printer))
	}
	walk(verr)
	return argError(req.Params.Name, strings.Join(parts, "; "))
}

// maxSafeInteger is the largest integer a JSON number holds exactly
// (2^53 - 1, JavaScript's Number.MAX_SAFE_INTEGER).
const maxSafeInteger = 1<<53 - 1

// checkIntegers returns the tool error for a top-level integer argument
// that fits the schema's "integer" but not a Go int the handler decodes
// into (1e300 is an integer to JSON Schema), else "". Integers are
// accepted between -maxSafeInteger and maxSafeInteger.
func (v *argValidator) checkIntegers(tool string, s *jsonschema.Schema, inst any) string {
	obj, ok := inst.(map[string]any)
	if !ok {
		return ""
	}
	var parts []string
	for name, ps := range s.Properties {
		if ps.Types == nil || !slices.Contains(ps.Types.ToStrings(), "integer") {
			continue
		}
		n, ok := obj[name].(json.Number)
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(string(n), 64); err != nil || math.Abs(f) > maxSafeInteger {
			parts = append(parts, fmt.Sprintf("%s: must be an integer between %d and %d", name, -maxSafeInteger, maxSafeInteger))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	slices.Sort(parts)
	return argError(tool, strings.Join(parts, "; "))
}

// maxArgErrorLen caps an argument error's length in bytes: it goes to the
// model and to the timeline, and a call with thousands of bad arguments
// must not make it huge.
const maxArgErrorLen = 1000

// argError is the tool error for the tool's bad arguments: "Invalid
// arguments for TOOL: WHAT. Fix them … and call again.", with WHAT cut (at
// a character boundary, marked by "…") so that the whole fits in
// maxArgErrorLen bytes.
func argError(tool, what string) string {
	const tail = ". Fix them to match the tool's input schema and call again."
	head := "Invalid arguments for " + tool + ": "
	if room := maxArgErrorLen - len(head) - len(tail); len(what) > room {
		cut := max(room-len("…"), 0)
		for cut > 0 && !utf8.RuneStart(what[cut]) {
			cut--
		}
		what = what[:cut] + "…"
	}
	return head + what + tail
}
