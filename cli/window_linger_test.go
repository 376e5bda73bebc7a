package cli

import (
	"testing"
	"time"
)

func TestLingerFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env     string
		want    time.Duration
		wantErr bool
	}{
		{"", time.Minute, false},
		{"2s", 2 * time.Second, false},
		{"1m30s", 90 * time.Second, false},
		{"0s", 0, true},
		{"-1s", 0, true},
		{"soon", 0, true},
	} {
		got, err := lingerFromEnv(func(k string) string {
			if k == EnvWindowLinger {
				return tc.env
			}
			return ""
		}, time.Minute)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s=%q: %v, %v; want %v, error %v", EnvWindowLinger, tc.env, got, err, tc.want, tc.wantErr)
		}
	}
}
