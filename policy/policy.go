// Package policy owns Tether's guardrails: the class of every tool (read,
// navigate, interact, sensitive, download), the rules that map class × site × client to
// allow, confirm or deny, persisted in policy.json, the queue of calls held
// for the user's approval, and the daemon-wide pause switch.
//
// It knows nothing of MCP or the browser: each tool's class is a fact of
// the tool's definition, handed in by Config.Classify; callers pass the
// tool name, the client's name and the sites (origins) a call touches,
// which the daemon resolves from the broker's registry of shared tabs.
//
// Limitation: "typing into a password field" cannot be classified, because
// the daemon does not know what kind of field a ref names. So browser_type
// is interact; browser_file_upload and browser_evaluate are sensitive; the
// timeline never stores typed text whatever the field.
package policy

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// Class groups tools by what they can do to the user.
type Class string

// The classes, from harmless to sensitive.
const (
	// Read only looks at a shared tab.
	Read Class = "read"
	// Navigate loads a URL (the site is the target URL's origin).
	Navigate Class = "navigate"
	// Interact acts on a page: clicks, typing, keys, tab management.
	Interact Class = "interact"
	// Sensitive can leak local files or run code in the user's session.
	Sensitive Class = "sensitive"
	// Download is a file a shared tab downloads during, or within 10 s
	// of, a tool call there (not a tool: the daemon judges each such
	// download with that call's client and the tab's site).
	Download Class = "download"
)

// Classes lists every class, for validation and UIs.
var Classes = []Class{Read, Navigate, Interact, Sensitive, Download}

// Action is what a rule does with a matching call.
type Action string

// The actions, from permissive to strict.
const (
	Allow   Action = "allow"
	Confirm Action = "confirm"
	Deny    Action = "deny"
)

func (a Action) strictness() int {
	switch a {
	case Allow:
		return 0
	case Confirm:
		return 1
	}
	return 2
}

// Defaults are the actions when no rule matches: read, navigate,
// interact and download are allowed; sensitive actions need the user's
// confirmation.
var Defaults = map[Class]Action{Read: Allow, Navigate: Allow, Interact: Allow, Sensitive: Confirm, Download: Allow}

// Rule maps calls of a class, on sites matching a pattern, from a client, to
// an action. Empty fields and "*" match anything.
type Rule struct {
	// Class is the tool class, or "*" / "" for every class.
	Class Class `json:"class,omitempty"`
	// Site is an origin pattern: "https://mail.example.com" (that origin),
	// "example.com" (that host, any scheme and port), "*.example.com" (the
	// host and its subdomains), "https://*.example.com", or "*" / "".
	Site string `json:"site,omitempty"`
	// Client is an MCP client's name from its clientInfo (e.g.
	// "claude-ai"), compared case-insensitively, or "*" / "".
	Client string `json:"client,omitempty"`
	// Action is allow, confirm or deny.
	Action Action `json:"action"`
}

func (r Rule) String() string {
	any := func(s string) string {
		if s == "" {
			return "*"
		}
		return s
	}
	return fmt.Sprintf("%s %s on %s for client %s", r.Action, any(string(r.Class)), any(r.Site), any(r.Client))
}

// Validate checks the rule's class, action and site pattern.
func (r Rule) Validate() error {
	if r.Class != "" && r.Class != "*" && !slices.Contains(Classes, r.Class) {
		return fmt.Errorf("%w: class %q is not read, navigate, interact, sensitive, download or *", ErrInvalidRule, r.Class)
	}
	switch r.Action {
	case Allow, Confirm, Deny:
	default:
		return fmt.Errorf("%w: action %q is not allow, confirm or deny", ErrInvalidRule, r.Action)
	}
	if _, ok := parseSite(r.Site); !ok {
		return fmt.Errorf("%w: site %q is not an origin, a host, *.host or *", ErrInvalidRule, r.Site)
	}
	return nil
}

// sitePattern is a parsed Rule.Site.
type sitePattern struct {
	any      bool
	scheme   string // "" for any
	host     string // lower case, without port unless port is set
	port     string // "" for any (or the scheme's default when scheme is set)
	wildcard bool   // host and its subdomains
	opaque   string // for "about:blank", "file://": compared whole
}

func parseSite(s string) (sitePattern, bool) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" || s == "*" {
		return sitePattern{any: true}, true
	}
	var p sitePattern
	rest := s
	if i := strings.Index(s, "://"); i >= 0 {
		p.scheme, rest = s[:i], strings.TrimSuffix(s[i+3:], "/")
		if p.scheme == "file" {
			p.opaque = "file://"
			return p, rest == ""
		}
	} else if strings.HasPrefix(s, "about:") {
		p.opaque = s
		return p, true
	}
	if strings.HasPrefix(rest, "*.") {
		p.wildcard, rest = true, rest[2:]
	}
	if h, port, ok := strings.Cut(rest, ":"); ok {
		rest, p.port = h, port
	}
	if rest == "" || strings.ContainsAny(rest, "/*?#@ ") {
		return p, false
	}
	p.host = rest
	if p.scheme != "" && p.port == "" {
		p.port = defaultPort(p.scheme)
	}
	return p, true
}

func defaultPort(scheme string) string {
	switch scheme {
	case "http":
		return "80"
	case "https":
		return "443"
	}
	return ""
}

// specificity ranks patterns: an exact origin beats a host, which beats a
// wildcard, which beats any.
func (p sitePattern) specificity() int {
	switch {
	case p.any:
		return 0
	case p.wildcard:
		return 1
	case p.scheme == "" && p.opaque == "":
		return 2
	}
	return 3
}

func (p sitePattern) match(origin string) bool {
	if p.any {
		return true
	}
	if origin == "" {
		return false
	}
	if p.opaque != "" {
		return origin == p.opaque
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if p.scheme != "" && u.Scheme != p.scheme {
		return false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	if p.port != "" && port != p.port {
		return false
	}
	if p.wildcard {
		return host == p.host || strings.HasSuffix(host, "."+p.host)
	}
	return host == p.host
}

func matchesAny(field string, value string) bool {
	return field == "" || field == "*" || strings.EqualFold(field, value)
}

// Decision is the outcome of Evaluate.
type Decision struct {
	// Action to take.
	Action Action
	// Rule is the user rule that decided; nil when the class default did.
	Rule *Rule
	// Site is the site the decision was about ("" when unknown).
	Site string
}

// Reason says in a few words why: "default for sensitive actions" or "rule
// allow sensitive on https://x.com for client *".
func (d Decision) Reason(class Class) string {
	if d.Rule == nil {
		return "default for " + string(class) + " actions"
	}
	return "rule " + d.Rule.String()
}

// Evaluate decides a call of class from client touching sites (origins;
// empty when unknown, which only rules for any site match). For each site
// the most specific matching rule wins (site, then client, then class; ties
// go to the stricter action), else the class default; over several sites
// the strictest decision wins.
func Evaluate(rules []Rule, class Class, sites []string, client string) Decision {
	if len(sites) == 0 {
		sites = []string{""}
	}
	var out Decision
	first := true
	for _, site := range sites {
		d := evaluateOne(rules, class, site, client)
		if first || d.Action.strictness() > out.Action.strictness() {
			out, first = d, false
		}
	}
	return out
}

func evaluateOne(rules []Rule, class Class, site, client string) Decision {
	best, bestScore := -1, -1
	for i, r := range rules {
		p, ok := parseSite(r.Site)
		if !ok || !p.match(site) || !matchesAny(r.Client, client) || !matchesAny(string(r.Class), string(class)) {
			continue
		}
		score := p.specificity() * 4
		if r.Client != "" && r.Client != "*" {
			score += 2
		}
		if r.Class != "" && r.Class != "*" {
			score++
		}
		if score > bestScore || score == bestScore && r.Action.strictness() > rules[best].Action.strictness() {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		a, ok := Defaults[class]
		if !ok {
			a = Confirm
		}
		return Decision{Action: a, Site: site}
	}
	r := rules[best]
	return Decision{Action: r.Action, Rule: &r, Site: site}
}

// Origin returns the origin of a URL as the policy compares it:
// "https://example.com", "http://127.0.0.1:8000", "file://", "about:blank";
// "" when raw is not an absolute URL.
func Origin(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Scheme == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	switch {
	case scheme == "file":
		return "file://"
	case u.Host == "" && u.Opaque != "":
		return scheme + ":" + u.Opaque
	case u.Host == "":
		return ""
	}
	host := strings.ToLower(u.Hostname())
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" && port != defaultPort(scheme) {
		host += ":" + port
	}
	return scheme + "://" + host
}
