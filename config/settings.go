package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Settings are the user's choices, kept in settings.json in the config dir.
// Every key is optional; a missing file means all defaults. The file is
// read at daemon start.
//
//	{
//	  "enabledTools": ["browser_evaluate"],   // off-by-default tools to offer
//	  "trustedInput": false,                  // allow chrome.debugger input for one action
//	  "images": true,                         // return screenshots as MCP image content
//	  "snapshotMaxChars": 40000,              // cap on snapshot and Markdown text per result
//	  "allowFileUrls": false,                 // let tools open file: URLs
//	  "approvalTimeoutSeconds": 120,          // how long a held call waits for an answer
//	  "closeAgentTabs": false,                // close an AI app's tabs after its last session ends
//	  "closeAgentTabsAfterSeconds": 600,      // … this long after
//	  "extensionIds": ["abcdefghijklmnopabcdefghijklmnop"], // more extensions to accept
//	  "remote": {"hosts": ["tether.example.org"], "callsPerMinute": 120} // remote mode (docs/remote.md)
//	}
type Settings struct {
	// EnabledTools lists off-by-default tools to offer (browser_evaluate).
	EnabledTools []string `json:"enabledTools,omitempty"`
	// TrustedInput lets tools ask for trusted input through chrome.debugger
	// (the user must also turn on "Trusted input" in the extension's popup).
	TrustedInput bool `json:"trustedInput,omitempty"`
	// Images returns screenshots as MCP image content; false writes them to
	// files and returns the path. Default true.
	Images *bool `json:"images,omitempty"`
	// SnapshotMaxChars caps the snapshot text of one result (default 40 000).
	SnapshotMaxChars int `json:"snapshotMaxChars,omitempty"`
	// AllowFileURLs lets tools open file: URLs (off: a page steering the
	// agent could otherwise have it read local files).
	AllowFileURLs bool `json:"allowFileUrls,omitempty"`
	// ApprovalTimeoutSeconds is how long a call held for the user's
	// approval waits for an answer before it is denied (0: the default,
	// DefaultApprovalTimeout).
	ApprovalTimeoutSeconds int `json:"approvalTimeoutSeconds,omitempty"`
	// CloseAgentTabs closes the tabs an AI app owns (it opened them, or the
	// user gave them to it) once its last MCP session has been over for
	// CloseAgentTabsAfter; off, they stay open (the user may be reading them).
	CloseAgentTabs bool `json:"closeAgentTabs,omitempty"`
	// CloseAgentTabsAfterSeconds is that delay (0: the default, 10 minutes).
	CloseAgentTabsAfterSeconds int `json:"closeAgentTabsAfterSeconds,omitempty"`
	// ExtensionIDs are extension ids accepted besides the built-in one
	// (whose manifest key pins it): the Chrome Web Store's id for Tether,
	// which the store assigns, so that a store install can be allowed
	// without a new build. Each is 32 letters a to p.
	ExtensionIDs []string `json:"extensionIds,omitempty"`
	// Remote turns on remote mode (docs/remote.md): a TLS reverse proxy on
	// this machine forwards /extension, /mcp and /health for public host
	// names. Absent: every non-loopback Host is refused.
	Remote *Remote `json:"remote,omitempty"`
}

// Remote is settings.json's "remote": the public host names a reverse
// proxy on this machine forwards to Tether, and the named tokens' limit.
type Remote struct {
	// Hosts are the public host names, without port (e.g.
	// "tether.example.org"), accepted in the Host header of requests that
	// come from a loopback peer (the proxy) with X-Forwarded-Proto: https.
	Hosts []string `json:"hosts"`
	// CallsPerMinute is each named token's rate limit on tool calls
	// (DefaultCallsPerMinute when absent; from 1 to MaxCallsPerMinute:
	// there is no unlimited setting).
	CallsPerMinute *int `json:"callsPerMinute,omitempty"`
}

// DefaultCallsPerMinute is a named token's tool-call limit when
// settings.json's remote.callsPerMinute does not say.
const DefaultCallsPerMinute = 120

// MaxCallsPerMinute is the largest remote.callsPerMinute (100 a second).
const MaxCallsPerMinute = 6000

// RemoteHosts lists remote mode's public host names, lower-cased (none:
// remote mode is off).
func (s Settings) RemoteHosts() []string {
	if s.Remote == nil {
		return nil
	}
	out := make([]string, 0, len(s.Remote.Hosts))
	for _, h := range s.Remote.Hosts {
		out = append(out, strings.ToLower(h))
	}
	return out
}

// CallsPerMinute is a named token's tool-call limit per minute.
func (s Settings) CallsPerMinute() int {
	if s.Remote == nil || s.Remote.CallsPerMinute == nil {
		return DefaultCallsPerMinute
	}
	return *s.Remote.CallsPerMinute
}

// validRemoteHost reports whether h is a DNS host name without port,
// scheme or path, and not a loopback or IP literal (remote mode is for
// names a certificate is issued for).
func validRemoteHost(h string) bool {
	if h == "" || len(h) > 253 || net.ParseIP(h) != nil || strings.EqualFold(h, "localhost") {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// ValidExtensionID reports whether id has the form of a Chrome extension
// id: 32 letters from a to p.
func ValidExtensionID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if c < 'a' || c > 'p' {
			return false
		}
	}
	return true
}

// DefaultCloseAgentTabsAfter is how long after an app's last session ended
// its tabs are closed, with closeAgentTabs on, when settings.json does not say.
const DefaultCloseAgentTabsAfter = 10 * time.Minute

// CloseAgentTabsAfter is how long after an app's last session ended its
// tabs are closed; 0 when closeAgentTabs is off.
func (s Settings) CloseAgentTabsAfter() time.Duration {
	switch {
	case !s.CloseAgentTabs:
		return 0
	case s.CloseAgentTabsAfterSeconds <= 0:
		return DefaultCloseAgentTabsAfter
	}
	return time.Duration(s.CloseAgentTabsAfterSeconds) * time.Second
}

// DefaultApprovalTimeout is how long a held call waits for an answer when
// settings.json does not say.
const DefaultApprovalTimeout = 120 * time.Second

// MaxApprovalTimeoutSeconds is the longest approvalTimeoutSeconds (an hour):
// an AI app's call should not hang for longer.
const MaxApprovalTimeoutSeconds = 3600

// ApprovalTimeout is how long a held call waits for an answer.
func (s Settings) ApprovalTimeout() time.Duration {
	if s.ApprovalTimeoutSeconds == 0 {
		return DefaultApprovalTimeout
	}
	return time.Duration(s.ApprovalTimeoutSeconds) * time.Second
}

// MaxSnapshotChars is the largest snapshotMaxChars the extension accepts.
const MaxSnapshotChars = 10_000_000

// ImagesEnabled reports whether screenshots are returned as images.
func (s Settings) ImagesEnabled() bool { return s.Images == nil || *s.Images }

// SettingsFile is the settings file.
func (p Paths) SettingsFile() string { return filepath.Join(p.Dir, "settings.json") }

// Screenshots is the folder screenshots are written to when not returned inline.
func (p Paths) Screenshots() string { return filepath.Join(p.Dir, "screenshots") }

// LoadSettings reads settings.json; a missing file gives the defaults. A file
// that does not parse is an error naming it (it is never rewritten).
func (p Paths) LoadSettings() (Settings, error) {
	var s Settings
	b, err := os.ReadFile(p.SettingsFile())
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("read settings: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("settings file %s is invalid (%v); fix it or delete it for the defaults", p.SettingsFile(), err)
	}
	if s.SnapshotMaxChars < 0 || s.SnapshotMaxChars > MaxSnapshotChars {
		return s, fmt.Errorf("settings file %s: snapshotMaxChars must be from 0 to %d", p.SettingsFile(), MaxSnapshotChars)
	}
	if s.ApprovalTimeoutSeconds < 0 || s.ApprovalTimeoutSeconds > MaxApprovalTimeoutSeconds {
		return s, fmt.Errorf("settings file %s: approvalTimeoutSeconds must be from 1 to %d (an hour), or left out for the default of %d",
			p.SettingsFile(), MaxApprovalTimeoutSeconds, int(DefaultApprovalTimeout/time.Second))
	}
	if s.CloseAgentTabsAfterSeconds < 0 || s.CloseAgentTabsAfterSeconds > 7*24*3600 {
		return s, fmt.Errorf("settings file %s: closeAgentTabsAfterSeconds must be from 1 to %d (a week), or left out for the default of %d",
			p.SettingsFile(), 7*24*3600, int(DefaultCloseAgentTabsAfter/time.Second))
	}
	for _, id := range s.ExtensionIDs {
		if !ValidExtensionID(id) {
			return s, fmt.Errorf("settings file %s: extensionIds: %q is not an extension id (32 letters a to p, as chrome://extensions shows it)", p.SettingsFile(), id)
		}
	}
	if r := s.Remote; r != nil {
		if len(r.Hosts) == 0 {
			return s, fmt.Errorf("settings file %s: remote.hosts is empty; list the public host names your reverse proxy serves (e.g. [\"tether.example.org\"]) or remove \"remote\" (docs/remote.md)", p.SettingsFile())
		}
		for _, h := range r.Hosts {
			if !validRemoteHost(h) {
				return s, fmt.Errorf("settings file %s: remote.hosts: %q is not a host name; give the name alone, without scheme, port or path, and not localhost or an IP address (docs/remote.md)", p.SettingsFile(), h)
			}
		}
		if n := r.CallsPerMinute; n != nil && (*n < 1 || *n > MaxCallsPerMinute) {
			return s, fmt.Errorf("settings file %s: remote.callsPerMinute must be from 1 to %d, or left out for the default of %d (there is no unlimited setting)",
				p.SettingsFile(), MaxCallsPerMinute, DefaultCallsPerMinute)
		}
	}
	return s, nil
}
