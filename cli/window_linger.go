package cli

import (
	"fmt"
	"time"
)

// EnvWindowLinger sets the window process's default --linger: the daemon
// starts `window` without flags, and its child inherits the environment,
// so that tests (and users who want it) can change the linger without a
// rebuild.
const EnvWindowLinger = "TETHER_WINDOW_LINGER"

// lingerFromEnv is --linger's default: $TETHER_WINDOW_LINGER when set (a
// positive Go duration), else def. (This file is in the lean build too,
// which must not import app.)
func lingerFromEnv(getenv func(string) string, def time.Duration) (time.Duration, error) {
	v := getenv(EnvWindowLinger)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration such as 2s or 1m", EnvWindowLinger, v)
	}
	return d, nil
}
