package localclient

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"
	"unicode"

	gnet "github.com/shirou/gopsutil/v4/net"
	"github.com/shirou/gopsutil/v4/process"
)

// portHolderTimeout bounds the search for a port's holder: it lists every
// TCP socket of the machine (and on macOS runs lsof), and it only adds a
// name to an error message.
const portHolderTimeout = 3 * time.Second

// PortHolder names the process listening on port for 127.0.0.1: "pid
// 4242, python3", or "a process of user NAME" when the OS gives the
// socket's owner but not its process (on Linux, only root may read another
// user's descriptors), or "" when no listening socket is found or the OS
// does not say. Best effort, through gopsutil's list of TCP sockets
// (Linux: /proc/net/tcp, tcp6 and /proc/<pid>/fd, proc(5); macOS: lsof;
// Windows: GetExtendedTcpTable), keeping the listening ones whose local
// address takes connections to 127.0.0.1 (acceptsLoopback).
func PortHolder(port int) string {
	ctx, cancel := context.WithTimeout(context.Background(), portHolderTimeout)
	defer cancel()
	conns, err := gnet.ConnectionsWithContext(ctx, "tcp")
	if err != nil {
		return ""
	}
	var others []int32
	for _, c := range conns {
		if c.Status != "LISTEN" || c.Laddr.Port != uint32(port) || !acceptsLoopback(c.Laddr.IP) {
			continue
		}
		if c.Pid > 0 {
			name := ""
			if p, err := process.NewProcessWithContext(ctx, c.Pid); err == nil {
				name, _ = p.NameWithContext(ctx)
			}
			if name = printable(name); name == "" {
				return fmt.Sprintf("pid %d", c.Pid)
			}
			return fmt.Sprintf("pid %d, %s", c.Pid, name)
		}
		for _, uid := range c.Uids {
			if int(uid) != os.Getuid() {
				others = append(others, uid)
			}
		}
	}
	for _, uid := range others {
		if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
			return "a process of user " + printable(u.Username)
		}
		return "a process of uid " + strconv.Itoa(int(uid))
	}
	return ""
}

// acceptsLoopback reports whether a listening socket's local address, as
// the OS lists it, takes connections to 127.0.0.1: 127.x.x.x, 0.0.0.0, ::
// or ::ffff:127.x.x.x; "*" or "" (any address, as lsof and some tables
// print it) too.
func acceptsLoopback(ip string) bool {
	if ip == "*" || ip == "" {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(ip, "[]"))
	if err != nil {
		return false
	}
	if a.Is4In6() {
		a = a.Unmap()
	}
	return a.IsUnspecified() || (a.Is4() && a.IsLoopback())
}

// printable replaces what a terminal would act on in a process name (any
// program picks its own: control characters, escapes, bidirectional
// marks) with "?", so naming it cannot rewrite the user's screen.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) || unicode.Is(unicode.Bidi_Control, r) {
			return '?'
		}
		return r
	}, s)
}
