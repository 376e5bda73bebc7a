package daemon

import (
	"context"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tether-browser/tether/config"
)

// A daemon that `tether mcp` starts has no stderr anyone reads, and the
// bridge's error sends the user to the log file: the reason a daemon could
// not start must be there.
func TestStartFailureIsLogged(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	badSettings := config.Paths{Dir: filepath.Join(t.TempDir(), "cfg")}
	if err := badSettings.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(badSettings.SettingsFile(), []byte(`{"images": tru}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		paths config.Paths
		port  int
	}{
		"port in use":            {config.Paths{Dir: filepath.Join(t.TempDir(), "cfg")}, taken.Addr().(*net.TCPAddr).Port},
		"settings.json unparsed": {badSettings, 0},
	} {
		t.Run(name, func(t *testing.T) {
			var logged lockedBuffer
			err := Run(context.Background(), Config{Paths: tc.paths, Port: tc.port, Version: "test",
				Logger: slog.New(slog.NewTextHandler(&logged, nil))})
			if err == nil {
				t.Fatal("Run did not fail")
			}
			if !strings.Contains(logged.String(), "level=ERROR") || !strings.Contains(logged.String(), err.Error()[:20]) {
				t.Fatalf("Run failed with %q, but the log does not say so:\n%s", err, logged.String())
			}
		})
	}
}
