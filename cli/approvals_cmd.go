package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localclient"
)

const approvalsUsage = `Usage:
  tether approvals                 list the tool calls waiting for your answer, oldest first
  tether approvals allow ID        let the held call run once
  tether approvals always ID       let it run and always allow its class of tool on its site
                                   (writes a rule in policy.json)
  tether approvals deny ID         refuse it

ID is the call's id from the list (a unique prefix of 4 characters or more
is enough). The first
answer wins: the window, the approval dialog or this command.
`

// runApprovals is `tether approvals`: the approval queue over the local
// API, for a desktop without a display, or a terminal next to one.
func runApprovals(ctx context.Context, args []string) error {
	paths, err := config.Resolve()
	if err != nil {
		return err
	}
	c := localclient.New(paths)
	queue, err := c.Approvals(ctx)
	if err != nil {
		return err
	}
	if len(args) == 0 || args[0] == "list" {
		return listApprovals(queue)
	}
	if len(args) != 2 {
		return fmt.Errorf("expected an answer and a call id\n\n%s", approvalsUsage)
	}
	answer, ok := map[string]string{"allow": apitype.AllowOnce, "always": apitype.AlwaysAllowSite, "deny": apitype.Deny}[args[0]]
	if !ok {
		return fmt.Errorf("unknown answer %q\n\n%s", args[0], approvalsUsage)
	}
	match := matchApproval(queue, args[1])
	if match == nil && len(args[1]) < minIDPrefix {
		return fmt.Errorf("give at least %d characters of the call's id, not %q: a shorter prefix may name another call held since you looked; `tether approvals` lists them", minIDPrefix, args[1])
	}
	switch len(match) {
	case 0:
		return fmt.Errorf("no held call has the id %q (it was answered or timed out); `tether approvals` lists those waiting", args[1])
	case 1:
	default:
		return fmt.Errorf("%d held calls start with %q; give more of the id", len(match), args[1])
	}
	a := match[0]
	if err := c.Answer(ctx, a.ID, answer, "cli"); err != nil {
		if localclient.IsStatus(err, http.StatusConflict) {
			return fmt.Errorf("%s was already answered or timed out; nothing changed", a.Tool)
		}
		return err
	}
	fmt.Printf("%s %s from %s: %s\n", a.Tool, a.ID, dash(a.Client), map[string]string{
		apitype.AllowOnce: "allowed once", apitype.AlwaysAllowSite: "allowed, and always allowed on " + strings.Join(a.Sites, ", "),
		apitype.Deny: "denied"}[answer])
	return nil
}

// minIDPrefix is the shortest id prefix `tether approvals` answers: ids are
// random hex, so an AI app holding a stream of calls gets one that starts
// with a given character in 16 tries, and with a given 4 in 65 536.
const minIDPrefix = 4

// matchApproval returns the held call whose id is id, or else those whose id
// starts with id when it is at least minIDPrefix characters long.
func matchApproval(queue []apitype.Approval, id string) []apitype.Approval {
	for _, a := range queue {
		if a.ID == id {
			return []apitype.Approval{a}
		}
	}
	if len(id) < minIDPrefix {
		return nil
	}
	var match []apitype.Approval
	for _, a := range queue {
		if strings.HasPrefix(a.ID, id) {
			match = append(match, a)
		}
	}
	return match
}

func listApprovals(queue []apitype.Approval) error {
	if len(queue) == 0 {
		fmt.Println("(no tool call is waiting for your answer)")
		return nil
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tCLIENT\tTOOL\tSITE\tPROFILE\tARGS\tDENIED IN")
	for _, a := range queue {
		left := time.Until(time.UnixMilli(a.DeadlineMs)).Round(time.Second)
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, dash(a.Client), a.Tool, dash(strings.Join(a.Sites, " ")),
			dash(a.Profile), cut(a.Summary, 60), max(left, 0))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Println("\nAnswer with: tether approvals allow|always|deny ID")
	return nil
}
