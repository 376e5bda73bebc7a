//go:build linux

package main

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/pe"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/broker"
	"github.com/tether-browser/tether/test/desktop"
	"github.com/tether-browser/tether/test/e2e"
)

// TestDist checks the artefacts `make dist` wrote (`make test-dist` runs it
// with TETHER_DIST set to dist/ and TETHER_VERSION to the version; CI does).
// Without TETHER_DIST it is skipped.
func TestDist(t *testing.T) {
	dir, version := os.Getenv("TETHER_DIST"), os.Getenv("TETHER_VERSION")
	if dir == "" || version == "" {
		t.Skip("TETHER_DIST and TETHER_VERSION unset: run `make test-dist`")
	}
	deb := filepath.Join(dir, "tether_"+version+"_amd64.deb")
	t.Run("deb", func(t *testing.T) {
		info := run(t, "dpkg-deb", "--info", deb)
		for _, want := range []string{"Package: tether", "Version: " + version, "Architecture: amd64", "libwebkit2gtk-4.1-0", "libgtk-3-0", "libc6 ("} {
			if !strings.Contains(info, want) {
				t.Errorf("dpkg-deb --info lacks %q:\n%s", want, info)
			}
		}
		contents := run(t, "dpkg-deb", "--contents", deb)
		for _, want := range []string{
			"./usr/bin/tether\n", "./usr/bin/tether-desktop\n",
			"./usr/share/applications/tether.desktop\n",
			"./usr/share/icons/hicolor/64x64/apps/tether.png\n", "./usr/share/icons/hicolor/scalable/apps/tether.svg\n",
			"./usr/share/metainfo/tether.metainfo.xml\n",
			"./usr/share/doc/tether/copyright\n", "./usr/share/doc/tether/changelog.gz\n",
			"./usr/share/man/man1/tether.1.gz\n",
		} {
			if !strings.Contains(contents, want) {
				t.Errorf("dpkg-deb --contents lacks %s", strings.TrimSpace(want))
			}
		}
		if _, err := exec.LookPath("lintian"); err != nil {
			t.Fatal("lintian is not installed (make deps-test installs it)")
		}
		// No tag of any severity: the package has no override.
		out, err := exec.Command("lintian", "--fail-on", "error,warning,info", deb).CombinedOutput()
		if lines := lintianTags(string(out)); err != nil || len(lines) > 0 {
			t.Errorf("lintian: %v\n%s", err, out)
		}
	})
	t.Run("exe", func(t *testing.T) {
		exe := filepath.Join(dir, "tether-"+version+"-setup.exe")
		f, err := pe.Open(exe)
		if err != nil {
			t.Fatalf("%s is not a PE executable: %v", exe, err)
		}
		defer f.Close()
		if f.FileHeader.Machine != pe.IMAGE_FILE_MACHINE_I386 && f.FileHeader.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
			t.Errorf("machine %#x", f.FileHeader.Machine)
		}
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte("Nullsoft")) {
			t.Error("no NSIS header in the installer")
		}
		// makensis ran with -WX (a warning fails it) and -V2 (warnings and errors only).
		log, err := os.ReadFile(filepath.Join(dir, "makensis.log"))
		if err != nil {
			t.Fatal(err)
		}
		if s := strings.TrimSpace(string(log)); s != "" {
			t.Errorf("makensis printed:\n%s", s)
		}
	})
	t.Run("zip", func(t *testing.T) {
		zr, err := zip.OpenReader(filepath.Join(dir, "tether-extension-"+version+".zip"))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		names := map[string]bool{}
		var manifest map[string]any
		for _, f := range zr.File {
			names[f.Name] = true
			if f.Name != "manifest.json" {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(rc)
			rc.Close()
			if err := json.Unmarshal(b, &manifest); err != nil {
				t.Fatalf("manifest.json: %v", err)
			}
		}
		for _, want := range []string{"manifest.json", "background.js", "offscreen.html", "offscreen.js", "content.js", "popup.html", "popup.js"} {
			if !names[want] {
				t.Errorf("zip lacks %s", want)
			}
		}
		if _, ok := manifest["key"]; ok {
			t.Error(`the zip's manifest has a "key"`)
		}
		if manifest["version"] != version || manifest["manifest_version"] != float64(3) {
			t.Errorf("manifest version %v, manifest_version %v", manifest["version"], manifest["manifest_version"])
		}
	})
	t.Run("zip in Chromium", func(t *testing.T) { testZipInChromium(t, filepath.Join(dir, "tether-extension-"+version+".zip")) })
	t.Run("install", func(t *testing.T) { testInstall(t, deb, version) })
}

// testZipInChromium unpacks the Web Store zip and loads it in real headless
// Chromium, as a developer loads an unpacked extension. Without the
// manifest's "key" Chromium gives it another id than the built-in one (for
// an unpacked extension, the id derives from its folder's path), so the
// daemon refuses its socket (the exact-origin gate) until the id is allowed:
// with `tether serve --allow-extension ID` it connects and pairs with
// `tether profiles approve CODE`, and with settings.json's extensionIds
// instead it connects again, paired.
//
// The store's copy dials the default port; this one is pointed at the test
// daemon's port by the tether.json that `tether browser` writes into its own
// copies (the only file added to the zip's).
func testZipInChromium(t *testing.T, zipPath string) {
	e2e.RequireChromium(t)
	bin := e2e.Binary(t)
	extDir := filepath.Join(t.TempDir(), "tether-extension")
	unzip(t, zipPath, extDir)
	d := e2e.StartDaemon(t, bin)
	if err := os.WriteFile(filepath.Join(extDir, "tether.json"), fmt.Appendf(nil, `{"port": %d}`+"\n", d.Record.Port), 0o644); err != nil {
		t.Fatal(err)
	}
	e2e.StartChromiumWithExtension(t, extDir)
	line, _, err := d.Log.WaitFor(0, time.Minute, "extension socket refused: origin not allowed", "origin=chrome-extension://")
	if err != nil {
		t.Fatalf("the daemon never saw the zip's extension: %v", err)
	}
	m := regexp.MustCompile(`origin=chrome-extension://([a-p]{32})\b`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no extension id in %q", line)
	}
	id := m[1]
	if id == broker.DefaultExtensionID {
		t.Fatalf("the zip's extension has the built-in id %s: its manifest still has a key", id)
	}
	if want := unpackedID(extDir); id != want {
		t.Errorf("the refused origin's id is %s, want %s (the id Chromium derives from %s)", id, want, extDir)
	}
	if strings.Contains(d.Log.String(), "waiting for approval") || strings.Contains(d.Log.String(), "extension connected") {
		t.Fatalf("a daemon that does not allow %s admitted it:\n%s", id, d.Log.String())
	}

	// Allowed with --allow-extension: it connects and is paired.
	if err := d.Stop(); err != nil {
		t.Logf("daemon exit: %v", err)
	}
	d = e2e.StartDaemonAt(t, bin, d.Paths.Dir, d.Record.Port, "--allow-extension", id)
	line, _, err = d.Log.WaitFor(0, time.Minute, "new browser profile waiting for approval")
	if err != nil {
		t.Fatalf("with --allow-extension %s the extension never asked to pair: %v", id, err)
	}
	code := regexp.MustCompile(`code=([` + broker.CodeAlphabet + `]{6})`).FindStringSubmatch(line)
	if code == nil {
		t.Fatalf("no pairing code in %q", line)
	}
	if out := tetherCLI(t, d, "profiles", "approve", code[1]); !strings.Contains(out, "approved") {
		t.Fatalf("tether profiles approve %s: %s", code[1], out)
	}
	if _, _, err := d.Log.WaitFor(0, 30*time.Second, "browser profile approved", "code="+code[1]); err != nil {
		t.Fatal(err)
	}
	connected := regexp.MustCompile(`(?m)^\S+\s.*\bconnected\b`)
	if out := tetherCLI(t, d, "profiles"); !connected.MatchString(out) {
		t.Fatalf("tether profiles does not list the approved extension as connected:\n%s", out)
	}

	// Allowed with settings.json's extensionIds instead: it connects again,
	// paired (no new approval).
	if err := d.Stop(); err != nil {
		t.Logf("daemon exit: %v", err)
	}
	if err := os.WriteFile(d.Paths.SettingsFile(), fmt.Appendf(nil, `{"extensionIds": [%q]}`+"\n", id), 0o600); err != nil {
		t.Fatal(err)
	}
	d = e2e.StartDaemonAt(t, bin, d.Paths.Dir, d.Record.Port)
	if _, _, err := d.Log.WaitFor(0, time.Minute, "extension connected"); err != nil {
		t.Fatalf("with settings.json's extensionIds the paired extension did not connect again: %v", err)
	}
	if out := tetherCLI(t, d, "profiles"); strings.Contains(out, "waiting for approval") || !connected.MatchString(out) {
		t.Errorf("the paired extension is not connected, or asks for approval again:\n%s", out)
	}
}

// unpackedID is the id Chromium gives an unpacked extension without a
// manifest key: the first 128 bits of the SHA-256 of its folder's absolute
// path, each hex digit mapped to a letter a–p (Chromium's
// extensions/common/extension_id.cc, GenerateIdForPath).
func unpackedID(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	var b strings.Builder
	for _, c := range hex.EncodeToString(sum[:16]) {
		b.WriteByte("abcdefghijklmnop"[strings.IndexRune("0123456789abcdef", c)])
	}
	return b.String()
}

// unzip extracts the zip at path into dir.
func unzip(t *testing.T, path, dir string) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if err := os.CopyFS(dir, zr); err != nil {
		t.Fatalf("unzip %s: %v", path, err)
	}
}

// tetherCLI runs `tether args…` against daemon d and returns its output.
func tetherCLI(t *testing.T, d *e2e.Daemon, args ...string) string {
	t.Helper()
	cmd := exec.Command(d.Bin, args...)
	cmd.Env = d.Env()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tether %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// testInstall installs the .deb with apt-get (root only: elsewhere it is
// skipped), runs the installed tether, then removes the package and checks
// that none of its files are left in /usr.
func testInstall(t *testing.T, deb, version string) {
	if os.Getuid() != 0 {
		t.Skip("installing the .deb needs root (CI is root)")
	}
	if out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", "tether").Output(); err == nil && strings.Contains(string(out), "installed") {
		t.Skip("a tether package is already installed here: not touching it")
	}
	abs, err := filepath.Abs(deb)
	if err != nil {
		t.Fatal(err)
	}
	installed := false
	t.Cleanup(func() {
		if installed {
			exec.Command("apt-get", "remove", "-y", "-qq", "tether").Run()
		}
	})
	env := append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd := exec.Command("apt-get", "install", "-y", "-qq", "--no-install-recommends", abs)
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("apt-get install: %v\n%s", err, out)
	}
	installed = true
	files := strings.Fields(run(t, "dpkg-query", "-L", "tether"))

	if out := run(t, "/usr/bin/tether", "version"); !strings.HasPrefix(out, version+"+") {
		t.Errorf("tether version: %q, want %s+<build id>", out, version)
	}
	serveSmoke(t)
	traySmoke(t)

	cmd = exec.Command("apt-get", "remove", "-y", "-qq", "tether")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("apt-get remove: %v\n%s", err, out)
	}
	installed = false
	for _, f := range files {
		if fi, err := os.Lstat(f); err == nil && !fi.IsDir() && strings.HasPrefix(f, "/usr/") {
			t.Errorf("%s is left after apt-get remove", f)
		}
	}
}

// serveSmoke runs the installed `tether serve` on a free port with a
// temporary config dir until /health answers, then stops it.
func serveSmoke(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/tether", "serve", "--port", fmt.Sprint(port))
	cmd.Env = throwawayEnv(t, t.TempDir(), t.TempDir(), "", "")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	url := fmt.Sprintf("http://127.0.0.1:%d/health", port)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("tether serve: /health never answered 200 (%v)\n%s", err, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// traySmoke starts the installed bare `tether` (the daemon, its tray and
// its window, which execs /usr/bin/tether-desktop) on a virtual X display
// and a private D-Bus session bus where a tray host
// (org.kde.StatusNotifierWatcher) runs, and checks that the tray registers
// its item with the host and that the item is on the bus with its menu and
// title. Then it stops tether.
func traySmoke(t *testing.T) {
	if _, err := exec.LookPath("dbus-launch"); err != nil {
		t.Fatal("dbus-launch is not installed (make deps-test installs dbus-x11)")
	}
	display := desktop.Xvfb(t)
	bus := desktop.SessionBus(t)
	watcher := desktop.StartWatcher(t, bus)
	home, cfgDir := t.TempDir(), t.TempDir()
	d := e2e.StartTether(t, "/usr/bin/tether", cfgDir, throwawayEnv(t, home, cfgDir, bus, display))
	if _, _, err := d.Log.WaitFor(0, desktop.Wait, "tray ready", "tray_item="); err != nil {
		t.Fatalf("the installed tether's tray: %v\n%s", err, d.Log.String())
	}
	select {
	case item := <-watcher.Registered:
		t.Logf("the tray registered %s with the host", item)
	case <-time.After(desktop.Wait):
		t.Fatalf("the installed tether's tray never registered its item with the host\n%s", d.Log.String())
	}
	tray := desktop.TrayOf(t, bus, d.PID())
	var title string
	if err := tray.Item.StoreProperty(desktop.ItemIface+".Title", &title); err != nil || title != "Tether" {
		t.Errorf("the tray item's Title: %q, %v", title, err)
	}
	if err := d.Stop(); err != nil {
		t.Logf("tether exit: %v", err)
	}
}

// throwawayEnv is the environment for the installed tether: HOME, the XDG
// base directories and the config dir in temporary folders (so the user's
// config, login item and caches are not touched), the session bus bus and
// the X display display (both may be empty).
func throwawayEnv(t *testing.T, home, cfgDir, bus, display string) []string {
	var env []string
	for _, kv := range e2e.UserEnv(home, cfgDir, bus, display) {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR":
			continue
		case "DBUS_SESSION_BUS_ADDRESS":
			if bus == "" {
				continue
			}
		}
		env = append(env, kv)
	}
	runtimeDir := filepath.Join(home, "run")
	if err := os.Mkdir(runtimeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	return append(env, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local/share"),
		"XDG_CACHE_HOME="+filepath.Join(home, ".cache"), "XDG_STATE_HOME="+filepath.Join(home, ".local/state"), "XDG_RUNTIME_DIR="+runtimeDir)
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}

// lintianTags returns lintian's tag lines (E:, W:, I:, …).
func lintianTags(out string) []string {
	var tags []string
	for _, l := range strings.Split(out, "\n") {
		if len(l) > 2 && l[1] == ':' && strings.ContainsRune("EWIPXO", rune(l[0])) {
			tags = append(tags, l)
		}
	}
	return tags
}
