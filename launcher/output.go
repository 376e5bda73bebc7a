package launcher

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
)

// Chromium writes its own log lines to stderr, and on a desktop without a
// system bus, UPower or a GPU, a headless start alone prints some twenty
// ERROR lines about D-Bus and its zygote that mean nothing to the user.
// Launch sends everything the browser prints to a log file and shows on
// the terminal only what may matter (see Visible); when the browser exits
// with an error, the file's last lines are shown as well.

// BrowserLogName is the name of the browser's log file, which `tether
// browser` keeps in the browser's profile folder (--user-data-dir).
const BrowserLogName = "tether-browser.log"

// MaxBrowserLog caps the browser's log file (bytes); past it, the rest of
// the run is not written (a last line says so). The file is rewritten at
// each launch.
const MaxBrowserLog = 1 << 20

// chromiumLine matches Chromium's log prefix, e.g.
// "[15595:15644:1201/140727.645145:ERROR:dbus/bus.cc:405] ".
var chromiumLine = regexp.MustCompile(`^\[\d+:\d+:\d{4}/\d{6}\.\d+:([A-Z]+\d*):([^\]:]+)(?::\d+)?\] `)

// noisySources are Chromium source files whose ERROR lines come from what
// a desktop or container lacks (a system bus, UPower, a GPU) or from its
// own process housekeeping, and never stop the browser from working.
var noisySources = []string{
	"dbus/", "bus.cc", "object_proxy.cc", "zygote_communication_linux.cc", "zygote_host_impl_linux.cc",
	"gpu/", "gpu_", "viz_main_impl.cc", "gl_surface", "gl_display", "angle_platform_impl.cc", "command_buffer",
	"sandbox_linux.cc", "power_monitor", "upower", "battery", "vaapi", "video_capture",
	"bluez", "bluetooth", "udev", "fontconfig", "net/cert", "google_apis", "registration_request.cc",
	"chrome_browser_cloud_management", "account_consistency", "sync/", "component_updater", "ssl_client_socket",
}

// wrapperTest matches a shell's complaint about a `[ … ]` test in a
// browser's wrapper script, harmless since the script goes on (Debian's
// /usr/bin/chromium prints "/usr/bin/chromium: 9: [: 25276502016:
// unexpected operator" at every start on some systems).
var wrapperTest = regexp.MustCompile(`^\S+: \d+: \[: .*unexpected operator\s*$`)

// Visible reports whether a line the browser printed should reach the
// terminal: anything not in Chromium's log format (e.g. "DevTools
// listening on …") but a wrapper script's wrapperTest complaint, every
// FATAL line, and ERROR lines except those from noisySources. INFO,
// WARNING and VERBOSE lines only go to the log file.
func Visible(line string) bool {
	m := chromiumLine.FindStringSubmatch(line)
	if m == nil {
		return strings.TrimSpace(line) != "" && !wrapperTest.MatchString(line)
	}
	switch level, source := m[1], strings.ToLower(m[2]); {
	case level == "FATAL":
		return true
	case level != "ERROR":
		return false
	default:
		for _, n := range noisySources {
			if strings.Contains(source, n) {
				return false
			}
		}
		return true
	}
}

// browserOutput is the browser's stdout and stderr: every line to file (up
// to MaxBrowserLog bytes), the Visible ones to term as well. It keeps the
// last lines for a failed exit.
type browserOutput struct {
	mu      sync.Mutex
	file    io.Writer
	term    io.Writer
	written int
	partial []byte
	last    []string
}

const keepLast = 20

func (o *browserOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		o.line(string(o.partial[:i+1]))
		o.partial = o.partial[i+1:]
	}
	if len(o.partial) > 64<<10 { // a line with no end: take it as it is
		o.line(string(o.partial) + "\n")
		o.partial = nil
	}
	return len(p), nil
}

// flush writes a last line without its newline.
func (o *browserOutput) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.partial) > 0 {
		o.line(string(o.partial) + "\n")
		o.partial = nil
	}
}

func (o *browserOutput) line(s string) {
	if o.file != nil && o.written < MaxBrowserLog {
		if o.written+len(s) > MaxBrowserLog {
			s := fmt.Sprintf("(tether: the rest of this run's browser output is not logged: the file reached %d bytes)\n", MaxBrowserLog)
			_, _ = io.WriteString(o.file, s)
			o.written = MaxBrowserLog
		} else {
			n, _ := io.WriteString(o.file, s)
			o.written += n
		}
	}
	if Visible(s) {
		_, _ = io.WriteString(o.term, s)
	}
	o.last = append(o.last, s)
	if len(o.last) > keepLast {
		o.last = o.last[1:]
	}
}

// lastLines returns the browser's last lines (at most keepLast).
func (o *browserOutput) lastLines() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.last, "")
}

// openBrowserLog creates (or empties) the log file at path, mode 0600.
func openBrowserLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
}
