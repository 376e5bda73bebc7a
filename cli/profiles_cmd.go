package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/gofrs/flock"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
)

const profilesUsage = `Usage:
  tether profiles                 list paired profiles, those waiting for approval, and those
                                  refused recently that stopped asking (with what to do next)
  tether profiles approve CODE    pair the browser waiting for approval whose popup shows CODE
                                  (or give its full id)
  tether profiles deny CODE       refuse a browser waiting for approval (code or full id); its
                                  extension stops asking until its popup's Reconnect or a
                                  restart of the browser
  tether profiles forget NAME     remove a paired profile (slug, label or id prefix); a running
                                  browser whose extension folder Tether wrote asks to pair again
                                  at once, with a code: approve it, or refuse it with deny CODE
`

func runProfiles(ctx context.Context, args []string) error {
	paths, err := config.Resolve()
	if err != nil {
		return err
	}
	if len(args) == 0 || args[0] == "list" {
		return listProfiles(ctx, paths)
	}
	if len(args) == 1 {
		what := "a name"
		switch args[0] {
		case "approve", "deny":
			what = "the pairing code the browser's Tether popup shows (`tether profiles` lists the browsers waiting, with their codes)"
		case "forget":
			what = "the profile's slug, label or id prefix (`tether profiles` lists them)"
		}
		return fmt.Errorf("tether profiles %s needs %s\n\n%s", args[0], what, profilesUsage)
	}
	if len(args) != 2 {
		return fmt.Errorf("expected an action and a name\n\n%s", profilesUsage)
	}
	action, name := args[0], args[1]
	switch action {
	case "approve":
		p, err := localclient.New(paths).ApproveProfile(ctx, name)
		if err != nil {
			return err
		}
		if p.Status == "approved" {
			fmt.Printf("approved %q; it pairs when its extension reconnects (within %d seconds)\n", p.Label, int(broker.ReconnectWithin/time.Second))
		} else {
			fmt.Printf("approved %q: its slug is %q\n", p.Label, p.Slug)
		}
		return nil
	case "deny":
		p, err := localclient.New(paths).DenyProfile(ctx, name)
		if err != nil {
			return err
		}
		fmt.Print(deniedLines(p))
		return nil
	case "forget":
		c := localclient.New(paths)
		p, err := c.ForgetProfile(ctx, name)
		if errors.Is(err, localclient.ErrNotRunning) {
			// No daemon: the same registry code the daemon uses, on its
			// file, under the daemon's lock so that none starts meanwhile.
			lock := flock.New(paths.Lock())
			if ok, lerr := lock.TryLock(); lerr != nil || !ok {
				return fmt.Errorf("the daemon is starting or stopping; retry: %v", err)
			}
			defer lock.Unlock()
			bp, ferr := broker.ForgetStored(paths.Profiles(), name)
			if ferr != nil {
				return ferr
			}
			p = apitype.Profile{Label: bp.Label, Slug: bp.Slug}
		} else if err != nil {
			return err
		}
		fmt.Printf("forgot %q (%s)\n", p.Label, p.Slug)
		var back backAfterForget
		if p.Status == "connected" {
			back = waitBack(ctx, c, p.ID, forgetWait)
		}
		fmt.Print(forgottenLines(p, back))
		return nil
	default:
		return fmt.Errorf("unknown action %q\n\n%s", action, profilesUsage)
	}
}

func listProfiles(ctx context.Context, paths config.Paths) error {
	list, err := localclient.New(paths).Profiles(ctx)
	if errors.Is(err, localclient.ErrNotRunning) {
		stored, serr := broker.ListStored(paths.Profiles())
		if serr != nil {
			return serr
		}
		fmt.Fprintln(os.Stderr, daemonDown(err, "the saved registry"))
		for _, p := range stored {
			list.Profiles = append(list.Profiles, apitype.Profile{ID: p.ID, Label: p.Label, Slug: p.Slug, Status: "disconnected", LastSeen: p.LastSeen})
		}
	} else if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SLUG\tLABEL\tSTATUS\tCODE\tID\tSHARED TABS\tLAST SEEN")
	for _, p := range list.Profiles {
		seen := "now"
		if p.Status != "connected" {
			seen = time.Since(p.LastSeen).Round(time.Second).String() + " ago"
		}
		status := p.Status
		if p.RTTMs > 0 {
			status += fmt.Sprintf(" (RTT %d ms)", max(1, int(p.RTTMs+0.5)))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t-\t%s…\t%d\t%s\n", p.Slug, p.Label, status, prefix(p.ID), len(p.Tabs), seen)
	}
	for _, p := range list.Pending {
		fmt.Fprintf(w, "-\t%s\twaiting for approval\t%s\t%s…\t-\tsince %s, until %s\n",
			p.Label, p.Code, prefix(p.ID), p.Since.Format(time.TimeOnly), p.Expires.Format(time.TimeOnly))
	}
	if len(list.Pending) > 0 {
		if err := w.Flush(); err != nil {
			return err
		}
		if len(list.Pending) == 1 {
			code := list.Pending[0].Code
			fmt.Printf("\nApprove it only if the Tether extension's popup in that browser shows the code %s:\n  tether profiles approve %s\n", code, code)
		} else {
			fmt.Println("\nApprove a waiting browser only if the Tether extension's popup in that browser shows the same code:\n  tether profiles approve CODE")
		}
	}
	for _, r := range list.Refused {
		fmt.Fprintf(w, "-\t%s\t%s\t-\t%s…\t-\tat %s\n", r.Label, refusedStatus(r.Refusal), prefix(r.ID), r.At.Format(time.TimeOnly))
	}
	if len(list.Refused) > 0 {
		if err := w.Flush(); err != nil {
			return err
		}
		fmt.Println("\nRefused recently; these browsers ask nothing more until you act:")
		for _, r := range list.Refused {
			fmt.Printf("  %q (%s…), refused at %s: %s.\n    Next: %s.\n", r.Label, prefix(r.ID), r.At.Format(time.TimeOnly), r.Reason, r.NextStep)
		}
	}
	var outdated []apitype.Profile
	for _, p := range list.Profiles {
		if p.ExtOutdated != "" {
			outdated = append(outdated, p)
		}
	}
	if len(outdated) > 0 {
		if err := w.Flush(); err != nil {
			return err
		}
		for _, p := range outdated {
			fmt.Printf("\n%s (%s): %s\n", p.Label, p.Slug, p.ExtOutdated)
		}
	}
	if len(list.Profiles)+len(list.Pending)+len(list.Refused) == 0 {
		fmt.Fprintln(w, "(no browser profile has connected yet)")
	}
	return w.Flush()
}

// forgetWait is how long `tether profiles forget` waits for the forgotten
// browser, when it was connected, to ask to pair again (it does within a
// second when Tether wrote its extension folder).
const forgetWait = 3 * time.Second

// backAfterForget is what a forgotten browser did within forgetWait: asked
// to pair again (pending), or was paired again at once (paired: a daemon
// started with --auto-approve-profiles approves every browser); neither
// when it was not seen.
type backAfterForget struct {
	pending *apitype.Profile
	paired  *apitype.Profile
}

// waitBack polls c for up to wait for the browser with the full id id to
// come back after a forget, waiting for approval or paired again.
func waitBack(ctx context.Context, c *localclient.Client, id string, wait time.Duration) backAfterForget {
	deadline := time.Now().Add(wait)
	for {
		if list, err := c.Profiles(ctx); err == nil {
			for _, p := range list.Pending {
				if p.ID == id {
					return backAfterForget{pending: &p}
				}
			}
			for _, p := range list.Profiles {
				if p.ID == id {
					return backAfterForget{paired: &p}
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return backAfterForget{}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// forgottenLines says what happens after p was forgotten, from what its
// browser did meanwhile (back).
func forgottenLines(p apitype.Profile, back backAfterForget) string {
	if b := back.pending; b != nil {
		return fmt.Sprintf("Its browser is running and already asks to pair again: it waits for approval with the code %s.\n"+
			"  tether profiles deny %s      refuse it (its extension stops asking until it is restarted)\n"+
			"  tether profiles approve %s   pair it again, as a new profile\n", b.Code, b.Code, b.Code)
	}
	if b := back.paired; b != nil {
		return fmt.Sprintf("Its browser is running and was paired again at once, as %q (%s): this Tether approves every browser that asks "+
			"(it was started with --auto-approve-profiles).\n"+
			"To keep that browser out, quit it or remove Tether's extension from it, or restart Tether without --auto-approve-profiles and forget it again.\n",
			b.Label, b.Slug)
	}
	return "If its browser runs, it asks to pair again as soon as it reconnects (within a second when Tether wrote its extension folder;\n" +
		"otherwise its popup offers Pair again): it then waits for approval in `tether profiles` with a pairing code.\n" +
		"Refuse it with `tether profiles deny CODE` (its extension stops asking until it is restarted), or approve it.\n" +
		"A browser Tether refused before (listed as refused in `tether profiles`) asks only after its popup's Reconnect or a restart.\n"
}

// deniedLines says what `tether profiles deny` denied (p as the daemon
// answered; empty from a daemon older than that answer) and how to undo it.
func deniedLines(p apitype.Profile) string {
	if p.Label == "" && p.Code == "" {
		return "denied\n"
	}
	return fmt.Sprintf("denied %q (code %s, id %s…): its extension stopped asking.\n"+
		"To pair it after all, press Reconnect in its Tether popup, or restart that browser "+
		"(a `tether browser --headless` one: stop it and run it again); it then waits for approval with the same code.\n",
		p.Label, p.Code, prefix(p.ID))
}

// refusedStatus is a refused browser's STATUS in the listing: its refusal
// (apitype.RefusedProfile.Refusal) in a few words.
func refusedStatus(refusal string) string {
	switch refusal {
	case "pairing_denied":
		return "refused: you denied it"
	case "unauthorized":
		return "refused: no proof of its secret"
	case "protocol_mismatch":
		return "refused: another protocol"
	}
	return "refused: " + refusal
}

func prefix(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
