package timeline

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxSummary is the most runes Summarizer.Summarize returns.
const MaxSummary = maxSummary

// Summary limits.
const (
	maxValue   = 120
	maxSummary = 400
	maxError   = 300
)

// ArgRules are how summaries treat one tool's arguments; the tool's
// definition (package mcp) states them, and the daemon hands them to
// NewSummarizer.
type ArgRules struct {
	// Redacted arguments are never stored, only their length: what was
	// typed (it may be a password: the daemon cannot tell what field a ref
	// names), code run in the page (it may carry credentials).
	Redacted []string
	// Whole arguments are shown whole, never shortened: what the user
	// approves must be all there, so browser_file_upload's every resolved
	// path is listed in full. A call whose summary cannot hold them all
	// within MaxSummary is refused before anyone is asked (Fits).
	Whole []string
	// Plain arguments are kept although their name looks secret
	// (browser_press_key's key).
	Plain []string
}

// Summarizer writes the short, redacted summaries of tool calls' arguments
// that the timeline and approval prompts show, by each tool's ArgRules.
type Summarizer struct {
	redacted, whole, plain map[string]map[string]bool
}

// NewSummarizer returns a Summarizer for the tools in rules (tool name →
// its rules); other tools' arguments get only the generic redaction of
// secret-looking names and URLs.
func NewSummarizer(rules map[string]ArgRules) *Summarizer {
	s := &Summarizer{redacted: map[string]map[string]bool{}, whole: map[string]map[string]bool{}, plain: map[string]map[string]bool{}}
	set := func(m map[string]map[string]bool, tool string, args []string) {
		for _, a := range args {
			if m[tool] == nil {
				m[tool] = map[string]bool{}
			}
			m[tool][a] = true
		}
	}
	for tool, r := range rules {
		set(s.redacted, tool, r.Redacted)
		set(s.whole, tool, r.Whole)
		set(s.plain, tool, r.Plain)
	}
	return s
}

// omittedArgs are arguments left out of the summary because they have their
// own columns.
var omittedArgs = map[string]bool{"profile": true, "tab": true}

// secretNames are argument and query-parameter names whose values are
// redacted wherever they appear.
var secretNames = []string{"password", "passwd", "secret", "token", "auth", "key", "session", "cookie", "credential", "sig", "code"}

func isSecretName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range secretNames {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// Summarize returns a short, redacted summary of a tool call's arguments,
// e.g. `ref=e4 submit=true text=<redacted, 12 chars>`: keys sorted, long values
// shortened, typed text and evaluated code reduced to their length, file
// contents never (tools take paths, which are kept), URLs kept without
// their password and secret-looking query values.
func (s *Summarizer) Summarize(tool string, args map[string]any) string {
	return shorten(s.summarize(tool, args), maxSummary)
}

// Fits reports whether Summarize shows the call's arguments that are
// never shortened (a browser_file_upload's paths) whole. When it does not,
// an approval prompt or the timeline would hide some of them: the daemon
// refuses such a call.
func (s *Summarizer) Fits(tool string, args map[string]any) bool {
	if len(s.whole[tool]) == 0 {
		return true
	}
	return utf8.RuneCountInString(s.summarize(tool, args)) <= maxSummary
}

// summarize is Summarize before the summary is cut to maxSummary.
func (s *Summarizer) summarize(tool string, args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		if !omittedArgs[k] {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+s.value(tool, k, args[k]))
	}
	return strings.Join(parts, " ")
}

func (s *Summarizer) value(tool, key string, v any) string {
	if s.redacted[tool][key] || isSecretName(key) && !s.plain[tool][key] {
		if s, ok := v.(string); ok {
			return fmt.Sprintf("<redacted, %d chars>", utf8.RuneCountInString(s))
		}
		return "<redacted>"
	}
	limit := maxValue
	if s.whole[tool][key] {
		limit = maxSummary + 1 // never cut, except by Summarize's own cut
	}
	switch x := v.(type) {
	case string:
		if key == "url" || strings.Contains(x, "://") {
			x = redactURL(x)
		}
		return quoteIfNeeded(shorten(x, limit))
	case []any:
		items := make([]string, len(x))
		for i, it := range x {
			items[i] = s.value(tool, key, it)
		}
		return shorten("["+strings.Join(items, ",")+"]", limit)
	case map[string]any:
		return "{…}"
	case nil:
		return "null"
	default:
		b, _ := json.Marshal(x)
		return shorten(string(b), maxValue)
	}
}

// redactURL removes a URL's password and the values of secret-looking query
// parameters.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "redacted")
	}
	if u.RawQuery != "" {
		q := u.Query()
		changed := false
		for k := range q {
			if isSecretName(k) {
				q[k] = []string{"redacted"}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"") || strings.IndexFunc(s, notPrint) >= 0 {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// notPrint is true for what a terminal or a label would not show as itself:
// control characters (a terminal escape sequence in an argument would
// reach `tether approvals` and `tether timeline`), bidi overrides and other
// invisible format characters. A value with one is quoted, %q escaping it.
func notPrint(r rune) bool { return !strconv.IsPrint(r) }

// shorten cuts s to at most n runes, marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// ShortError shortens a tool error's text for the timeline.
func ShortError(s string) string {
	return shorten(strings.Join(strings.Fields(s), " "), maxError)
}
