package extupdate

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/launcher"
	"github.com/tether-browser/tether/protocol"
)

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		cmp  int
		ok   bool
	}{
		{"0.3.0", "0.4.0", -1, true},
		{"0.10.0", "0.9.9", 1, true},
		{"1.2", "1.2.0", 0, true},
		{"1.2.3.4", "1.2.3", 1, true},
		{"0.4.0", "0.4.0", 0, true},
		{"0.4.x", "0.4.0", 0, false},
		{"01.2.3", "1.2.3", 0, false},
		{"", "1.2.3", 0, false},
		{"1.2.3.4.5", "1.2.3", 0, false},
	} {
		cmp, ok := CompareVersions(c.a, c.b)
		if cmp != c.cmp || ok != c.ok {
			t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d, %v", c.a, c.b, cmp, ok, c.cmp, c.ok)
		}
	}
}

// built is the extension inside the daemon in these tests.
var built = fstest.MapFS{
	"manifest.json": {Data: []byte(`{"version": "0.4.0", "version_name": "0.4.0 build new"}`)},
	"background.js": {Data: []byte("// new")},
}

type fixture struct {
	u     *Updater
	paths config.Paths
	now   time.Time
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{paths: config.Paths{Dir: t.TempDir()}, now: time.Unix(1_700_000_000, 0)}
	u, err := New(Config{Ext: built, Allowed: f.paths.IsExtensionFolder, Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	f.u = u
	return f
}

// pairingKey is the daemon's pairing key written into tether.json.
var pairingKey = strings.Repeat("5a", 32)

// writeOld writes an older build into dir as Tether does (marker and
// tether.json, with the daemon's pairing key), and returns the hello its
// extension sends.
func writeOld(t *testing.T, dir, version string) protocol.Hello {
	t.Helper()
	old := fstest.MapFS{
		"manifest.json": {Data: []byte(`{"version": "` + version + `", "version_name": "` + version + ` build old"}`)},
		"background.js": {Data: []byte("// old")},
	}
	if err := launcher.WriteExtension(old, dir, launcher.ExtensionConfig{Port: 4242, Label: "Work", PairingKey: pairingKey}); err != nil {
		t.Fatal(err)
	}
	m, err := launcher.ReadMarker(dir)
	if err != nil {
		t.Fatal(err)
	}
	return protocol.Hello{ExtVersion: version, VersionName: version + " build old", InstallType: "development", Install: &m}
}

func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func TestRewritesAnOlderBuildInAFolderTetherWrote(t *testing.T) {
	for _, name := range []string{"window's folder", "tether browser's copy"} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			dir := f.paths.UnpackedExtension()
			if name != "window's folder" {
				dir = f.paths.Extension(filepath.Join(t.TempDir(), "profile"))
			}
			h := writeOld(t, dir, "0.3.0")
			// As a Tether before protocol 4 left it: readable by all.
			if err := os.Chmod(filepath.Join(dir, launcher.ConfigName), 0o644); err != nil {
				t.Fatal(err)
			}
			before := snapshot(t, dir)
			reload, note := f.u.Check(h)
			if reload == nil || note != "" {
				t.Fatalf("Check = %v, %q; want a reload", reload, note)
			}
			if reload.Type != protocol.TypeReload || reload.Version != "0.4.0" || reload.VersionName != "0.4.0 build new" {
				t.Fatalf("reload frame %+v", reload)
			}
			after := snapshot(t, dir)
			if after["background.js"] != "// new" || !strings.Contains(after["manifest.json"], "0.4.0 build new") {
				t.Fatalf("not rewritten: %v", after)
			}
			if after[launcher.ConfigName] != before[launcher.ConfigName] || after[launcher.MarkerName] != before[launcher.MarkerName] {
				t.Fatalf("tether.json or the marker changed:\n%v\n%v", before, after)
			}
			// tether.json keeps the pairing key, readable by its owner alone.
			if !strings.Contains(after[launcher.ConfigName], `"pairingKey": "`+pairingKey+`"`) {
				t.Fatalf("tether.json lost the pairing key: %s", after[launcher.ConfigName])
			}
			if info, err := os.Stat(filepath.Join(dir, launcher.ConfigName)); err != nil || runtime.GOOS != "windows" && info.Mode().Perm() != 0o600 {
				t.Fatalf("tether.json after the rewrite: %v %v, want mode 0600", info, err)
			}
			if _, err := os.Stat(dir + ".old"); !os.IsNotExist(err) {
				t.Fatalf("the previous folder was left behind: %v", err)
			}
			// The same old build again within RetryAfter: a manual reload, not a loop.
			writeOld(t, dir, "0.3.0")
			h2 := h
			h2.Install, _ = func() (*protocol.InstallMarker, error) { m, err := launcher.ReadMarker(dir); return &m, err }()
			if reload, note := f.u.Check(h2); reload != nil || !strings.Contains(note, "came back unchanged") {
				t.Fatalf("second Check = %v, %q", reload, note)
			}
			f.now = f.now.Add(RetryAfter + time.Second)
			if reload, _ := f.u.Check(h2); reload == nil {
				t.Fatal("no rewrite after RetryAfter")
			}
		})
	}
}

func TestSameVersionOtherBuildIsRewritten(t *testing.T) {
	f := newFixture(t)
	h := writeOld(t, f.paths.UnpackedExtension(), "0.4.0")
	if act, note := f.u.Decide(h); act != Rewrite {
		t.Fatalf("Decide = %v, %q; want Rewrite", act, note)
	}
	h.VersionName = "0.4.0 build new"
	if act, _ := f.u.Decide(h); act != Current {
		t.Fatalf("the same build: %v, want Current", act)
	}
}

// A folder without the marker, a store install, a newer version, a marker
// for a folder Tether does not write, or one whose id does not match the
// file on disk: never touched.
func TestNeverTouches(t *testing.T) {
	cases := []struct {
		name   string
		change func(t *testing.T, f *fixture, dir string, h *protocol.Hello)
		act    Action
		note   string
	}{
		{"no marker in the hello", func(t *testing.T, f *fixture, dir string, h *protocol.Hello) { h.Install = nil }, Manual, "chrome://extensions"},
		{"marker removed from the folder", func(t *testing.T, f *fixture, dir string, h *protocol.Hello) {
			if err := os.Remove(filepath.Join(dir, launcher.MarkerName)); err != nil {
				t.Fatal(err)
			}
		}, Manual, "Tether did not write its folder"},
		{"marker id differs", func(t *testing.T, f *fixture, dir string, h *protocol.Hello) { h.Install.ID = "0000000000000000" }, Manual, "Reload on Tether"},
		{"install type unknown", func(t *testing.T, f *fixture, dir string, h *protocol.Hello) { h.InstallType = "" }, Manual, "Reload on Tether"},
		{"store install", func(t *testing.T, f *fixture, dir string, h *protocol.Hello) { h.InstallType = "normal" }, Manual, "Web Store"},
		{"newer version", func(t *testing.T, f *fixture, dir string, h *protocol.Hello) {
			h.ExtVersion, h.VersionName = "0.5.0", "0.5.0 build x"
		}, Current, ""},
		{"unparsable version", func(t *testing.T, f *fixture, dir string, h *protocol.Hello) { h.ExtVersion = "dev" }, Current, ""},
		{"folder outside the config dir", func(t *testing.T, f *fixture, dir string, h *protocol.Hello) {
			other := filepath.Join(t.TempDir(), "chrome-extension")
			m := writeOld(t, other, "0.3.0").Install
			*h.Install = *m
		}, Manual, "chrome://extensions"},
		{"relative path", func(t *testing.T, f *fixture, dir string, h *protocol.Hello) { h.Install.Dir = "chrome-extension" }, Manual, "chrome://extensions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			dir := f.paths.UnpackedExtension()
			h := writeOld(t, dir, "0.3.0")
			c.change(t, f, dir, &h)
			before := snapshot(t, dir)
			reload, note := f.u.Check(h)
			if reload != nil {
				t.Fatalf("a reload was sent")
			}
			if act, _ := f.u.Decide(h); act != c.act {
				t.Fatalf("Decide = %v, want %v", act, c.act)
			}
			if c.note == "" && note != "" || !strings.Contains(note, c.note) {
				t.Fatalf("note %q, want one with %q", note, c.note)
			}
			if after := snapshot(t, dir); len(after) != len(before) || after["background.js"] != before["background.js"] || after["manifest.json"] != before["manifest.json"] {
				t.Fatalf("the folder changed:\n%v\n%v", before, after)
			}
		})
	}
}

// Two Chrome profiles may load the same folder: the second one's hello
// finds this build there already and is asked to reload without another
// rewrite.
func TestTwoProfilesOneFolder(t *testing.T) {
	f := newFixture(t)
	dir := f.paths.UnpackedExtension()
	h := writeOld(t, dir, "0.3.0")
	h.ProfileID = "work"
	if reload, note := f.u.Check(h); reload == nil {
		t.Fatalf("first profile: %q", note)
	}
	marker, err := os.Stat(filepath.Join(dir, launcher.MarkerName))
	if err != nil {
		t.Fatal(err)
	}
	h.ProfileID = "home"
	if reload, note := f.u.Check(h); reload == nil {
		t.Fatalf("second profile: %q", note)
	}
	again, err := os.Stat(filepath.Join(dir, launcher.MarkerName))
	if err != nil || !again.ModTime().Equal(marker.ModTime()) || !os.SameFile(marker, again) {
		t.Fatalf("the folder was written again for the second profile")
	}
}
