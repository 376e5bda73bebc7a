package cli

import (
	"context"
	"errors"
	"io/fs"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
)

// notRunning says why no daemon of paths answered, given err from
// daemon.Probe or localclient's client: "Tether is not running", or, when
// another program holds the recorded port or (without a record) the port
// a daemon would take, what answers there, naming the process where the
// OS says, and what to do (localclient.OtherProgramError); a program
// answering like Tether without the proof keeps its own error
// (localclient.ErrNotThisTether).
func notRunning(ctx context.Context, paths config.Paths, err error) string {
	var op *localclient.OtherProgramError
	if errors.As(err, &op) || errors.Is(err, localclient.ErrNotThisTether) {
		return err.Error()
	}
	if errors.Is(err, fs.ErrNotExist) {
		if port, perr := config.PortFromEnv(); perr == nil {
			if cerr := localclient.CheckPort(ctx, paths, port); cerr != nil {
				return cerr.Error()
			}
		}
	}
	return "Tether is not running"
}

// daemonDown is the note, for stderr, of a command that falls back to
// the config dir's files (what) when err (wrapping
// localclient.ErrNotRunning) kept it from the daemon: "(the daemon is not
// running: showing what)", or, when another program holds Tether's port,
// the *localclient.OtherProgramError's text (what answers, what to do)
// and then that line.
func daemonDown(err error, what string) string {
	var op *localclient.OtherProgramError
	if errors.As(err, &op) {
		return "tether: " + op.Error() + "\n(showing " + what + ")"
	}
	return "(the daemon is not running: showing " + what + ")"
}
