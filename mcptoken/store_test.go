package mcptoken

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/config"
)

func TestStore(t *testing.T) {
	p := config.Paths{Dir: t.TempDir()}
	s, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	secret, info, err := s.Add("laptop-agent")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, Prefix) || len(secret) < 40 || info.Name != "laptop-agent" || info.Created.IsZero() {
		t.Fatalf("Add: %q %+v", secret, info)
	}
	if _, _, err := s.Add("laptop-agent"); !errors.Is(err, ErrExists) {
		t.Errorf("Add twice: %v, want ErrExists", err)
	}
	for _, bad := range []string{"", "Laptop", "a b", "-x", strings.Repeat("a", 64), "a/b"} {
		if _, _, err := s.Add(bad); !errors.Is(err, ErrBadName) {
			t.Errorf("Add(%q): %v, want ErrBadName", bad, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(p.Dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || strings.Contains(string(b), secret[len(Prefix):]) {
		t.Fatal("the token itself is stored")
	}
	if st, _ := os.Stat(filepath.Join(p.Dir, FileName)); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	if n, ok := s.Lookup(secret); !ok || n != "laptop-agent" {
		t.Errorf("Lookup: %q %v", n, ok)
	}
	for _, wrong := range []string{"", secret + "x", secret[len(Prefix):], strings.ToUpper(secret)} {
		if _, ok := s.Lookup(wrong); ok {
			t.Errorf("Lookup(%q) accepted", wrong)
		}
	}
	// Last use reaches the file on Flush, not on every call.
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if l := s2.List(); len(l) != 1 || l[0].LastUsed.IsZero() {
		t.Errorf("after Flush, reopened: %+v", l)
	}
	if n, ok := s2.Lookup(secret); !ok || n != "laptop-agent" {
		t.Errorf("reopened Lookup: %q %v", n, ok)
	}
	if err := s.Revoke("laptop-agent"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Lookup(secret); ok {
		t.Error("a revoked token is accepted")
	}
	if err := s.Revoke("laptop-agent"); !errors.Is(err, ErrNoToken) {
		t.Errorf("Revoke twice: %v, want ErrNoToken", err)
	}
}

// A damaged file is refused with its name and never rewritten.
func TestStoreDamagedFile(t *testing.T) {
	p := config.Paths{Dir: t.TempDir()}
	path := filepath.Join(p.Dir, FileName)
	// Two entries of one name (a hand-merged file): revoking the name
	// would remove the first and leave the second working, while saying
	// it was revoked. Two of one hash: one secret, two names.
	dupName := `{"tokens": [{"name": "x", "created": "2026-12-01T00:00:00Z", "sha256": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, {"name": "x", "created": "2026-12-01T00:00:00Z", "sha256": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}]}`
	dupHash := `{"tokens": [{"name": "x", "created": "2026-12-01T00:00:00Z", "sha256": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}, {"name": "y", "created": "2026-12-01T00:00:00Z", "sha256": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}]}`
	for _, body := range []string{`{"tokens": [`, `{"tokens": [{"name": "x", "sha256": "short"}]}`, `{"other": 1}`, dupName, dupHash} {
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(p); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "will not overwrite") {
			t.Errorf("%s: %v", body, err)
		}
		if b, _ := os.ReadFile(path); string(b) != body {
			t.Errorf("%s: file changed to %s", body, b)
		}
	}
}

func TestLimiter(t *testing.T) {
	l := NewLimiter(2)
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	if l.Allow("a") != nil || l.Allow("a") != nil {
		t.Fatal("the first two calls of a minute are refused")
	}
	err := l.Allow("a")
	var over *OverLimitError
	if !errors.As(err, &over) || over.Token != "a" || over.PerMinute != 2 || over.Wait != 30*time.Second {
		t.Fatalf("third call: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "token a is over its limit of 2 calls per minute; wait 30 s") {
		t.Errorf("message %q", msg)
	}
	if l.Allow("b") != nil {
		t.Error("another token shares a's bucket")
	}
	now = now.Add(30 * time.Second)
	if l.Allow("a") != nil {
		t.Error("refused after the wait it named")
	}
}
