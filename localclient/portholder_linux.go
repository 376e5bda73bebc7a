package localclient

import (
	"bufio"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
)

// PortHolder names the process listening on port for 127.0.0.1: "pid
// 4242, python3" (its /proc/<pid>/comm), or "a process of user NAME" when
// the socket belongs to another user (only root may read that process's
// descriptors), or "" when no listening socket is found. Best effort, on
// Linux: /proc/net/tcp and tcp6 give the listening socket's inode and
// owner (state 0A, a local address of 127.0.0.1, 0.0.0.0, :: or
// ::ffff:127.0.0.1), and /proc/<pid>/fd the process holding that inode,
// readable without root for the user's own processes (proc(5)).
func PortHolder(port int) string {
	inodes := map[string]int{} // inode → uid
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		listeners(f, port, inodes)
	}
	if len(inodes) == 0 {
		return ""
	}
	if pid, name := inodeOwner(inodes); pid != 0 {
		if name == "" {
			return "pid " + strconv.Itoa(pid)
		}
		return fmt.Sprintf("pid %d, %s", pid, name)
	}
	for _, uid := range inodes {
		if uid == os.Getuid() {
			continue
		}
		if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			return "a process of user " + printable(u.Username)
		}
		return "a process of uid " + strconv.Itoa(uid)
	}
	return ""
}

// listeners adds to inodes the listening sockets of the /proc/net table
// file on port that accept connections to 127.0.0.1, with their uid.
func listeners(file string, port int, inodes map[string]int) {
	f, err := os.Open(file)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 || fields[3] != "0A" {
			continue
		}
		addr, portHex, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		if p, err := strconv.ParseUint(portHex, 16, 16); err != nil || int(p) != port || !acceptsLoopback(addr) {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		if err != nil || fields[9] == "0" {
			continue
		}
		inodes[fields[9]] = uid
	}
}

// acceptsLoopback reports whether a /proc/net local address (hex, each
// 32-bit word in host order: little-endian here) takes connections to
// 127.0.0.1: 127.x.x.x or 0.0.0.0; ::, or ::ffff:127.x.x.x.
func acceptsLoopback(hex string) bool {
	switch len(hex) {
	case 8:
		return hex == "00000000" || strings.HasSuffix(hex, "7F")
	case 32:
		return hex == strings.Repeat("0", 32) || (strings.HasPrefix(hex, "0000000000000000FFFF0000") && strings.HasSuffix(hex, "7F"))
	}
	return false
}

// inodeOwner finds a process holding one of the socket inodes, by the
// links in /proc/<pid>/fd ("socket:[inode]"), and its name.
func inodeOwner(inodes map[string]int) (int, string) {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, ""
	}
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		fdDir := filepath.Join("/proc", d.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // another user's process, or gone
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(fdDir, fd.Name()))
			if err != nil || !strings.HasPrefix(link, "socket:[") {
				continue
			}
			if _, ok := inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")]; ok {
				comm, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "comm"))
				return pid, printable(strings.TrimSpace(string(comm)))
			}
		}
	}
	return 0, ""
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
