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
	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/localapi"
	"github.com/tether-browser/tether/localclient"
	"github.com/tether-browser/tether/mcptoken"
)

// runNamedToken implements `tether token add|list|revoke`: through the
// running daemon's local API, so that a revocation takes effect at once;
// with no daemon, on tokens.json itself, under the daemon's lock so that
// none starts meanwhile.
func runNamedToken(ctx context.Context, args []string) error {
	paths, err := config.Resolve()
	if err != nil {
		return err
	}
	action := args[0]
	switch {
	case action == "list" && len(args) == 1:
	case (action == "add" || action == "revoke") && len(args) == 2:
	default:
		return fmt.Errorf("unknown token command\n\n%s", tokenUsage)
	}
	c := localclient.New(paths)
	switch action {
	case "add":
		t, err := c.AddToken(ctx, args[1])
		if errors.Is(err, localclient.ErrNotRunning) {
			err = withStore(paths, func(s *mcptoken.Store) error {
				secret, info, aerr := s.Add(args[1])
				t = apitype.IssuedToken{Token: localapi.TokenView(info), Secret: secret}
				return aerr
			})
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "Token %q issued. It is shown this once (Tether keeps only its hash): give it to the MCP client as\n  Authorization: Bearer <token>\n", t.Name)
		fmt.Println(t.Secret)
		return nil
	case "revoke":
		err := c.RevokeToken(ctx, args[1])
		if errors.Is(err, localclient.ErrNotRunning) {
			err = withStore(paths, func(s *mcptoken.Store) error { return s.Revoke(args[1]) })
		}
		if err != nil {
			return err
		}
		fmt.Printf("revoked %q; its next call is refused\n", args[1])
		return nil
	}
	list, err := c.Tokens(ctx)
	if errors.Is(err, localclient.ErrNotRunning) {
		err = withStore(paths, func(s *mcptoken.Store) error {
			for _, i := range s.List() {
				list = append(list, localapi.TokenView(i))
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tCREATED\tLAST USED")
	for _, t := range list {
		used := "never"
		if t.LastUsedMs > 0 {
			used = time.UnixMilli(t.LastUsedMs).Local().Format(time.DateTime)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", t.Name, time.UnixMilli(t.CreatedMs).Local().Format(time.DateTime), used)
	}
	if len(list) == 0 {
		fmt.Fprintln(w, "(no named tokens: tether token add NAME issues one)")
	}
	return w.Flush()
}

// withStore runs f on the config dir's token file while no daemon runs,
// holding the daemon's lock.
func withStore(paths config.Paths, f func(*mcptoken.Store) error) error {
	if err := paths.Ensure(); err != nil {
		return err
	}
	lock := flock.New(paths.Lock())
	if ok, err := lock.TryLock(); err != nil || !ok {
		return fmt.Errorf("the daemon is starting or stopping; retry in a moment")
	}
	defer lock.Unlock()
	s, err := mcptoken.Open(paths)
	if err != nil {
		return err
	}
	return f(s)
}
