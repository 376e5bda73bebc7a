package cli

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient/localclienttest"
)

// `tether profiles` lists the browsers refused recently, each with why and
// the daemon's next step, below the paired and waiting ones.
func TestProfilesListsRefusedBrowsers(t *testing.T) {
	f := localclienttest.New(t)
	t.Setenv(config.EnvConfigDir, f.Paths.Dir)
	at := time.Date(2026, 12, 2, 14, 12, 3, 0, time.Local)
	f.SetAnswer("GET", apitype.PathProfiles, http.StatusOK, apitype.ProfileList{
		Profiles: []apitype.Profile{}, Pending: []apitype.Profile{},
		Refused: []apitype.RefusedProfile{{ID: "d3bb268f-1111-4000-8000-000000000001", Label: "CI box", Refusal: "pairing_denied",
			Reason: "you denied it", NextStep: "to pair it after all, restart the browser", At: at, Count: 1}},
	})
	out, err := stdoutOf(t, func() error { return runProfiles(context.Background(), nil) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"refused: you denied it", "d3bb268f…", "at 14:12:03",
		`"CI box" (d3bb268f…), refused at 14:12:03: you denied it.`, "Next: to pair it after all, restart the browser."} {
		if !strings.Contains(out, want) {
			t.Errorf("the listing lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "no browser profile has connected yet") {
		t.Errorf("a refused browser counts as none:\n%s", out)
	}
}

// `tether profiles deny` says what it denied and how to undo it; from a
// daemon that answers 204 (before it said), just "denied".
func TestProfilesDenySaysWhatItDenied(t *testing.T) {
	f := localclienttest.New(t)
	t.Setenv(config.EnvConfigDir, f.Paths.Dir)
	f.SetAnswer("POST", apitype.PathProfileDeny, http.StatusOK, apitype.Profile{ID: "d3bb268f-1111-4000-8000-000000000001", Label: "CI box", Status: "pending", Code: "96MG35"})
	out, err := stdoutOf(t, func() error { return runProfiles(context.Background(), []string{"deny", "96mg35"}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`denied "CI box" (code 96MG35, id d3bb268f…)`, "Reconnect", "restart that browser", "tether browser --headless"} {
		if !strings.Contains(out, want) {
			t.Errorf("deny's output lacks %q:\n%s", want, out)
		}
	}
	f.SetAnswer("POST", apitype.PathProfileDeny, http.StatusNoContent, nil)
	if out, err := stdoutOf(t, func() error { return runProfiles(context.Background(), []string{"deny", "96MG35"}) }); err != nil || out != "denied\n" {
		t.Fatalf("from an older daemon: %q, %v", out, err)
	}
}

// After `tether profiles forget` of a connected browser, the CLI says that
// it is back asking to pair, with its code and the commands to refuse or
// approve it; for one that was not connected, what will happen.
func TestProfilesForgetSaysTheBrowserAsksAgain(t *testing.T) {
	f := localclienttest.New(t)
	t.Setenv(config.EnvConfigDir, f.Paths.Dir)
	const id = "d3bb268f-1111-4000-8000-000000000001"
	f.SetAnswer("POST", apitype.PathProfileForget, http.StatusOK, apitype.Profile{ID: id, Label: "Work", Slug: "work", Status: "connected"})
	f.SetAnswer("GET", apitype.PathProfiles, http.StatusOK, apitype.ProfileList{
		Profiles: []apitype.Profile{}, Pending: []apitype.Profile{{ID: id, Label: "Work", Status: "pending", Code: "K7M4PX"}},
	})
	out, err := stdoutOf(t, func() error { return runProfiles(context.Background(), []string{"forget", "work"}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`forgot "Work" (work)`, "already asks to pair again", "K7M4PX", "tether profiles deny K7M4PX", "tether profiles approve K7M4PX"} {
		if !strings.Contains(out, want) {
			t.Errorf("forget's output lacks %q:\n%s", want, out)
		}
	}
	f.SetAnswer("POST", apitype.PathProfileForget, http.StatusOK, apitype.Profile{ID: id, Label: "Work", Slug: "work", Status: "disconnected"})
	out, err = stdoutOf(t, func() error { return runProfiles(context.Background(), []string{"forget", "work"}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"asks to pair again as soon as it reconnects", "tether profiles deny CODE"} {
		if !strings.Contains(out, want) {
			t.Errorf("forget's output for a browser away lacks %q:\n%s", want, out)
		}
	}
	// A daemon that approves every browser pairs it again at once: forget
	// says so instead of waiting for a code that never comes.
	f.SetAnswer("POST", apitype.PathProfileForget, http.StatusOK, apitype.Profile{ID: id, Label: "Work", Slug: "work", Status: "connected"})
	f.SetAnswer("GET", apitype.PathProfiles, http.StatusOK, apitype.ProfileList{
		Profiles: []apitype.Profile{{ID: id, Label: "Work", Slug: "work-2", Status: "connected"}},
	})
	out, err = stdoutOf(t, func() error { return runProfiles(context.Background(), []string{"forget", "work"}) })
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"paired again at once", `"Work" (work-2)`, "--auto-approve-profiles"} {
		if !strings.Contains(out, want) {
			t.Errorf("forget's output for a browser paired again at once lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "CODE") {
		t.Errorf("forget's output for a browser paired again at once speaks of a pairing code:\n%s", out)
	}
}
