package mcp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/tether-browser/tether/test/mcpclient"
)

func TestCleanClientName(t *testing.T) {
	for in, want := range map[string]string{
		"Claude Desktop":                  "Claude Desktop",
		"\x1b[31mred\x1b[0m":              "(31mred (0m",
		"x [token ci-agent]":              "x (token ci-agent)",
		"evil\u202egnp.exe":               "evil gnp.exe",
		"two\nlines\r\n\tand tabs":        "two lines and tabs",
		"  ":                              "",
		"":                                "",
		"bad \xff utf8":                   "bad utf8",
		"isolate\u2066x\u2069 mark\u200f": "isolate x mark",
	} {
		if got := CleanClientName(in); got != want {
			t.Errorf("CleanClientName(%q) = %q, want %q", in, got, want)
		}
	}
	long := CleanClientName(strings.Repeat("é", 5<<20))
	if utf8.RuneCountInString(long) != MaxClientNameChars {
		t.Errorf("a 5 MB name became %d characters, want %d", utf8.RuneCountInString(long), MaxClientNameChars)
	}
}

// guardSpy records the client name every call reaches the Guard with.
type guardSpy struct {
	mu      sync.Mutex
	clients []string
}

func (g *guardSpy) Check(_ context.Context, call ToolCall) (Verdict, error) {
	g.mu.Lock()
	g.clients = append(g.clients, call.Client)
	g.mu.Unlock()
	return Verdict{Allow: true}, nil
}

// A 5 MB clientInfo.name with escapes reaches the policy and the timeline
// cut to 100 characters, without control or bidi characters.
func TestClientNameIsCleanedBeforeTheGuard(t *testing.T) {
	spy := &guardSpy{}
	c, err := client.NewInProcessClient(NewServer(&fakeBrowser{}, Config{Version: "test", Fence: "FENCE", Guard: spy}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := mcpclient.Initialize(ctx, c, "\x1b[31mEvil\u202e\n"+strings.Repeat("n", 5<<20)); err != nil {
		t.Fatal(err)
	}
	callTool(t, c, "browser_tabs", map[string]any{"action": "list"})
	spy.mu.Lock()
	defer spy.mu.Unlock()
	if len(spy.clients) != 1 {
		t.Fatalf("guard saw %d calls", len(spy.clients))
	}
	name := spy.clients[0]
	if utf8.RuneCountInString(name) > MaxClientNameChars || !strings.HasPrefix(name, "(31mEvil n") {
		t.Fatalf("the guard saw client %q (%d characters)", name[:min(len(name), 200)], utf8.RuneCountInString(name))
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			t.Fatalf("client name %q keeps %U", name, r)
		}
	}
}

// An extension's 1 MB error text reaches the agent cut to 2 000 characters.
func TestBrowserErrorTextIsCapped(t *testing.T) {
	c := newClient(t, &fakeBrowser{err: errors.New("stale_ref: " + strings.Repeat("x", 1<<20))})
	text, isErr := callTool(t, c, "browser_click", map[string]any{"ref": "e1"})
	if !isErr || utf8.RuneCountInString(text) > MaxErrorChars+60 || !strings.Contains(text, "cut: ") || !strings.HasPrefix(text, "browser_click failed: stale_ref: xxx") {
		t.Fatalf("error text of %d characters: %.200q … %q", utf8.RuneCountInString(text), text, text[max(0, len(text)-80):])
	}
}

// FuzzCleanClientName: whatever a client sends as its name, what Tether
// keeps is valid UTF-8, at most 100 characters, free of control and bidi
// characters, and cleaning it again changes nothing.
func FuzzCleanClientName(f *testing.F) {
	for _, s := range []string{"Claude Desktop", "\x1b[31mred", "evil\u202egnp.exe", "a\nb", "\xff\xfe", strings.Repeat("é", 300), "\u2066\u2069\u200e", "agent [token other]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := CleanClientName(in)
		if !utf8.ValidString(out) || utf8.RuneCountInString(out) > MaxClientNameChars {
			t.Fatalf("CleanClientName(%q) = %q", in, out)
		}
		for _, r := range out {
			if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == '[' || r == ']' {
				t.Fatalf("CleanClientName(%q) keeps %U", in, r)
			}
		}
		if again := CleanClientName(out); again != out {
			t.Fatalf("not idempotent: %q → %q → %q", in, out, again)
		}
	})
}

// SessionOpened hears of a client once its initialize is done, before any
// tool call, by its cleaned name; not of a client of MCP 2026-07-28, whose
// server/discover opens no MCP session (nothing would end what it recorded).
func TestSessionOpenedOnInitialize(t *testing.T) {
	var mu sync.Mutex
	var opened []Caller
	srv := NewServer(&fakeBrowser{}, Config{Version: "test", Fence: "FENCE", SessionOpened: func(c Caller) {
		mu.Lock()
		opened = append(opened, c)
		mu.Unlock()
	}})
	newClientAs(t, srv, "Cursor\u202e", mcpgo.ProtocolVersion20251125)
	newClientAs(t, srv, "Modern", mcpgo.LATEST_PROTOCOL_VERSION)
	mu.Lock()
	defer mu.Unlock()
	if len(opened) != 1 || opened[0].App != "Cursor" || opened[0].MCPSession == "" {
		t.Fatalf("opened %+v, want one MCP session of Cursor", opened)
	}
}
