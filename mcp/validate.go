package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

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
func newArgValidator(tools []tool) (*argValidator, error) {
	v := &argValidator{schemas: map[string]*jsonschema.Schema{}, printer: message.NewPrinter(language.English)}
	for _, t := range tools {
		raw := t.def.RawInputSchema
		if len(raw) == 0 {
			b, err := json.Marshal(t.def.InputSchema)
			if err != nil {
				return nil, fmt.Errorf("tool %s: %w", t.def.Name, err)
			}
			raw = b
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("tool %s input schema: %w", t.def.Name, err)
		}
		url := "mem:///tether/tools/" + t.def.Name + ".json"
		c := jsonschema.NewCompiler()
		if err := c.AddResource(url, doc); err != nil {
			return nil, fmt.Errorf("tool %s input schema: %w", t.def.Name, err)
		}
		s, err := c.Compile(url)
		if err != nil {
			return nil, fmt.Errorf("tool %s input schema: %w", t.def.Name, err)
		}
		v.schemas[t.def.Name] = s
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
	raw := req.Params.Arguments
	if raw == nil {
		raw = map[string]any{}
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return "Invalid arguments: " + err.Error()
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return "Invalid arguments: " + err.Error()
	}
	err = s.Validate(inst)
	if err == nil {
		return ""
	}
	verr, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return "Invalid arguments: " + err.Error()
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
	return fmt.Sprintf("Invalid arguments for %s: %s. Fix them to match the tool's input schema and call again.", req.Params.Name, strings.Join(parts, "; "))
}
