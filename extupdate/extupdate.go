// Package extupdate decides, at each accepted hello, whether a profile's
// extension is older than the build inside the daemon, and when it is and
// Tether wrote the folder it was loaded from, rewrites that folder so the
// extension can reload itself (protocol.Reload).
//
// The rules (issue 18):
//   - versions are the manifest's x.y.z, compared numerically; an equal
//     version with another build id (the manifest's version_name,
//     extension/build.mjs) is older too; a newer version is never touched
//     (never downgrade);
//   - only an unpacked install (chrome.management installType
//     "development") whose hello carries the folder's tether-install.json
//     (launcher.MarkerName), for a folder Tether writes to (Config.Allowed),
//     with the same marker on disk there, is rewritten; a Web Store install
//     ("normal") or any folder without the marker (a checkout's
//     extension/dist) is left alone and reported outdated, with how to
//     reload it.
package extupdate

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tether-browser/tether/launcher"
	"github.com/tether-browser/tether/protocol"
)

// Build is an extension build: the manifest's version and version_name.
type Build struct {
	Version     string
	VersionName string
}

// ReadBuild reads the manifest of the extension in fsys.
func ReadBuild(fsys fs.FS) (Build, error) {
	b, err := fs.ReadFile(fsys, "manifest.json")
	if err != nil {
		return Build{}, err
	}
	var m struct {
		Version     string `json:"version"`
		VersionName string `json:"version_name"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Build{}, fmt.Errorf("manifest.json: %w", err)
	}
	return Build{Version: m.Version, VersionName: m.VersionName}, nil
}

// CompareVersions compares two Chrome extension versions (1 to 4
// dot-separated integers, developer.chrome.com/docs/extensions/reference/manifest/version;
// missing parts count as 0): -1, 0 or 1. ok is false when either is not
// such a version.
func CompareVersions(a, b string) (cmp int, ok bool) {
	pa, oka := parseVersion(a)
	pb, okb := parseVersion(b)
	if !oka || !okb {
		return 0, false
	}
	for i := range 4 {
		switch {
		case pa[i] < pb[i]:
			return -1, true
		case pa[i] > pb[i]:
			return 1, true
		}
	}
	return 0, true
}

func parseVersion(v string) ([4]uint64, bool) {
	var out [4]uint64
	parts := strings.Split(v, ".")
	if len(parts) < 1 || len(parts) > 4 {
		return out, false
	}
	for i, p := range parts {
		n, err := strconv.ParseUint(p, 10, 32)
		if err != nil || (len(p) > 1 && p[0] == '0') {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

// Action is what the daemon does about one hello.
type Action int

const (
	// Current: the extension is this build, or newer; nothing to do.
	Current Action = iota
	// Manual: it is older, and the user must reload it (Note says how).
	Manual
	// Rewrite: it is older and in a folder Tether wrote: rewrite it and
	// send protocol.Reload.
	Rewrite
)

// Config configures an Updater.
type Config struct {
	// Ext is the extension built into the daemon.
	Ext fs.FS
	// Allowed reports whether dir (absolute, clean) is a folder Tether
	// writes extensions to: the config dir's chrome-extension/ and `tether
	// browser`'s copies (config.Paths.ExtensionFolder).
	Allowed func(dir string) bool
	// PairingKey is the daemon's pairing key (64 hex digits), added to a
	// rewritten folder's tether.json that has none (launcher.UpdateExtension).
	PairingKey string
	// Logger receives what the updater did; nil discards it.
	Logger *slog.Logger
	// Now is the clock (time.Now).
	Now func() time.Time
}

// RetryAfter is how long the updater waits before it rewrites the same
// folder from the same old build again: an extension that comes back
// still old after its reload (Chrome did not pick the files up) is
// reported for a manual reload instead of being reloaded in a loop.
const RetryAfter = 10 * time.Minute

// Updater decides and rewrites; safe for concurrent use.
type Updater struct {
	cfg   Config
	build Build
	log   *slog.Logger
	mu    sync.Mutex
	tried map[string]time.Time // profile id + dir + old build → when it was asked to reload
	// writing serialises rewrites: two profiles may load the same folder.
	writing sync.Mutex
}

// New reads the build in cfg.Ext.
func New(cfg Config) (*Updater, error) {
	b, err := ReadBuild(cfg.Ext)
	if err != nil {
		return nil, fmt.Errorf("the extension built into Tether: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Updater{cfg: cfg, build: b, log: cfg.Logger, tried: map[string]time.Time{}}, nil
}

// Build is the build inside the daemon.
func (u *Updater) Build() Build { return u.build }

// Decide says what to do about h, and for Manual a sentence for the user
// (the window's Extension page, `tether profiles`) saying that the
// extension is outdated and how to reload it. It reads the marker on disk
// but writes nothing.
func (u *Updater) Decide(h protocol.Hello) (Action, string) {
	cmp, ok := CompareVersions(h.ExtVersion, u.build.Version)
	if !ok || cmp > 0 || (cmp == 0 && (h.VersionName == u.build.VersionName || u.build.VersionName == "")) {
		return Current, ""
	}
	have := h.ExtVersion
	if h.VersionName != "" {
		have = h.VersionName
	}
	want := u.build.Version
	if u.build.VersionName != "" {
		want = u.build.VersionName
	}
	outdated := fmt.Sprintf("The extension is outdated (%s; Tether has %s). ", have, want)
	if h.InstallType != "" && h.InstallType != "development" {
		return Manual, outdated + "It was installed from the Chrome Web Store (or by policy), which updates it: open chrome://extensions, turn on Developer mode and press Update to update it now."
	}
	manual := outdated + "Tether did not write its folder, so it does not update it: open chrome://extensions and press Reload on Tether (for a checkout's extension/dist, run `make` first; for a folder you unzipped, unzip the new release there first)."
	// Only an unpacked install is ever rewritten: one that did not say how
	// it was installed is not.
	if h.InstallType != "development" || h.Install == nil || h.Install.Dir == "" {
		return Manual, manual
	}
	dir := filepath.Clean(h.Install.Dir)
	if !filepath.IsAbs(dir) || !u.cfg.Allowed(dir) {
		return Manual, manual
	}
	m, err := launcher.ReadMarker(dir)
	if err != nil || m.ID != h.Install.ID {
		return Manual, manual
	}
	u.mu.Lock()
	at, seen := u.tried[triedKey(h, dir, have)]
	u.mu.Unlock()
	if seen && u.cfg.Now().Sub(at) < RetryAfter {
		return Manual, outdated + "Tether rewrote its folder (" + dir + ") but it came back unchanged: open chrome://extensions and press Reload on Tether."
	}
	return Rewrite, ""
}

func triedKey(h protocol.Hello, dir, have string) string {
	return h.ProfileID + "\x00" + dir + "\x00" + have
}

// Check decides about h and, for Rewrite, rewrites the folder (atomically,
// keeping tether.json and the marker; launcher.UpdateExtension) unless it
// holds this build already (another profile loaded the same folder and
// had it rewritten), and returns the frame to send. note is Decide's
// sentence for Manual, or the failure to rewrite; both empty when the
// extension is current.
func (u *Updater) Check(h protocol.Hello) (reload *protocol.Reload, note string) {
	act, note := u.Decide(h)
	if act != Rewrite {
		return nil, note
	}
	dir := filepath.Clean(h.Install.Dir)
	have := h.ExtVersion
	if h.VersionName != "" {
		have = h.VersionName
	}
	u.mu.Lock()
	u.tried[triedKey(h, dir, have)] = u.cfg.Now()
	u.mu.Unlock()
	u.writing.Lock()
	defer u.writing.Unlock()
	frame := &protocol.Reload{Type: protocol.TypeReload, Version: u.build.Version, VersionName: u.build.VersionName}
	if onDisk, err := ReadBuild(os.DirFS(dir)); err == nil && onDisk == u.build && u.build.VersionName != "" {
		u.log.Info("extension folder holds this build already; asking the extension to reload", "dir", dir, "from", have, "to", u.build.VersionName)
		return frame, ""
	}
	if err := launcher.UpdateExtension(u.cfg.Ext, dir, u.cfg.PairingKey); err != nil {
		u.log.Warn("updating the extension's folder failed", "dir", dir, "err", err)
		return nil, fmt.Sprintf("The extension is outdated (%s) and Tether could not update its folder: %v. Open the window's Extension page and press Write the extension, then Reload on Tether at chrome://extensions.", have, err)
	}
	u.log.Info("extension folder updated; asking the extension to reload", "dir", dir, "from", have, "to", u.build.VersionName)
	return frame, ""
}
