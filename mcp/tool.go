package mcp

import (
	"sync"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/tether-browser/tether/policy"
)

// Tool is one MCP tool and every fact about it, in one definition: what
// tools/list shows, the handler, the policy class, what the timeline
// redacts, the URL a navigating call loads, and whether it is off by
// default. The daemon reads these facts (Tools, Classify, LoadsURL) and
// hands them to the policy and the timeline, which know nothing of MCP.
type Tool struct {
	// Def is what tools/list shows: name, description, input schema and
	// annotations (readOnly, or mutating and whether destructively).
	Def mcpgo.Tool
	// handler runs a call; nil in what Tools returns.
	handler server.ToolHandlerFunc
	// prepare, if set, runs after schema validation and before the guard;
	// it may rewrite args in place (what the guard, the timeline and the
	// tool see) or refuse the call with a message for the AI
	// (browser_file_upload resolves its paths). Nil in what Tools returns.
	prepare func(args map[string]any) string
	// Class is the policy class of the tool's calls.
	Class policy.Class
	// ActionClasses refine Class by the call's "action" argument
	// (browser_tabs: listing reads, new navigates); an action not listed
	// is Class.
	ActionClasses map[string]policy.Class
	// Redacted are arguments the timeline and approval prompts show only
	// the length of (typed text, evaluated code).
	Redacted []string
	// Whole are arguments shown whole, never shortened (upload paths: the
	// user approves exactly what they were shown).
	Whole []string
	// Plain are arguments kept although their name looks secret
	// (browser_press_key's key).
	Plain []string
	// LoadsURL returns the URL a call loads, for a tool that navigates
	// (ok false for a call that does not): the policy judges navigation
	// by its target's site, not the tab's.
	LoadsURL func(args map[string]any) (url string, ok bool)
	// OffByDefault tools are absent from tools/list, and refused, until
	// the user enables them (Config.EnabledTools), because they run
	// arbitrary code in the user's logged-in pages.
	OffByDefault bool
}

// Name is the tool's name.
func (t Tool) Name() string { return t.Def.Name }

// classOf is a call's class given its "action" argument.
func (t Tool) classOf(action string) policy.Class {
	if c, ok := t.ActionClasses[action]; ok {
		return c
	}
	return t.Class
}

// urlArg is LoadsURL for tools whose every call loads their "url".
func urlArg(args map[string]any) (string, bool) {
	u, _ := args["url"].(string)
	return u, true
}

// Tools returns every tool's definition and facts, in tools/list order,
// for reading: their handlers are not bound (NewServer binds its own).
func Tools() []Tool {
	ts := (&handlers{}).tools()
	for i := range ts {
		ts[i].handler, ts[i].prepare = nil, nil
	}
	return ts
}

// byName indexes Tools by name, built once.
var byName = sync.OnceValue(func() map[string]Tool {
	m := map[string]Tool{}
	for _, t := range Tools() {
		m[t.Name()] = t
	}
	return m
})

// Classify is a call's policy class as its tool's definition states it,
// given the call's "action" argument; a tool Tether does not define is
// Sensitive (fail closed). It is policy.Config.Classify.
func Classify(tool, action string) policy.Class {
	t, ok := byName()[tool]
	if !ok {
		return policy.Sensitive
	}
	return t.classOf(action)
}

// LoadsURL is the URL a call of tool with args loads, when the call
// navigates.
func LoadsURL(tool string, args map[string]any) (string, bool) {
	t, ok := byName()[tool]
	if !ok || t.LoadsURL == nil {
		return "", false
	}
	return t.LoadsURL(args)
}
