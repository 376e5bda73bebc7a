package cli

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/mcptoken"
)

// stdoutOf runs f and returns what it printed on stdout.
func stdoutOf(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	ferr := f()
	os.Stdout = old
	w.Close()
	return <-done, ferr
}

// With no daemon running, tether token add|list|revoke work on tokens.json
// itself: add prints the token alone on stdout, once; list shows names and
// never secrets; revoke removes it.
func TestNamedTokenWithoutDaemon(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(config.EnvConfigDir, dir)
	ctx := context.Background()
	out, err := stdoutOf(t, func() error { return runToken(ctx, []string{"add", "ci-agent"}) })
	if err != nil {
		t.Fatal(err)
	}
	secret := strings.TrimSpace(out)
	if !strings.HasPrefix(secret, mcptoken.Prefix) || strings.Contains(secret, "\n") {
		t.Fatalf("add printed %q; want the token alone", out)
	}
	st, err := mcptoken.Open(config.Paths{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := st.Lookup(secret); !ok || n != "ci-agent" {
		t.Fatalf("the printed token is not stored: %q %v", n, ok)
	}
	if _, err := stdoutOf(t, func() error { return runToken(ctx, []string{"add", "ci-agent"}) }); err == nil || !strings.Contains(err.Error(), "revoke it first") {
		t.Errorf("add twice: %v", err)
	}
	out, err = stdoutOf(t, func() error { return runToken(ctx, []string{"list"}) })
	if err != nil || !strings.Contains(out, "ci-agent") || !strings.Contains(out, "never") || strings.Contains(out, secret) {
		t.Errorf("list: %v\n%s", err, out)
	}
	if out, err = stdoutOf(t, func() error { return runToken(ctx, []string{"revoke", "ci-agent"}) }); err != nil || !strings.Contains(out, `revoked "ci-agent"`) {
		t.Errorf("revoke: %v %s", err, out)
	}
	if _, err := stdoutOf(t, func() error { return runToken(ctx, []string{"revoke", "ci-agent"}) }); err == nil || !strings.Contains(err.Error(), "tether token list") {
		t.Errorf("revoke twice: %v", err)
	}
	if _, err := stdoutOf(t, func() error { return runToken(ctx, []string{"add"}) }); err == nil || !strings.Contains(err.Error(), "tether token add NAME") {
		t.Errorf("add without a name: %v", err)
	}
}
