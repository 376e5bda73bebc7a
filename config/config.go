// Package config resolves every file path Tether uses and owns the small
// files in its config dir: the MCP bearer token, the control token, the daemon lock and the
// daemon record that tells `tether mcp` where the running daemon listens.
//
// All of Tether's state lives in one folder, the config dir:
// $TETHER_CONFIG_DIR if set, else os.UserConfigDir()/tether
// (~/.config/tether on Linux, ~/Library/Application Support/tether on macOS,
// %AppData%\tether on Windows).
package config

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// EnvConfigDir overrides the config dir.
const EnvConfigDir = "TETHER_CONFIG_DIR"

// EnvPort overrides DefaultPort for `tether serve`.
const EnvPort = "TETHER_PORT"

// DefaultPort is the loopback TCP port the daemon listens on unless --port or
// $TETHER_PORT says otherwise. It avoids 9222 (Chrome DevTools) and the ports
// peer bridges use (9009, 12306, 19988).
const DefaultPort = 47615

// PortFromEnv is the port a daemon started now takes without --port:
// $TETHER_PORT (EnvPort), else DefaultPort. An error names a value that is
// not a port number (0, "pick a free port", is one).
func PortFromEnv() (int, error) {
	v := os.Getenv(EnvPort)
	if v == "" {
		return DefaultPort, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 65535 {
		return 0, fmt.Errorf("%s=%q is not a port number", EnvPort, v)
	}
	return n, nil
}

// Paths names every file and folder in one config dir.
type Paths struct {
	// Dir is the config dir itself.
	Dir string
}

// Resolve returns the config dir from $TETHER_CONFIG_DIR, else
// os.UserConfigDir()/tether. It does not create it; see Paths.Ensure.
func Resolve() (Paths, error) {
	if d := os.Getenv(EnvConfigDir); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return Paths{}, fmt.Errorf("resolve %s=%q: %w", EnvConfigDir, d, err)
		}
		return Paths{Dir: abs}, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return Paths{}, fmt.Errorf("find the user config dir (set %s to choose one): %w", EnvConfigDir, err)
	}
	return Paths{Dir: filepath.Join(base, "tether")}, nil
}

// IsDefault reports whether p is the config dir Tether would pick without
// $TETHER_CONFIG_DIR.
func (p Paths) IsDefault() bool {
	base, err := os.UserConfigDir()
	return err == nil && filepath.Clean(p.Dir) == filepath.Join(base, "tether")
}

// Ensure creates the config dir with mode 0700 if it does not exist.
func (p Paths) Ensure() error {
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return fmt.Errorf("create config dir %s: %w", p.Dir, err)
	}
	return nil
}

// Token is the file holding the MCP bearer token (mode 0600).
func (p Paths) Token() string { return filepath.Join(p.Dir, "token") }

// Lock is the daemon's lock file; holding it means being the daemon.
func (p Paths) Lock() string { return filepath.Join(p.Dir, "daemon.lock") }

// WindowLock is the window process's lock file; holding it means being
// the one window of this config dir.
func (p Paths) WindowLock() string { return filepath.Join(p.Dir, "window.lock") }

// Daemon is the JSON record of the running daemon (see DaemonRecord).
func (p Paths) Daemon() string { return filepath.Join(p.Dir, "daemon.json") }

// Profiles is the registry of paired browser profiles (ids, labels, slugs,
// secret hashes, last seen).
func (p Paths) Profiles() string { return filepath.Join(p.Dir, "profiles.json") }

// Timeline is the SQLite database of every tool call (mode 0600).
func (p Paths) Timeline() string { return filepath.Join(p.Dir, "timeline.db") }

// Policy is the guardrails file: the user's rules and the pause switch.
func (p Paths) Policy() string { return filepath.Join(p.Dir, "policy.json") }

// LogFile is the daemon's log file; its rotated copies are
// tether-<time>.log next to it, and each `tether mcp` bridge writes
// mcp-bridge-<pid>.log (package logs keeps them all within its cap).
func (p Paths) LogFile() string { return filepath.Join(p.Dir, "tether.log") }

// Extension is the folder `tether browser` writes the embedded extension to
// for the browser profile in userDataDir. Each profile gets its own copy,
// because the copy carries that profile's label and the daemon's port
// (tether.json): one shared copy would relabel every profile launched before.
func (p Paths) Extension(userDataDir string) string {
	abs, err := filepath.Abs(userDataDir)
	if err != nil {
		abs = userDataDir
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(p.Dir, "extension", hex.EncodeToString(sum[:6]))
}

// UnpackedExtension is the folder the window writes the extension to for
// the user's own Chrome ("Load unpacked" in chrome://extensions).
func (p Paths) UnpackedExtension() string { return filepath.Join(p.Dir, "chrome-extension") }

// IsExtensionFolder reports whether dir (absolute) is one of the folders
// Tether writes the extension to: UnpackedExtension, or one of `tether
// browser`'s copies (Extension). The daemon rewrites only these with a
// newer build (extupdate).
func (p Paths) IsExtensionFolder(dir string) bool {
	base, err := filepath.Abs(p.Dir)
	if err != nil || !filepath.IsAbs(dir) {
		return false
	}
	dir = filepath.Clean(dir)
	if dir == filepath.Join(base, "chrome-extension") {
		return true
	}
	name := filepath.Base(dir)
	if filepath.Dir(dir) != filepath.Join(base, "extension") || len(name) != 12 {
		return false
	}
	_, err = hex.DecodeString(name)
	return err == nil
}

// BrowserProfile is the default --user-data-dir of `tether browser`.
func (p Paths) BrowserProfile() string { return filepath.Join(p.Dir, "browser-profiles", "default") }

// tokenBytes is the token's entropy: 32 random bytes, hex encoded.
const tokenBytes = 32

// LoadOrCreateToken returns the MCP bearer token, creating it (mode 0600) on
// first use. A token file that is empty or not hex is an error naming the file
// and the fix, never silently replaced.
func (p Paths) LoadOrCreateToken() (string, error) {
	return p.loadOrCreateSecret(p.Token(), "token")
}

// ControlToken is the file holding the control token (mode 0600): the
// bearer token of the local API (/api/*, package apitype), which the
// CLI (`tether profiles`, `pause`, `resume`, `token rotate`) and the
// daemon's own tools use. It is separate from the MCP token so that an MCP
// client, which holds the MCP token, cannot approve profiles or held calls
// or resume a paused Tether (issue 12, "Control actions").
func (p Paths) ControlToken() string { return filepath.Join(p.Dir, "control-token") }

// LoadOrCreateControlToken returns the control token, creating it (mode
// 0600, 32 random bytes hex encoded) on first use. A file that is empty or
// not hex is an error naming the file and the fix, never silently replaced.
func (p Paths) LoadOrCreateControlToken() (string, error) {
	return p.loadOrCreateSecret(p.ControlToken(), "control token")
}

// ReadControlToken returns the control token without creating one.
func (p Paths) ReadControlToken() (string, error) {
	b, err := os.ReadFile(p.ControlToken())
	if err != nil {
		return "", fmt.Errorf("read control token %s (the daemon creates it when it starts; is a daemon of this version running?): %w", p.ControlToken(), err)
	}
	return strings.TrimSpace(string(b)), nil
}

// PairingKey is the file holding the daemon's pairing key (mode 0600,
// 32 random bytes hex encoded): Tether writes it into tether.json in every
// extension folder it writes, and proves with it to a new profile loaded
// from such a folder that it is the Tether that wrote it
// (protocol.Challenge.PairingProof).
func (p Paths) PairingKey() string { return filepath.Join(p.Dir, "pairing-key") }

// LoadOrCreatePairingKey returns the pairing key as 64 hex digits,
// creating it on first use like the tokens. A file that does not hold 64
// lowercase hex digits is an error naming the file and the fix, never
// silently replaced.
func (p Paths) LoadOrCreatePairingKey() (string, error) {
	key, err := p.loadOrCreateSecret(p.PairingKey(), "pairing key")
	if err != nil {
		return "", err
	}
	if len(key) != 2*tokenBytes || strings.ToLower(key) != key {
		return "", fmt.Errorf("pairing key file %s is not 64 lowercase hex digits; delete it to make a new one, then write the extension folder again (the window's Extension page, or `tether browser`)", p.PairingKey())
	}
	return key, nil
}

// ReadPairingKey returns the pairing key's 32 bytes without creating it:
// a client checks the daemon's proofs with it (localclient.Probe).
func (p Paths) ReadPairingKey() ([]byte, error) {
	b, err := os.ReadFile(p.PairingKey())
	if err != nil {
		return nil, fmt.Errorf("read the pairing key %s (the daemon creates it when it starts): %w", p.PairingKey(), err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != tokenBytes {
		return nil, fmt.Errorf("pairing key file %s is not 64 hex digits; delete it to make a new one", p.PairingKey())
	}
	return key, nil
}

// loadOrCreateSecret reads the hex secret in path, creating it (mode 0600,
// O_EXCL so that two processes agree on one) when it does not exist. what
// names the secret in errors.
func (p Paths) loadOrCreateSecret(path, what string) (string, error) {
	return p.loadOrCreateSecretTry(path, what, true)
}

func (p Paths) loadOrCreateSecretTry(path, what string, again bool) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if _, herr := hex.DecodeString(tok); herr != nil || len(tok) < 32 {
			return "", fmt.Errorf("%s file %s is not a Tether token; delete it to make a new one", what, path)
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read %s: %w%s", what, err, PermissionHint(err))
	}
	if err := p.Ensure(); err != nil {
		return "", err
	}
	tok, err := newToken()
	if err != nil {
		return "", err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			// It reads as missing and cannot be created: a symbolic link
			// to a file that is not there.
			target, _ := os.Readlink(path)
			return "", fmt.Errorf("%s file %s is a symbolic link to %s, which does not exist; remove the link (Tether then makes a new %s) or restore what it points to", what, path, target, what)
		}
		if again {
			// Another process created it between our read and create: use theirs.
			return p.loadOrCreateSecretTry(path, what, false)
		}
		return "", fmt.Errorf("create %s: %s exists but cannot be read: %w", what, path, err)
	}
	if err != nil {
		return "", fmt.Errorf("create %s: %w", what, err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("write %s: %w", what, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("write %s: %w", what, err)
	}
	return tok, nil
}

// PermissionHint is what to do about err when it is a permission error
// (", and ..." to append to its message), else "": the config dir and its
// files belong to the user who runs Tether, with modes 0700 and 0600.
func PermissionHint(err error) string {
	if !errors.Is(err, fs.ErrPermission) {
		return ""
	}
	return "; the config dir and its files must belong to the user running Tether (mode 0700 for the dir, 0600 for files): fix the owner (chown) or the mode (chmod), or run Tether as that user"
}

// newToken returns tokenBytes random bytes, hex encoded.
func newToken() (string, error) {
	raw := make([]byte, tokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate token: %w", err)
	}
	return hex.EncodeToString(raw), nil
}

// RotateToken replaces the token file with a new random token (mode 0600,
// written atomically) and returns it. A running daemon keeps the token it
// read at start until it restarts.
func (p Paths) RotateToken() (string, error) { return p.rotate(p.Token()) }

// RotateControlToken replaces the control-token file the same way; the
// local API's clients (localclient) read it again on their next 401.
func (p Paths) RotateControlToken() (string, error) { return p.rotate(p.ControlToken()) }

func (p Paths) rotate(path string) (string, error) {
	if err := p.Ensure(); err != nil {
		return "", err
	}
	tok, err := newToken()
	if err != nil {
		return "", err
	}
	if err := WriteFileAtomic(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", err
	}
	return tok, nil
}

// ReadToken returns the token without creating one.
func (p Paths) ReadToken() (string, error) {
	b, err := os.ReadFile(p.Token())
	if err != nil {
		return "", fmt.Errorf("read token %s (is the daemon set up? run `tether serve` once): %w", p.Token(), err)
	}
	return strings.TrimSpace(string(b)), nil
}

// DaemonRecord is what the running daemon writes to Paths.Daemon after it has
// bound its port, and removes when it stops.
type DaemonRecord struct {
	// PID of the daemon process.
	PID int `json:"pid"`
	// Port is the TCP port actually bound on 127.0.0.1.
	Port int `json:"port"`
	// Version is the daemon's build version.
	Version string `json:"version"`
	// UI is true when the daemon runs with its tray and window.
	UI bool `json:"ui"`
	// Flags are the flags `tether serve` ran with, --port excepted (e.g.
	// ["--enable-tools=browser_evaluate"]), so that `tether token rotate`
	// starts it again the way it ran.
	Flags []string `json:"flags,omitempty"`
	// Proves is true when the daemon answers /health?nonce= with a proof
	// (protocol 4): a client then never trusts an answer without one on
	// this record's port, even while some daemon holds the lock
	// (localclient.Probe).
	Proves bool `json:"proves,omitempty"`
}

// URL returns the daemon's base URL, e.g. http://127.0.0.1:47615.
func (r DaemonRecord) URL() string { return "http://127.0.0.1:" + strconv.Itoa(r.Port) }

// WriteDaemonRecord atomically replaces the daemon record.
func (p Paths) WriteDaemonRecord(r DaemonRecord) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(p.Daemon(), append(b, '\n'), 0o600)
}

// ReadDaemonRecord reads the daemon record; os.ErrNotExist (wrapped) when no
// daemon has recorded itself.
func (p Paths) ReadDaemonRecord() (DaemonRecord, error) {
	var r DaemonRecord
	b, err := os.ReadFile(p.Daemon())
	if err != nil {
		return r, fmt.Errorf("read daemon record: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("daemon record %s is corrupt (it is rewritten when the daemon starts): %w", p.Daemon(), err)
	}
	return r, nil
}

// RemoveDaemonRecord deletes the daemon record if it still names pid.
func (p Paths) RemoveDaemonRecord(pid int) {
	if r, err := p.ReadDaemonRecord(); err == nil && r.PID == pid {
		_ = os.Remove(p.Daemon())
	}
}

// QuitMarker is the file that says the user stopped Tether (tray Quit, `tether stop`): an
// AI app's running `tether mcp` then does not start the daemon again on its
// next call. Any daemon start removes it.
func (p Paths) QuitMarker() string { return filepath.Join(p.Dir, "quit") }

// MarkQuit records that the user quit Tether.
func (p Paths) MarkQuit() error {
	return WriteFileAtomic(p.QuitMarker(), []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o600)
}

// QuitByUser reports whether the user quit Tether since the last daemon
// start.
func (p Paths) QuitByUser() bool {
	_, err := os.Stat(p.QuitMarker())
	return err == nil
}

// WriteFileAtomic writes data to a temporary file in path's folder, fsyncs it
// and renames it over path, so readers see the old or the new file, never a
// torn one. When path is a symbolic link (a config kept in a dotfiles
// repository), the file it points to is replaced and the link stays; a link
// to a missing file is an error, never replaced by a file.
func WriteFileAtomic(path string, data []byte, mode os.FileMode) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			target, _ := os.Readlink(path)
			return fmt.Errorf("write %s: it is a symbolic link to %s, which cannot be reached (%w); restore its target or remove the link", path, target, err)
		}
		path = real
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
