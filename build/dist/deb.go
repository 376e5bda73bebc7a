package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/goreleaser/chglog"
	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
)

const maintainer = "Tether maintainers <maintainers@users.noreply.a-seed-1f638933.example>"

// buildDeb writes out/tether_<version>_amd64.deb from bin's tether and
// tether-desktop and pkg's fixed files.
func buildDeb(version, bin, pkg, out string) (string, error) {
	binaries := []string{filepath.Join(bin, "tether"), filepath.Join(bin, "tether-desktop")}
	for _, b := range binaries {
		if _, err := os.Stat(b); err != nil {
			return "", err
		}
	}
	depends, err := shlibDepends(binaries)
	if err != nil {
		return "", err
	}
	stage, err := os.MkdirTemp("", "tether-deb-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage)
	changelog, err := debChangelog(filepath.Join(pkg, "changelog.yml"))
	if err != nil {
		return "", err
	}
	manpage, err := os.ReadFile(filepath.Join(pkg, "tether.1"))
	if err != nil {
		return "", err
	}
	for name, text := range map[string][]byte{
		"changelog.gz":        changelog,
		"tether.1.gz":         manpage,
		"tether-desktop.1.gz": []byte(".so man1/tether.1\n"),
	} {
		if err := writeGzip(filepath.Join(stage, name), text); err != nil {
			return "", err
		}
	}
	file := func(src, dst string, mode os.FileMode) *files.Content {
		return &files.Content{Source: src, Destination: dst, FileInfo: &files.ContentFileInfo{Mode: mode}}
	}
	info := nfpm.WithDefaults(&nfpm.Info{
		Name:       "tether",
		Arch:       "amd64",
		Platform:   "linux",
		Version:    version,
		Section:    "web",
		Priority:   "optional",
		Maintainer: maintainer,
		Description: "lets AI apps use the tabs you share from your own Chrome\n" +
			"Tether connects AI apps (Claude Desktop, Claude Code, Cursor, VS Code\n" +
			"and any other MCP client) to the Chrome you already use, through a\n" +
			"Manifest V3 extension: only the tabs you share are visible to the AI,\n" +
			"and actions that need your confirmation wait for it. It runs as a tray\n" +
			"icon with a window (tether-desktop, WebKitGTK) and as a command line\n" +
			"tool (tether).",
		Homepage: "https://github.com/tether-browser/tether",
		License:  "proprietary",
		Overridables: nfpm.Overridables{
			Depends: depends,
			Contents: files.Contents{
				file(binaries[0], "/usr/bin/tether", 0o755),
				file(binaries[1], "/usr/bin/tether-desktop", 0o755),
				file(filepath.Join(pkg, "tether.desktop"), "/usr/share/applications/tether.desktop", 0o644),
				file(filepath.Join(pkg, "tether.metainfo.xml"), "/usr/share/metainfo/tether.metainfo.xml", 0o644),
				file(filepath.Join(pkg, "tether-64.png"), "/usr/share/icons/hicolor/64x64/apps/tether.png", 0o644),
				file(filepath.Join(pkg, "tether.svg"), "/usr/share/icons/hicolor/scalable/apps/tether.svg", 0o644),
				file(filepath.Join(pkg, "copyright"), "/usr/share/doc/tether/copyright", 0o644),
				file(filepath.Join(pkg, "lintian-overrides"), "/usr/share/lintian/overrides/tether", 0o644),
				file(filepath.Join(stage, "changelog.gz"), "/usr/share/doc/tether/changelog.gz", 0o644),
				file(filepath.Join(stage, "tether.1.gz"), "/usr/share/man/man1/tether.1.gz", 0o644),
				file(filepath.Join(stage, "tether-desktop.1.gz"), "/usr/share/man/man1/tether-desktop.1.gz", 0o644),
			},
		},
	})
	if err := nfpm.Validate(info); err != nil {
		return "", err
	}
	packager, err := nfpm.Get("deb")
	if err != nil {
		return "", err
	}
	path := filepath.Join(out, packager.ConventionalFileName(info))
	var buf bytes.Buffer
	if err := packager.Package(info, &buf); err != nil {
		return "", fmt.Errorf("deb: %w", err)
	}
	return path, os.WriteFile(path, buf.Bytes(), 0o644)
}

// debChangelog formats the chglog YAML file as a Debian changelog. nfpm's
// own changelog support names it changelog.Debian.gz, the name for a
// package with a Debian revision; Tether's version has none (a native
// package), whose changelog Debian policy names changelog.gz.
func debChangelog(path string) ([]byte, error) {
	entries, err := chglog.Parse(path)
	if err != nil {
		return nil, fmt.Errorf("changelog %s: %w", path, err)
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("changelog %s has no entry", path)
	}
	tpl, err := chglog.DebTemplate()
	if err != nil {
		return nil, err
	}
	text, err := chglog.FormatChangelog(&chglog.PackageChangeLog{Name: "tether", Entries: entries}, tpl)
	if err != nil {
		return nil, err
	}
	return []byte(strings.TrimSpace(text) + "\n"), nil
}

// writeGzip writes data gzipped at the best compression, with no file name
// or time in the header (reproducible, as Debian wants).
func writeGzip(path string, data []byte) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// shlibDepends runs dpkg-shlibdeps on the binaries and returns the Depends
// it computed (each entry as dpkg writes it, "libc6 (>= 2.34)" or
// "libgtk-3-0t64 (>= 3.0) | libgtk-3-0"). dpkg-shlibdeps wants a
// debian/control above the current folder: it runs in a temporary one.
func shlibDepends(binaries []string) ([]string, error) {
	tmp, err := os.MkdirTemp("", "tether-shlibdeps-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(filepath.Join(tmp, "debian"), 0o755); err != nil {
		return nil, err
	}
	control := "Source: tether\n\nPackage: tether\nArchitecture: amd64\n"
	if err := os.WriteFile(filepath.Join(tmp, "debian", "control"), []byte(control), 0o644); err != nil {
		return nil, err
	}
	args := []string{"-O"}
	for _, b := range binaries {
		abs, err := filepath.Abs(b)
		if err != nil {
			return nil, err
		}
		args = append(args, abs)
	}
	cmd := exec.Command("dpkg-shlibdeps", args...)
	cmd.Dir = tmp
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("dpkg-shlibdeps (from dpkg-dev): %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	for _, line := range strings.Split(string(outb), "\n") {
		if v, ok := strings.CutPrefix(line, "shlibs:Depends="); ok {
			var deps []string
			for _, d := range strings.Split(v, ",") {
				if d = strings.TrimSpace(d); d != "" {
					deps = append(deps, d)
				}
			}
			if len(deps) > 0 {
				return deps, nil
			}
		}
	}
	return nil, fmt.Errorf("dpkg-shlibdeps found no shared library dependency: %q", outb)
}
