package broker

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/protocol"
)

// storedProfile is one profile as persisted in profiles.json. Slugs are
// persisted so they do not depend on reconnect order after a restart.
type storedProfile struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Slug  string `json:"slug"`
	// SecretHash is the hex SHA-256 of the profile's secret; the secret
	// itself is never stored by the daemon.
	SecretHash string    `json:"secretHash"`
	LastSeen   time.Time `json:"lastSeen"`
}

type storeFile struct {
	// Version of this file's format (storeVersion).
	Version  int             `json:"version"`
	Profiles []storedProfile `json:"profiles"`
}

// storeVersion is the profiles.json format this Tether reads and writes.
const storeVersion = 1

// loadStore reads path; a missing file is an empty registry. A corrupt file,
// or one of a newer format (written by a newer Tether: saving it would drop
// what this one does not know), is an error naming the file: it is never
// silently replaced.
func loadStore(path string) ([]storedProfile, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read profile registry: %w", err)
	}
	var f storeFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("profile registry %s is corrupt (%v); move it aside to start with no paired profiles", path, err)
	}
	if f.Version > storeVersion {
		return nil, fmt.Errorf("profile registry %s has format %d, written by a newer Tether; this one reads format %d: run the newer Tether, or move the file aside to start with no paired profiles", path, f.Version, storeVersion)
	}
	return f.Profiles, nil
}

func saveStore(path string, profiles []storedProfile) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(storeFile{Version: storeVersion, Profiles: profiles}, "", "  ")
	if err != nil {
		return err
	}
	return config.WriteFileAtomic(path, append(b, '\n'), 0o600)
}

// newSecret returns a random per-profile secret (32 bytes, hex).
func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// hashSecret is what the registry keeps of a secret: the hex of
// protocol.ProfileKey, the key of the profile's proofs.
func hashSecret(secret string) string {
	return hex.EncodeToString(protocol.ProfileKey(secret))
}

// ForgetStored removes a profile from the registry file at path while no
// daemon runs (the caller holds the daemon lock). name matches as in tool
// calls.
func ForgetStored(path, name string) (Profile, error) {
	b, err := New(Config{StorePath: path})
	if err != nil {
		return Profile{}, err
	}
	return b.Forget(name)
}

// ListStored reads the registry file at path while no daemon runs.
func ListStored(path string) ([]Profile, error) {
	b, err := New(Config{StorePath: path})
	if err != nil {
		return nil, err
	}
	return b.Profiles(), nil
}
