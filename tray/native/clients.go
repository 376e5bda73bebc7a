package native

import "github.com/tether-browser/tether/tray"

// initialClients lists the clients the "Connect to" submenu holds (the
// registry is fixed; the check marks follow the views).
func initialClients(cfg tray.Config) []tray.ClientItem {
	var out []tray.ClientItem
	for _, s := range cfg.Clients.List() {
		it := tray.ClientItem{ID: s.Client.ID, Name: s.Client.Name}
		if len(s.Files) > 0 {
			it.Path = s.Files[0].Path
		}
		out = append(out, it)
	}
	return out
}
