package launcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EnableDeveloperMode turns on Developer mode (chrome://extensions) in the
// Default profile of the browser profile folder userDataDir, by setting
// extensions.ui.developer_mode in its Preferences file: Chromium reloads an
// unpacked extension (chrome.runtime.reload(), which the extension calls
// after Tether updated its folder) only with Developer mode on; with it
// off, the extension is unloaded and not loaded back (seen with Debian's
// Chromium 14x). A profile without Preferences gets a file with only that
// setting; an existing file keeps every other setting and is replaced
// atomically; a file that is not a JSON object is left alone (an error).
// Call it before the browser starts on userDataDir: a running browser
// rewrites the file from memory.
func EnableDeveloperMode(userDataDir string) error {
	path := filepath.Join(userDataDir, "Default", "Preferences")
	prefs := map[string]any{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("turn on Developer mode: %w", err)
	default:
		if err := json.Unmarshal(b, &prefs); err != nil || prefs == nil {
			return fmt.Errorf("turn on Developer mode: %s is not a JSON object; left as it is", path)
		}
	}
	ext, _ := prefs["extensions"].(map[string]any)
	if ext == nil {
		ext = map[string]any{}
	}
	ui, _ := ext["ui"].(map[string]any)
	if ui == nil {
		ui = map[string]any{}
	}
	if on, _ := ui["developer_mode"].(bool); on {
		return nil
	}
	ui["developer_mode"] = true
	ext["ui"] = ui
	prefs["extensions"] = ext
	out, err := json.Marshal(prefs)
	if err != nil {
		return fmt.Errorf("turn on Developer mode: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("turn on Developer mode: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".Preferences-*")
	if err != nil {
		return fmt.Errorf("turn on Developer mode: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return fmt.Errorf("turn on Developer mode: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("turn on Developer mode: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("turn on Developer mode: %w", err)
	}
	return nil
}
