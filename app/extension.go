package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tether-browser/tether/launcher"
)

// ExtensionState is the Extension page: whether an extension ever
// connected, and how to install one in the user's own Chrome.
type ExtensionState struct {
	// Connected is true while at least one profile's extension is connected.
	Connected bool `json:"connected"`
	// Known is how many browser profiles have ever connected.
	Known int `json:"known"`
	// Dir is the folder WriteExtension writes the unpacked extension to.
	Dir string `json:"dir"`
	// Written is true when Dir holds an extension; WrittenVersion is its
	// version and Version the version built into this binary. When they
	// differ, write it again, then reload it in chrome://extensions.
	Written        bool   `json:"written"`
	WrittenVersion string `json:"writtenVersion"`
	Version        string `json:"version"`
	// ID is the extension's ID in Chrome (fixed by the manifest's key), the
	// one origin the daemon's extension socket admits by default.
	ID string `json:"id"`
	// Steps say how to load it in chrome://extensions.
	Steps []string `json:"steps"`
}

func manifestVersion(fsys fs.FS) string {
	b, err := fs.ReadFile(fsys, "manifest.json")
	if err != nil {
		return ""
	}
	var m struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(b, &m)
	return m.Version
}

// Extension returns the Extension page's state.
func (a *App) Extension() ExtensionState {
	s := ExtensionState{Dir: a.cfg.ExtensionDir, ID: a.cfg.ExtensionID}
	for _, p := range a.cfg.Profiles.Profiles() {
		s.Known++
		s.Connected = s.Connected || p.Connected
	}
	if a.cfg.Extension != nil {
		s.Version = manifestVersion(a.cfg.Extension)
	}
	if s.Dir != "" {
		s.WrittenVersion = manifestVersion(os.DirFS(s.Dir))
		s.Written = s.WrittenVersion != ""
	}
	dir := s.Dir
	if !s.Written {
		dir += " (press “Write the extension” first)"
	}
	s.Steps = []string{
		"In the Chrome profile the AI may use, open chrome://extensions.",
		"Turn on “Developer mode” (top right).",
		"Click “Load unpacked” and choose the folder " + dir + ".",
		"Click Tether’s icon in the toolbar and share the tabs the AI may see; only shared tabs are visible to it.",
		"Approve the new profile here, under Approvals. It then appears under Profiles.",
	}
	return s
}

// WriteExtension writes the unpacked extension built into this binary to
// Dir, with a tether.json naming the daemon's port, replacing an older
// copy atomically (launcher.WriteExtension). After an update, reload it in
// chrome://extensions.
func (a *App) WriteExtension() (ExtensionState, error) {
	if a.cfg.Extension == nil || a.cfg.ExtensionDir == "" {
		return a.Extension(), errors.New("this build has no extension to write; build it with `make`")
	}
	if err := launcher.WriteExtension(a.cfg.Extension, a.cfg.ExtensionDir, launcher.ExtensionConfig{Port: a.cfg.Port}); err != nil {
		return a.Extension(), fmt.Errorf("%w; check that %s is writable", err, filepath.Dir(a.cfg.ExtensionDir))
	}
	a.log.Info("extension written from the window", "dir", a.cfg.ExtensionDir)
	return a.Extension(), nil
}

// RevealExtension opens the extension's folder in the file manager,
// writing it first when it is not there.
func (a *App) RevealExtension() error {
	st := a.Extension()
	if !st.Written {
		if _, err := a.WriteExtension(); err != nil {
			return err
		}
	}
	s := a.getShell()
	if s == nil {
		return ErrNoWindow
	}
	if err := s.Reveal(a.cfg.ExtensionDir); err != nil {
		return fmt.Errorf("open %s: %w; open that folder by hand", a.cfg.ExtensionDir, err)
	}
	return nil
}
