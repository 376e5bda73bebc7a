// Package dialog asks the user about one held tool call in a native
// dialog of the platform's own toolkit (GTK 3 on Linux, a task dialog on
// Windows, NSAlert on macOS) and returns the answer. It runs in its own
// short-lived process, `tether-desktop approval-dialog` (tether.exe on
// Windows), which the daemon starts per held call and kills when the call
// is decided elsewhere (package uiproc): so the dialog is never modal to
// anything, and code can always make it go away.
//
// Everything in the question that a web page or an AI app chose (sites,
// the arguments summary, the client's name) is shown as plain text: no
// markup is interpreted, no format string is built from it, and control
// and bidirectional-override characters are shown escaped.
package dialog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tether-browser/tether/apitype"
)

// Question is what `approval-dialog` reads on stdin: one held call, as
// the local API lists it (apitype.Approval; its Client is the MCP
// client's name). As JSON it is Approval's object itself.
type Question struct {
	apitype.Approval
}

// Reply is what `approval-dialog` prints on stdout, as one JSON line.
type Reply struct {
	// Answer is apitype.AllowOnce, apitype.AlwaysAllowSite, apitype.Deny,
	// or Closed.
	Answer string `json:"answer"`
}

// Closed is the answer of a dialog dismissed without a choice (Esc, the
// window's close button, or its deadline passed): the call stays in the
// approval queue for the window or the CLI, or times out.
const Closed = "closed"

// ErrUnavailable is what Show returns in a build without a dialog (the
// lean tether on Linux and macOS has none: it lives in tether-desktop).
var ErrUnavailable = errors.New("this build has no approval dialog; it is part of tether-desktop")

// The buttons, in the order they are shown (left to right on Linux and
// Windows; on macOS NSAlert stacks them, the first rightmost).
const (
	LabelDeny       = "Deny"
	LabelAlwaysSite = "Always allow this app on this site"
	LabelAllowOnce  = "Allow once"
)

// MaxQuestionBytes bounds the JSON read from stdin.
const MaxQuestionBytes = 1 << 20

// maxValueRunes bounds each shown value: the arguments summary can be
// long (typed text), and a dialog taller than the screen hides its buttons.
const maxValueRunes = 600

// Field is one labelled line of the dialog, e.g. {"Site", "https://a.example"}.
type Field struct {
	Label, Value string
}

// Text is what a dialog shows, in plain text (page-derived values already
// cut and escaped by Compose).
type Text struct {
	// Title is the window title, "Tether: allow <tool>?" (tests find the
	// window by it).
	Title string
	// Heading is the question in one sentence.
	Heading string
	// Fields are the client, the tool, the site(s), the profile and tab and
	// the arguments, in that order; empty values are left out.
	Fields []Field
	// Deadline is when the daemon denies the call unanswered (zero:
	// unknown); the dialog counts down to it with TimeLeft.
	Deadline time.Time
	// OneSite is true when the call touches exactly one known site:
	// "Always allow this app on this site" can then write a rule. Without one it
	// would only allow once (policy.Guard), so the button is disabled.
	OneSite bool
}

// Compose turns a question into the dialog's text.
func Compose(q Question) Text {
	a := q.Approval
	tool := plain(a.Tool, 100)
	client := plain(a.Client, 100)
	if client == "" {
		client = "An AI app"
	}
	var sites []string
	for _, s := range a.Sites {
		if s = plain(s, 300); s != "" {
			sites = append(sites, s)
		}
	}
	t := Text{
		Title:   "Tether: allow " + tool + "?",
		Heading: client + " asks to run " + tool + ".",
		OneSite: len(sites) == 1,
	}
	if a.DeadlineMs > 0 {
		t.Deadline = time.UnixMilli(a.DeadlineMs)
	}
	what := tool
	if c := plain(a.Class, 40); c != "" {
		what += " (class: " + c + ")"
	}
	where := strings.Join(sites, "\n")
	if where == "" {
		where = "unknown (the current page)"
	}
	target := plain(a.Profile, 100)
	if a.Tab > 0 {
		if target == "" {
			target = "current profile"
		}
		target += fmt.Sprintf(", tab %d", a.Tab)
	}
	for _, f := range []Field{
		{"Client", client},
		{"Tool", what},
		{"Site", where},
		{"Profile", target},
		{"Arguments", plain(a.Summary, maxValueRunes)},
	} {
		if f.Value != "" {
			t.Fields = append(t.Fields, f)
		}
	}
	return t
}

// TimeLeft says how long until the deadline, for the dialog's countdown
// line, e.g. "Denied in 1 min 30 s unless you answer."; "" for a zero
// deadline.
func TimeLeft(deadline, now time.Time) string {
	if deadline.IsZero() {
		return ""
	}
	d := deadline.Sub(now)
	if d <= 0 {
		return "The time to answer is over: the call is denied."
	}
	return "Denied in " + humanDuration(d) + " unless you answer."
}

// humanDuration says d rounded up to the second, e.g. "2 min", "1 min 30 s", "5 s".
func humanDuration(d time.Duration) string {
	secs := int((d + time.Second - 1) / time.Second)
	m, s := secs/60, secs%60
	switch {
	case m == 0:
		return fmt.Sprintf("%d s", s)
	case s == 0:
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d min %d s", m, s)
}

// plain makes page- or client-chosen text safe to show as data: it trims
// it, cuts it to max runes (adding "…"), keeps newlines and tabs, and
// writes other control characters and invisible format characters
// (Unicode category Cf: bidi overrides such as U+202E, zero-width
// characters), which could make the text read differently than it is,
// as \u escapes. Invalid UTF-8 becomes U+FFFD.
func plain(s string, max int) string {
	s = strings.TrimSpace(s)
	var b strings.Builder
	n := 0
	for i, r := range s {
		if n == max {
			b.WriteString("…")
			break
		}
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD"):
			b.WriteRune(utf8.RuneError)
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029':
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
		n++
	}
	return b.String()
}

// Main is the `approval-dialog` mode: it reads a Question as JSON from
// stdin, shows it, and writes the Reply as one JSON line to stdout.
// Dismissed without an answer it replies Closed, not an error. Errors:
// a question that is not JSON or names no tool, and ErrUnavailable or the
// toolkit's own (no display) from Show.
func Main(stdin io.Reader, stdout io.Writer) error {
	var q Question
	dec := json.NewDecoder(io.LimitReader(stdin, MaxQuestionBytes))
	if err := dec.Decode(&q); err != nil {
		return fmt.Errorf("read the question (JSON of an approval) from stdin: %w", err)
	}
	if q.Tool == "" {
		return errors.New("the question names no tool")
	}
	answer, err := Show(q)
	if err != nil {
		return err
	}
	line, err := json.Marshal(Reply{Answer: answer})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", line)
	return err
}

// Show shows the question and blocks until the user answers or dismisses
// it. It returns apitype.AllowOnce, apitype.AlwaysAllowSite, apitype.Deny
// or Closed. It must run on the process's main thread (GTK and AppKit
// require it; the packages' init locks the main goroutine to it).
func Show(q Question) (string, error) { return show(Compose(q)) }
