package app

import (
	"fmt"
	"strings"

	"github.com/tether-browser/tether/clients"
)

// ClientView is one MCP client on the Connect page.
type ClientView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Path is the config file Connect writes (the first, when several).
	Path string `json:"path"`
	// Installed is true when the client's config folder exists.
	Installed bool `json:"installed"`
	// Connected is true when every config file has Tether's entry.
	Connected bool `json:"connected"`
	// Mode is the entry's transport, "stdio" or "http", when connected.
	Mode string `json:"mode"`
	// Reload tells what makes the client pick a change up.
	Reload string `json:"reload"`
	// Error is set when a config file cannot be read or parsed; Connect
	// will refuse to touch it until the user fixes it.
	Error string `json:"error"`
}

// ClientOutcome is what Connect or Disconnect did.
type ClientOutcome struct {
	// Message describes it for the user, a line per file and the next step.
	Message string `json:"message"`
	// Changed is true when a file changed.
	Changed bool `json:"changed"`
	// Client is the client's state afterwards.
	Client ClientView `json:"client"`
}

func clientView(s clients.Status) ClientView {
	v := ClientView{ID: s.Client.ID, Name: s.Client.Name, Installed: s.Installed,
		Connected: s.Connected && len(s.Files) > 0, Reload: s.Client.Reload}
	var errs []string
	for i, f := range s.Files {
		if i == 0 {
			v.Path = f.Path
		}
		if f.Connected && v.Mode == "" {
			v.Mode = string(f.Mode)
		}
		if f.Err != nil {
			errs = append(errs, f.Err.Error())
		}
	}
	v.Error = strings.Join(errs, "; ")
	return v
}

// Clients lists the MCP clients Tether can connect, with their state.
func (a *App) Clients() []ClientView {
	list := a.cfg.Clients.List()
	out := make([]ClientView, 0, len(list))
	for _, s := range list {
		out = append(out, clientView(s))
	}
	return out
}

// Connect writes Tether's entry into the client's config file(s): edited
// in place, the previous file kept as a backup, written atomically. A file
// that cannot be parsed is left untouched and the error says where.
func (a *App) Connect(id string) (ClientOutcome, error) {
	return a.change(id, true)
}

// Disconnect removes Tether's entry from the client's config file(s).
func (a *App) Disconnect(id string) (ClientOutcome, error) {
	return a.change(id, false)
}

func (a *App) change(id string, connect bool) (ClientOutcome, error) {
	var (
		o   clients.Outcome
		err error
	)
	verb := "disconnect"
	if connect {
		verb = "connect"
		o, err = a.cfg.Clients.Connect(id, a.cfg.ConnectOptions)
	} else {
		o, err = a.cfg.Clients.Disconnect(id)
	}
	out := ClientOutcome{Message: strings.Join(o.Lines(connect), "\n"), Changed: o.Changed}
	for _, s := range a.cfg.Clients.List() {
		if s.Client.ID == id {
			out.Client = clientView(s)
		}
	}
	if err != nil {
		a.log.Warn("client config change failed in the window", "client", id, "action", verb, "err", err)
		msg := err.Error() // a refused file's error says it was left unchanged, and what to do
		if out.Message != "" {
			msg = out.Message + "\n" + msg
		}
		return out, fmt.Errorf("could not %s %s: %s", verb, id, msg)
	}
	a.log.Info("client config changed from the window", "client", id, "action", verb, "changed", o.Changed)
	return out, nil
}
