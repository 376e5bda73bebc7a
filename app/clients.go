package app

import (
	"errors"

	"github.com/tether-browser/tether/apitype"
	"github.com/tether-browser/tether/localclient"
)

// Clients lists the MCP clients Tether can connect, with their state.
func (a *App) Clients() ([]apitype.Client, error) {
	list, err := a.c.Clients(a.ctx())
	if err != nil {
		return nil, fail("list the AI apps", err)
	}
	return nonNil(list), nil
}

// Connect has the daemon write Tether's entry into the client's config
// file(s): edited in place, the previous file kept as a backup, written
// atomically. A file that cannot be parsed is left untouched and the error
// says where.
func (a *App) Connect(id string) (apitype.ClientOutcome, error) {
	return a.change(id, true)
}

// Disconnect has the daemon remove Tether's entry from the client's config
// file(s).
func (a *App) Disconnect(id string) (apitype.ClientOutcome, error) {
	return a.change(id, false)
}

func (a *App) change(id string, connect bool) (apitype.ClientOutcome, error) {
	var (
		o   apitype.ClientOutcome
		err error
	)
	verb := "disconnect " + id
	if connect {
		verb = "connect " + id
		o, err = a.c.Connect(a.ctx(), id)
	} else {
		o, err = a.c.Disconnect(a.ctx(), id)
	}
	if err != nil {
		a.log.Warn("client config change failed in the window", "client", id, "connect", connect, "err", err)
		var e *localclient.Error
		if errors.As(err, &e) {
			// The daemon's text says which file was left unchanged and what to do.
			return o, errors.New("could not " + verb + ": " + e.Message)
		}
		return o, fail(verb, err)
	}
	a.log.Info("client config changed from the window", "client", id, "connect", connect, "changed", o.Changed)
	return o, nil
}
