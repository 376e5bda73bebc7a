package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/tether-browser/tether/config"
)

// fileVersion is policy.json's format version.
const fileVersion = 1

// File is policy.json: the user's rules and the pause switch. The class
// defaults are built in and not written.
type File struct {
	// Version is the format version (1).
	Version int `json:"version"`
	// Paused is the kill switch; it survives restarts so that a daemon
	// restarted while paused does not silently resume AI access.
	Paused bool `json:"paused,omitempty"`
	// Rules are the user's rules, in the order they were added.
	Rules []Rule `json:"rules"`
}

// LoadFile reads path; a missing file is an empty policy. A file that does
// not parse, has a newer version or holds an invalid rule is an error
// naming the file (ErrCorrupt), and is never overwritten.
func LoadFile(path string) (File, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return File{Version: fileVersion, Rules: []Rule{}}, nil
	}
	if err != nil {
		return File{}, fmt.Errorf("read policy %s: %w", path, err)
	}
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return File{}, fmt.Errorf("%w: %s: %v; fix or delete it (it is never overwritten)", ErrCorrupt, path, err)
	}
	if f.Version != fileVersion {
		return File{}, fmt.Errorf("%w: %s has version %d, this Tether reads version %d", ErrCorrupt, path, f.Version, fileVersion)
	}
	for i, r := range f.Rules {
		if err := r.Validate(); err != nil {
			return File{}, fmt.Errorf("%w: %s: rule %d: %v", ErrCorrupt, path, i+1, err)
		}
	}
	if f.Rules == nil {
		f.Rules = []Rule{}
	}
	return f, nil
}

// SaveFile writes f to path atomically, mode 0600.
func SaveFile(path string, f File) error {
	f.Version = fileVersion
	if f.Rules == nil {
		f.Rules = []Rule{}
	}
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteFileAtomic(path, append(b, '\n'), 0o600)
}
