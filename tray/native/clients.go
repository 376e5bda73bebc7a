package native

import (
	"context"
	"time"

	"github.com/tether-browser/tether/tray"
)

// initialClients lists the clients the "Connect to" submenu holds, from
// the local API (the registry is fixed; the check marks follow the
// views). On failure the submenu starts empty and the loop's first read
// fills the views' check marks; the failure is logged there.
func initialClients(cfg tray.Config) []tray.ClientItem {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := cfg.Client.Clients(ctx)
	if err != nil {
		return nil
	}
	out := make([]tray.ClientItem, 0, len(list))
	for _, c := range list {
		out = append(out, tray.ClientItem{ID: c.ID, Name: c.Name, Path: c.Path})
	}
	return out
}
