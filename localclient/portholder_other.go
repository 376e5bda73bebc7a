//go:build !linux

package localclient

// PortHolder names the process listening on port; only Linux says
// (portholder_linux.go), so elsewhere it is "" and messages name the
// port alone.
func PortHolder(port int) string { return "" }
