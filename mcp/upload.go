package mcp

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/tether-browser/tether/protocol"
)

// Upload paths (issue 12, "Upload paths"): browser_file_upload sends a local
// file to a web page, so the path the AI gives is resolved (symlinks
// followed) before the user is asked, the prompt and the timeline show the
// resolved path, and these are refused:
//   - Tether's own config dir (tokens, paired profiles' secrets, the
//     timeline), except its screenshots/ folder, so that a screenshot
//     Tether saved can be uploaded;
//   - the kernel's and devices' pseudo-files: /proc, /sys and /dev on Linux
//     and other Unix systems, /dev on macOS, and on Windows device paths
//     (\\.\…, \\?\…) and reserved device names (CON, NUL, COM1…);
//   - anything that is not a regular file (a folder, pipe, socket, device).
// Sizes are counted while reading, never taken from stat: /proc files
// report 0.

// deniedRoots are the pseudo-file trees refused on each OS (Unix paths;
// Windows is handled by windowsDevicePath).
func deniedRoots(goos string) []string {
	switch goos {
	case "windows":
		return nil
	case "darwin":
		return []string{"/dev"}
	default:
		return []string{"/proc", "/sys", "/dev"}
	}
}

// windowsDevicePath reports whether p names a Windows device rather than a
// file: the \\.\ and \\?\ prefixes (either slash), and the reserved names
// CON, PRN, AUX, NUL, COM0-9 and LPT0-9 as a path's last element, with or
// without an extension.
func windowsDevicePath(p string) bool {
	s := strings.ReplaceAll(p, "/", `\`)
	if strings.HasPrefix(s, `\\.\`) || strings.HasPrefix(s, `\\?\`) || strings.HasPrefix(s, `\??\`) {
		return true
	}
	base := s[strings.LastIndex(s, `\`)+1:]
	if i := strings.IndexByte(base, '.'); i >= 0 {
		base = base[:i]
	}
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	for _, dev := range []string{"COM", "LPT"} {
		if n, ok := strings.CutPrefix(base, dev); ok {
			switch n {
			case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
				return true
			}
		}
	}
	return false
}

// within reports whether p is dir or inside it (both clean and absolute);
// case-insensitive where the file system usually is (macOS, Windows).
func within(goos, p, dir string) bool {
	if dir == "" {
		return false
	}
	if goos == "darwin" || goos == "windows" {
		p, dir = strings.ToLower(p), strings.ToLower(dir)
	}
	if p == dir {
		return true
	}
	sep := "/"
	if goos == "windows" {
		sep = `\`
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, sep)+sep)
}

// realDir resolves dir's symlinks when it exists (the config dir may sit
// behind one, e.g. /tmp → /private/tmp on macOS), else cleans it.
func realDir(dir string) string {
	if dir == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// uploadRefusal says why the resolved path real may not be uploaded ("" if
// it may), on goos, given Tether's config and screenshots dirs (resolved).
func uploadRefusal(goos, given, real, configDir, screenshotDir string) string {
	if goos == "windows" && (windowsDevicePath(given) || windowsDevicePath(real)) {
		return fmt.Sprintf("%s is a Windows device path, not a file; pass the path of a regular file (C:\\…)", given)
	}
	for _, root := range deniedRoots(goos) {
		if within(goos, real, root) {
			return fmt.Sprintf("%s resolves to %s, under %s: the system's pseudo-files (processes, devices, kernel settings) are never uploaded; pass the path of a regular file the user means to upload", given, real, root)
		}
	}
	if within(goos, real, configDir) && !within(goos, real, screenshotDir) {
		return fmt.Sprintf("%s resolves to %s, inside Tether's own config dir (%s), which holds its tokens and paired browsers: only screenshots Tether saved (%s) may be uploaded from there; pass another file", given, real, configDir, screenshotDir)
	}
	return ""
}

// resolveUpload resolves one upload path and checks it: it returns the
// resolved path, or a message for the AI saying why not and what to do.
func (h *handlers) resolveUpload(p string) (string, string) {
	if runtime.GOOS == "windows" && windowsDevicePath(p) {
		return "", fmt.Sprintf("%s is a Windows device path, not a file; pass the path of a regular file (C:\\…)", p)
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Sprintf("path %q is not absolute; pass the full path", p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Sprintf("cannot read %s: %v; check the path (ask the user where the file is if unsure)", p, err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return "", fmt.Sprintf("cannot resolve %s: %v", p, err)
	}
	if msg := uploadRefusal(runtime.GOOS, p, real, realDir(h.cfg.ConfigDir), realDir(h.cfg.ScreenshotDir)); msg != "" {
		return "", msg
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", fmt.Sprintf("cannot read %s: %v", real, err)
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Sprintf("%s (resolved from %s) is not a regular file but a %s; pass the path of a file", real, p, fileKind(info.Mode()))
	}
	if name := configFileLinked(info, realDir(h.cfg.ConfigDir)); name != "" {
		return "", fmt.Sprintf("%s is the same file as %s in Tether's config dir (a hard link to it), which is never uploaded; pass another file", real, name)
	}
	if within(runtime.GOOS, real, realDir(h.cfg.ScreenshotDir)) && !screenshotName.MatchString(filepath.Base(real)) {
		return "", fmt.Sprintf("%s is in Tether's screenshots folder but is not a screenshot Tether saved (screenshot-….png or .jpg); pass another file", real)
	}
	return real, ""
}

// screenshotName matches the names of the screenshots Tether saves
// (mcp/screenshot.go), the only files of its config dir that may be uploaded.
var screenshotName = regexp.MustCompile(`^screenshot-[0-9A-Za-z_.-]+\.(png|jpg)$`)

// configFileLinked returns the name of the file directly in configDir that
// info is (a hard link to Tether's token, say, has another path but the
// same file), or "" when it is none of them.
func configFileLinked(info os.FileInfo, configDir string) string {
	entries, err := os.ReadDir(configDir)
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if fi, err := os.Stat(filepath.Join(configDir, e.Name())); err == nil && os.SameFile(info, fi) {
			return e.Name()
		}
	}
	return ""
}

// fileKind names a non-regular file's type for an error message.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "folder"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// prepareUpload is browser_file_upload's step before the guard: it
// resolves and checks every path and puts the resolved paths in args, so
// the approval prompt, the timeline and the tool see the file that will be
// read, not a symlink to it.
func (h *handlers) prepareUpload(args map[string]any) string {
	raw, _ := args["paths"].([]any)
	resolved := make([]any, 0, len(raw))
	for _, v := range raw {
		p, _ := v.(string)
		real, msg := h.resolveUpload(p)
		if msg != "" {
			return msg
		}
		resolved = append(resolved, real)
	}
	if len(raw) > 0 {
		args["paths"] = resolved
	}
	return ""
}

// readUploads reads local files for an upload, within MaxUploadBytes. The
// paths are resolved again and must not have changed since the check the
// user approved; sizes are counted while reading (stat says 0 for /proc).
func (h *handlers) readUploads(paths []string) ([]protocol.UploadFile, string) {
	if len(paths) == 0 {
		return nil, "paths is required: absolute paths of the files to upload"
	}
	var total int64
	var out []protocol.UploadFile
	for _, p := range paths {
		real, msg := h.resolveUpload(p)
		if msg != "" {
			return nil, msg
		}
		if real != p {
			return nil, fmt.Sprintf("%s now resolves to %s (a link changed since the call was checked); call browser_file_upload again", p, real)
		}
		b, msg := readBounded(real, h.cfg.MaxUploadBytes-total)
		if msg != "" {
			if msg == errTooBig {
				return nil, fmt.Sprintf("the files add up to more than %d MiB, the upload limit; upload fewer or smaller files", h.cfg.MaxUploadBytes>>20)
			}
			return nil, msg
		}
		total += int64(len(b))
		mt := mime.TypeByExtension(filepath.Ext(real))
		if mt == "" {
			mt = "application/octet-stream"
		}
		out = append(out, protocol.UploadFile{Name: filepath.Base(real), Mime: mt, DataBase64: base64.StdEncoding.EncodeToString(b)})
	}
	return out, ""
}

const errTooBig = "too big"

// readBounded reads the regular file path, at most limit bytes; more is
// errTooBig. The open file is checked to be regular too (the path could
// have been swapped for a pipe since the check).
func readBounded(path string, limit int64) ([]byte, string) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Sprintf("cannot read %s: %v", path, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Sprintf("cannot read %s: %v", path, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Sprintf("%s is not a regular file but a %s; pass the path of a file", path, fileKind(info.Mode()))
	}
	if limit < 0 {
		limit = 0
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Sprintf("cannot read %s: %v", path, err)
	}
	if int64(len(b)) > limit {
		return nil, errTooBig
	}
	return b, ""
}
