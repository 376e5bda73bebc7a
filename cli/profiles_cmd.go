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
  tether profiles                 list paired profiles and those waiting for approval
  tether profiles approve CODE    pair the browser waiting for approval whose popup shows CODE
                                  (or give its full id)
  tether profiles deny CODE       refuse a browser waiting for approval (code or full id)
  tether profiles forget NAME     remove a paired profile (slug, label or id prefix);
                                  it must be approved again to reconnect
`

func runProfiles(ctx context.Context, args []string) error {
	paths, err := config.Resolve()
	if err != nil {
		return err
	}
	if len(args) == 0 || args[0] == "list" {
		return listProfiles(ctx, paths)
	}
	if len(args) != 2 {
		return fmt.Errorf("expected an action and a name\n\n%s", profilesUsage)
	}
	action, name := args[0], args[1]
	switch action {
	case "approve", "deny":
		var p apitype.Profile
		c := localclient.New(paths)
		if action == "approve" {
			p, err = c.ApproveProfile(ctx, name)
		} else {
			err = c.DenyProfile(ctx, name)
		}
		if err != nil {
			return err
		}
		if action == "approve" && p.Status == "approved" {
			fmt.Printf("approved %q; it pairs when its extension reconnects (within %d seconds)\n", p.Label, int(broker.ReconnectWithin/time.Second))
		} else if action == "approve" {
			fmt.Printf("approved %q: its slug is %q\n", p.Label, p.Slug)
		} else {
			fmt.Println("denied")
		}
		return nil
	case "forget":
		p, err := localclient.New(paths).ForgetProfile(ctx, name)
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
		fmt.Printf("forgot %q (%s); it must be approved again to reconnect\n", p.Label, p.Slug)
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
	if len(list.Profiles)+len(list.Pending) == 0 {
		fmt.Fprintln(w, "(no browser profile has connected yet)")
	}
	return w.Flush()
}

func prefix(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
