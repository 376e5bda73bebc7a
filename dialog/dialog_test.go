package dialog

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
)

func question() Question {
	return Question{apitype.Approval{ID: "4", Tool: "browser_file_upload", Class: "sensitive", Client: "claude-code",
		Profile: "work", Tab: 3, Sites: []string{"https://mail.example.com"}, Summary: "paths: /home/me/tax.pdf",
		DeadlineMs: time.Date(2026, 12, 1, 12, 2, 0, 0, time.UTC).UnixMilli()}}
}

func TestCompose(t *testing.T) {
	got := Compose(question())
	if got.Title != "Tether: allow browser_file_upload?" {
		t.Errorf("title %q", got.Title)
	}
	if got.Heading != "claude-code asks to run browser_file_upload." {
		t.Errorf("heading %q", got.Heading)
	}
	want := []Field{{"Client", "claude-code"}, {"Tool", "browser_file_upload (class: sensitive)"},
		{"Site", "https://mail.example.com"}, {"Profile", "work, tab 3"}, {"Arguments", "paths: /home/me/tax.pdf"}}
	if len(got.Fields) != len(want) {
		t.Fatalf("fields %q, want %q", got.Fields, want)
	}
	for i := range want {
		if got.Fields[i] != want[i] {
			t.Errorf("field %d: %q, want %q", i, got.Fields[i], want[i])
		}
	}
	if !got.OneSite || !got.Deadline.Equal(time.Date(2026, 12, 1, 12, 2, 0, 0, time.UTC)) {
		t.Errorf("OneSite %v, deadline %v", got.OneSite, got.Deadline)
	}

	q := question()
	q.Client, q.Sites, q.Profile, q.Summary = "", []string{"https://a.example", "https://b.example"}, "", ""
	got = Compose(q)
	if got.OneSite || !strings.HasPrefix(got.Heading, "An AI app asks") {
		t.Errorf("two sites, no client: %+v", got)
	}
	for _, f := range got.Fields {
		if f.Label == "Arguments" {
			t.Errorf("an empty value is shown: %q", f)
		}
		if f.Label == "Profile" && f.Value != "current profile, tab 3" {
			t.Errorf("profile %q", f.Value)
		}
		if f.Label == "Site" && f.Value != "https://a.example\nhttps://b.example" {
			t.Errorf("sites %q", f.Value)
		}
	}
}

// Page-chosen text is data: control and invisible format characters are
// escaped, markup and format verbs are left as they are (GTK shows them
// as text: no Pango markup, no printf), and long values are cut.
func TestPlain(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"  a\tb\nc  ", "a\tb\nc"},
		{"report\u202Efdp.exe", `report\u202Efdp.exe`},
		{"zero\u200Bwidth", `zero\u200Bwidth`},
		{"bell\x07", `bell\u0007`},
		{"<b>bold</b> %s %n &amp;", "<b>bold</b> %s %n &amp;"},
		{"bad \xff byte", "bad \uFFFD byte"},
		{"line\u2028sep", `line\u2028sep`},
		{strings.Repeat("é", 10), strings.Repeat("é", 4) + "…"},
	} {
		max := 100
		if strings.HasPrefix(c.in, "é") {
			max = 4
		}
		if got := plain(c.in, max); got != c.want {
			t.Errorf("plain(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTimeLeft(t *testing.T) {
	d := time.Date(2026, 12, 1, 12, 2, 0, 0, time.UTC)
	for _, c := range []struct {
		left time.Duration
		want string
	}{
		{2 * time.Minute, "Denied in 2 min unless you answer."},
		{90 * time.Second, "Denied in 1 min 30 s unless you answer."},
		{4200 * time.Millisecond, "Denied in 5 s unless you answer."},
		{0, "The time to answer is over: the call is denied."},
	} {
		if got := TimeLeft(d, d.Add(-c.left)); got != c.want {
			t.Errorf("TimeLeft with %s left = %q, want %q", c.left, got, c.want)
		}
	}
	if got := TimeLeft(time.Time{}, d); got != "" {
		t.Errorf("no deadline: %q", got)
	}
}

func TestMainRejectsBadQuestions(t *testing.T) {
	var out bytes.Buffer
	if err := Main(strings.NewReader("not json"), &out); err == nil || !strings.Contains(err.Error(), "stdin") {
		t.Errorf("not JSON: %v", err)
	}
	if err := Main(strings.NewReader(`{"id":"1"}`), &out); err == nil || !strings.Contains(err.Error(), "no tool") {
		t.Errorf("no tool: %v", err)
	}
	if out.Len() > 0 {
		t.Errorf("printed %q for a bad question", out.String())
	}
}
