package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-browser/tether/config"
)

// `tether connect claude-code --http cursor` used to write claude-code's
// stdio entry, then fail on "--http" as an unknown client, leaving cursor
// untouched: a flag after a client name is refused before anything is
// written, with the order that works.
func TestConnectFlagAfterClientChangesNothing(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv(config.EnvConfigDir, t.TempDir())
	_, err := stdoutOf(t, func() error {
		return runConnect(context.Background(), []string{"claude-code", "--http", "cursor"})
	})
	if err == nil || !strings.Contains(err.Error(), "put options before the client names") {
		t.Fatalf("connect with a flag after a client: %v", err)
	}
	for _, f := range []string{".claude.json", filepath.Join(".cursor", "mcp.json")} {
		if _, serr := os.Stat(filepath.Join(home, f)); !os.IsNotExist(serr) {
			t.Errorf("%s was written (%v)", f, serr)
		}
	}
}
