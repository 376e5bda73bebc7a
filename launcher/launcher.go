// Package launcher implements `tether browser`: it writes the embedded
// extension out to the config dir and launches an installed Chromium-family
// browser with it loaded, in a dedicated profile.
//
// Branded Google Chrome ignores --load-extension since version 137
// (developer.chrome.com/blog/extension-news-june-2025); there, load the
// unpacked extension once by hand at chrome://extensions.
package launcher

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
	"time"

	"github.com/tether-browser/tether/protocol"
)

// ExtensionConfig is written next to the extension's manifest as
// tether.json; the extension reads it at start.
type ExtensionConfig struct {
	// Port is the daemon's port on 127.0.0.1.
	Port int `json:"port"`
	// Label is the profile's default label.
	Label string `json:"label,omitempty"`
	// PairingKey is the daemon's pairing key (config.Paths.PairingKey, 64
	// hex digits): a new profile loaded from this folder pairs only with a
	// daemon that proves it holds the key (protocol.Challenge.PairingProof).
	// The file is written with mode 0600.
	PairingKey string `json:"pairingKey,omitempty"`
}

// MarkerName is the marker file Tether writes into every extension folder
// it writes (protocol.InstallMarker): the daemon rewrites a folder with a
// newer build only when it holds this file (daemon/extupdate).
const MarkerName = "tether-install.json"

// ConfigName is the extension's config file (ExtensionConfig).
const ConfigName = "tether.json"

// WriteExtension replaces dir with the files of ext plus tether.json and
// the marker (MarkerName, a new random id, dir made absolute). It
// writes into a sibling temporary folder first and swaps it in, so a
// half-written extension is never loaded.
func WriteExtension(ext fs.FS, dir string, cfg ExtensionConfig) error {
	b, _ := json.MarshalIndent(cfg, "", "  ")
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("write extension: %w", err)
	}
	return replaceExtension(ext, abs, append(b, '\n'), protocol.InstallMarker{Dir: abs, ID: newMarkerID()})
}

// UpdateExtension rewrites dir, a folder WriteExtension wrote, with the
// files of ext, keeping its tether.json and its marker's id: the same
// atomic swap as WriteExtension. tether.json is kept byte for byte, except
// that a pairingKey is added when it has none and pairingKey is not empty
// (a folder written before the key existed). It fails, touching nothing,
// when dir has no marker (ReadMarker) or no tether.json.
func UpdateExtension(ext fs.FS, dir, pairingKey string) error {
	m, err := ReadMarker(dir)
	if err != nil {
		return fmt.Errorf("update extension: %w", err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, ConfigName))
	if err != nil {
		return fmt.Errorf("update extension: %w", err)
	}
	var fields map[string]json.RawMessage
	if pairingKey != "" && json.Unmarshal(cfg, &fields) == nil && fields != nil && fields["pairingKey"] == nil {
		fields["pairingKey"], _ = json.Marshal(pairingKey)
		b, _ := json.MarshalIndent(fields, "", "  ")
		cfg = append(b, '\n')
	}
	return replaceExtension(ext, dir, cfg, m)
}

// ReadMarker reads dir's marker file; an error when it is missing or
// malformed, or names another folder than dir.
func ReadMarker(dir string) (protocol.InstallMarker, error) {
	var m protocol.InstallMarker
	b, err := os.ReadFile(filepath.Join(dir, MarkerName))
	if err != nil {
		return m, fmt.Errorf("%s has no %s: Tether did not write it", dir, MarkerName)
	}
	if err := json.Unmarshal(b, &m); err != nil || m.ID == "" {
		return m, fmt.Errorf("%s: %s is not a Tether marker", dir, MarkerName)
	}
	if filepath.Clean(m.Dir) != filepath.Clean(dir) {
		return m, fmt.Errorf("%s: its %s names another folder (%s): it was copied, not written there by Tether", dir, MarkerName, m.Dir)
	}
	return m, nil
}

func newMarkerID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func replaceExtension(ext fs.FS, dir string, cfg []byte, marker protocol.InstallMarker) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("write extension: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".extension-*")
	if err != nil {
		return fmt.Errorf("write extension: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(tmp, ext); err != nil {
		return fmt.Errorf("write extension: %w", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "manifest.json")); err != nil {
		return fmt.Errorf("the embedded extension has no manifest.json (was it built? run `make`): %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, ConfigName), cfg, 0o600); err != nil {
		return fmt.Errorf("write extension: %w", err)
	}
	mb, _ := json.MarshalIndent(marker, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, MarkerName), append(mb, '\n'), 0o644); err != nil {
		return fmt.Errorf("write extension: %w", err)
	}
	old := dir + ".old"
	_ = os.RemoveAll(old)
	if err := os.Rename(dir, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write extension: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Put the previous folder back rather than leave none.
		_ = os.Rename(old, dir)
		return fmt.Errorf("write extension: %w", err)
	}
	_ = os.RemoveAll(old)
	return nil
}

// Candidates lists browser executables to try, in order, for this OS.
func Candidates() []string {
	switch runtime.GOOS {
	case "darwin":
		return []string{
			"/Applications/Chromium.app/Contents/MacOS/Chromium",
			"/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
			"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
			"/Applications/Brave Browser.app/Contents/MacOS/Brave Browser",
			"/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge",
		}
	case "windows":
		var out []string
		for _, env := range []string{"LOCALAPPDATA", "PROGRAMFILES", "PROGRAMFILES(X86)"} {
			if base := os.Getenv(env); base != "" {
				out = append(out,
					filepath.Join(base, "Chromium", "Application", "chrome.exe"),
					filepath.Join(base, "Google", "Chrome", "Application", "chrome.exe"),
					filepath.Join(base, "Microsoft", "Edge", "Application", "msedge.exe"),
				)
			}
		}
		return out
	default:
		return []string{"chromium", "chromium-browser", "google-chrome-for-testing", "google-chrome", "google-chrome-stable", "brave-browser", "microsoft-edge"}
	}
}

// FindBrowser returns the first installed candidate.
func FindBrowser() (string, error) {
	for _, c := range Candidates() {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium-family browser found (tried %v); install Chromium or pass --browser PATH", Candidates())
}

// Options configures Launch.
type Options struct {
	// Browser is the executable; empty finds one.
	Browser string
	// ExtensionDir holds the unpacked extension to load.
	ExtensionDir string
	// UserDataDir is the dedicated browser profile folder.
	UserDataDir string
	// Headless runs without a window (--headless=new).
	Headless bool
	// URL is opened at start (default about:blank).
	URL string
	// ExtraArgs are appended to the command line.
	ExtraArgs []string
	Logger    *slog.Logger
	// LogFile receives everything the browser prints (rewritten at each
	// launch, at most MaxBrowserLog bytes); only the lines Visible keeps
	// reach Terminal. Empty: everything goes to Terminal.
	LogFile string
	// Terminal is where the browser's visible lines go (default os.Stderr).
	Terminal io.Writer
}

// QuietFlags keep a browser from calling home: Chromium's background
// networking, component updates and sync, and its first-run UI.
var QuietFlags = []string{
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--no-first-run",
	"--no-default-browser-check",
}

// Args returns the browser's command-line arguments for opts.
func Args(opts Options) []string {
	args := []string{
		"--user-data-dir=" + opts.UserDataDir,
		"--load-extension=" + opts.ExtensionDir,
		"--disable-extensions-except=" + opts.ExtensionDir,
	}
	args = append(args, QuietFlags...)
	if opts.Headless {
		args = append(args, "--headless=new", "--disable-gpu")
	}
	if runtime.GOOS == "linux" && os.Geteuid() == 0 && !slices.Contains(opts.ExtraArgs, "--no-sandbox") {
		// Chromium refuses to start as root with its sandbox on.
		args = append(args, "--no-sandbox")
	}
	args = append(args, opts.ExtraArgs...)
	url := opts.URL
	if url == "" {
		url = "about:blank"
	}
	return append(args, url)
}

// Launch starts the browser and waits until it exits or ctx ends (which
// stops it).
func Launch(ctx context.Context, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if opts.Browser == "" {
		b, err := FindBrowser()
		if err != nil {
			return err
		}
		opts.Browser = b
	}
	if err := NeedsDisplay(runtime.GOOS, opts.Headless, os.Getenv); err != nil {
		return err
	}
	if err := os.MkdirAll(opts.UserDataDir, 0o700); err != nil {
		return fmt.Errorf("create browser profile dir: %w", err)
	}
	// So that the extension can reload itself after Tether updated it.
	if err := EnableDeveloperMode(opts.UserDataDir); err != nil {
		log.Warn("the extension cannot update itself in this browser profile", "err", err)
	}
	args := Args(opts)
	log.Info("launching browser", "browser", opts.Browser, "args", args)
	cmd := exec.CommandContext(ctx, opts.Browser, args...)
	// On cancel, ask the browser to quit (it then ends its own child
	// processes and saves its profile); kill it if it has not after 5 s.
	cmd.Cancel = func() error {
		if runtime.GOOS == "windows" {
			return cmd.Process.Kill()
		}
		return cmd.Process.Signal(syscall.SIGTERM)
	}
	cmd.WaitDelay = 5 * time.Second
	term := opts.Terminal
	if term == nil {
		term = os.Stderr
	}
	// One writer for both streams: exec then copies them in one goroutine.
	out := &browserOutput{term: term}
	cmd.Stdout, cmd.Stderr = term, term
	if opts.LogFile != "" {
		f, err := openBrowserLog(opts.LogFile)
		if err != nil {
			return fmt.Errorf("create the browser's log file: %w", err)
		}
		defer f.Close()
		out.file = f
		cmd.Stdout, cmd.Stderr = out, out
		log.Info("the browser's own messages go to its log file; those that may matter show here too", "file", opts.LogFile)
	}
	err := cmd.Run()
	out.flush()
	if err != nil && ctx.Err() == nil {
		if opts.LogFile != "" {
			return fmt.Errorf("browser %s: %w; its last lines (all in %s):\n%s", opts.Browser, err, opts.LogFile, out.lastLines())
		}
		return fmt.Errorf("browser %s: %w", opts.Browser, err)
	}
	return nil
}

// NeedsDisplay returns an error saying what to do when a browser with a
// window is asked for on a Linux or BSD session without an X11 or Wayland
// display (Chromium would fail with "Missing X server or $DISPLAY"); nil
// when headless, on macOS and Windows, or when a display is named.
func NeedsDisplay(goos string, headless bool, getenv func(string) string) error {
	if headless || goos == "darwin" || goos == "windows" {
		return nil
	}
	if getenv("DISPLAY") != "" || getenv("WAYLAND_DISPLAY") != "" {
		return nil
	}
	return fmt.Errorf("no display to open a browser window on (neither DISPLAY nor WAYLAND_DISPLAY is set): pass --headless to run it without a window, or run it from your desktop session")
}
