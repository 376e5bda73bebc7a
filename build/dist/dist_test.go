package main

import (
	"archive/zip"
	"bytes"
	"context"
	"debug/pe"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
	t.Run("install", func(t *testing.T) { testInstall(t, deb, version) })
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
	cmd.Env = append(os.Environ(), "TETHER_CONFIG_DIR="+t.TempDir())
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
