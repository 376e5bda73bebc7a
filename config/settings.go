package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
//	  "extensionIds": ["abcdefghijklmnopabcdefghijklmnop"] // more extensions to accept
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
	return s, nil
}
