//go:build !windows

package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tether-browser/tether/launcher"
	"github.com/tether-browser/tether/localclient"
)

// The extension updates itself (issue 18). An older build, loaded
// unpacked from the folder the window writes, connects, pairs and gets two
// shared tabs. While its folder has no marker, Tether leaves it alone and
// says it is outdated and how to reload it. Once the marker is back, the
// daemon (restarted, so the extension says hello again) rewrites the folder
// with its own build and asks the extension to reload: it comes back with
// the new version, the same profile id and pairing (no new profile, no new
// approval), the same tab numbers, and a ref from before the reload is
// stale_ref.
func TestExtensionUpdatesItself(t *testing.T) {
	parallel(t)
	chromium := RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles", "--unattended=allow")
	ctx := Context(t, 4*time.Minute)
	lc := localclient.New(d.Paths)
	st, err := lc.WriteExtension(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := st.Dir
	readManifest := func() (version, name string) {
		t.Helper()
		var m struct {
			Version     string `json:"version"`
			VersionName string `json:"version_name"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err != nil || json.Unmarshal(b, &m) != nil {
			t.Fatalf("manifest: %v %s", err, b)
		}
		return m.Version, m.VersionName
	}
	newVersion, newName := readManifest()
	if !strings.HasPrefix(newName, newVersion+" build ") {
		t.Fatalf("version_name %q does not carry the build id", newName)
	}
	// The older build: the same files with a lower version.
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	old := strings.Replace(strings.Replace(string(b), `"version": "`+newVersion+`"`, `"version": "0.0.1"`, 1), newName, "0.0.1 build 000000000000", 1)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, _ := readManifest(); v != "0.0.1" {
		t.Fatalf("the copy's version is %s", v)
	}
	configBefore, _ := os.ReadFile(filepath.Join(dir, launcher.ConfigName))
	markerPath := filepath.Join(dir, launcher.MarkerName)
	aside := filepath.Join(t.TempDir(), launcher.MarkerName)
	if err := os.Rename(markerPath, aside); err != nil {
		t.Fatal(err)
	}

	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>` + r.URL.Query().Get("t") + `</title><button>Press</button>`))
	}))
	defer pages.Close()

	// Chromium with the folder loaded unpacked, as the user's own Chrome loads it.
	from := d.Log.Len()
	// Developer mode is on, as "Load unpacked" needs it: Chromium reloads an
	// unpacked extension only then (launcher.EnableDeveloperMode).
	profileDir := filepath.Join(t.TempDir(), "chrome-profile")
	if err := launcher.EnableDeveloperMode(profileDir); err != nil {
		t.Fatal(err)
	}
	args := launcher.Args(launcher.Options{ExtensionDir: dir, UserDataDir: profileDir, Headless: true,
		ExtraArgs: []string{HostResolverRules}})
	startBrowserProcess(t, exec.Command(chromium, args...), profileDir, "")
	if _, _, err := d.Log.WaitFor(from, 60*time.Second, "extension connected", "ext_version=0.0.1"); err != nil {
		t.Fatal(err)
	}
	c := stdioClient(t, ctx, d)
	one := openedTab(t, mustCall(t, ctx, c, "browser_tabs", map[string]any{"action": "new", "url": pages.URL + "/?t=one"}))
	two := openedTab(t, mustCall(t, ctx, c, "browser_tabs", map[string]any{"action": "new", "url": pages.URL + "/?t=two"}))
	oldRef := ref(t, mustCall(t, ctx, c, "browser_snapshot", map[string]any{"tab": one}), "button", "Press")
	before, err := lc.Profiles(ctx)
	if err != nil || len(before.Profiles) != 1 {
		t.Fatalf("profiles before: %+v %v", before, err)
	}
	profileID := before.Profiles[0].ID

	// Without the marker: untouched, reported outdated with how to reload it.
	if _, _, err := d.Log.WaitFor(from, 30*time.Second, "extension outdated"); err != nil {
		t.Fatal(err)
	}
	if ext, err := lc.Extension(ctx); err != nil || len(ext.Outdated) != 1 || !strings.Contains(ext.Outdated[0].Message, "chrome://extensions") {
		t.Fatalf("the Extension page: %+v %v", ext, err)
	}
	profiles := exec.CommandContext(ctx, d.Bin, "profiles")
	profiles.Env = d.Env()
	out, err := profiles.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "outdated") || !strings.Contains(string(out), "Reload on Tether") {
		t.Fatalf("tether profiles: %v\n%s", err, out)
	}
	if v, _ := readManifest(); v != "0.0.1" {
		t.Fatalf("a folder without the marker was rewritten (version %s)", v)
	}

	// With the marker back, the next hello updates it.
	if err := os.Rename(aside, markerPath); err != nil {
		t.Fatal(err)
	}
	d = d.Restart(t)
	if _, _, err := d.Log.WaitFor(0, 60*time.Second, "extension folder updated; asking the extension to reload"); err != nil {
		t.Fatal(err)
	}
	rewritten := time.Now()
	if _, _, err := d.Log.WaitFor(0, 60*time.Second, "extension connected", "ext_version="+newVersion); err != nil {
		t.Fatalf("the extension did not come back with version %s: %v", newVersion, err)
	}
	t.Logf("back with %s %v after the rewrite", newVersion, time.Since(rewritten).Round(time.Millisecond))
	if v, name := readManifest(); v != newVersion || name != newName {
		t.Fatalf("folder holds %s (%s), want %s (%s)", v, name, newVersion, newName)
	}
	if configAfter, _ := os.ReadFile(filepath.Join(dir, launcher.ConfigName)); string(configAfter) != string(configBefore) {
		t.Fatalf("tether.json changed:\n%s\n%s", configBefore, configAfter)
	}
	after, err := lc.Profiles(ctx)
	if err != nil || len(after.Profiles) != 1 || len(after.Pending) != 0 || after.Profiles[0].ID != profileID ||
		after.Profiles[0].ExtVersion != newVersion || after.Profiles[0].ExtOutdated != "" {
		t.Fatalf("profiles after the update: %+v %v (want only %s, version %s, not outdated)", after, err, profileID, newVersion)
	}
	if strings.Contains(d.Log.String(), "waiting for approval") {
		t.Fatal("the updated extension had to be paired again")
	}

	c = stdioClient(t, ctx, d)
	list := mustCall(t, ctx, c, "browser_tabs", nil)
	for n, title := range map[int]string{one: "one", two: "two"} {
		if !regexp.MustCompile(`(?m)^\D*` + strconv.Itoa(n) + `\b.*` + title).MatchString(list) {
			t.Fatalf("tab %d (%s) lost its number after the update:\n%s", n, title, list)
		}
	}
	text, isErr := call(t, ctx, c, "browser_click", map[string]any{"tab": one, "ref": oldRef})
	if !isErr || !strings.Contains(text, "stale_ref") {
		t.Fatalf("a ref from before the update: got (isError=%v) %s; want stale_ref", isErr, text)
	}
	// The tab works with fresh refs: the content script was injected again.
	fresh := ref(t, mustCall(t, ctx, c, "browser_snapshot", map[string]any{"tab": one}), "button", "Press")
	if fresh == oldRef {
		t.Fatalf("the new document reuses ref %s", fresh)
	}
	mustCall(t, ctx, c, "browser_click", map[string]any{"tab": one, "ref": fresh})
}

// The same for `tether browser`'s own copy: it turns Developer mode on in
// its profile, so an older build there is updated and reloaded too. The
// browser is started again on the same profile and folder, with the
// folder's version lowered, without `tether browser` (which would write
// the folder anew).
func TestExtensionUpdatesItselfInTetherBrowser(t *testing.T) {
	parallel(t)
	chromium := RequireChromium(t)
	d := StartDaemon(t, Binary(t), "--auto-approve-profiles")
	profileDir := filepath.Join(t.TempDir(), "chrome-profile")
	b := StartBrowser(t, d, BrowserOptions{UserDataDir: profileDir})
	// A call's round trip: by then the extension has stored its pairing secret.
	ctx := Context(t, 3*time.Minute)
	mustCall(t, ctx, stdioClient(t, ctx, d), "browser_tabs", nil)
	b.Stop(t)
	dir := d.Paths.Extension(profileDir)
	manifest := filepath.Join(dir, "manifest.json")
	raw, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, []byte(strings.Replace(string(raw), `"version": "`+m.Version+`"`, `"version": "0.0.1"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	from := d.Log.Len()
	args := launcher.Args(launcher.Options{ExtensionDir: dir, UserDataDir: profileDir, Headless: true, ExtraArgs: []string{HostResolverRules}})
	startBrowserProcess(t, exec.Command(chromium, args...), profileDir, "")
	if _, _, err := d.Log.WaitFor(from, 60*time.Second, "extension folder updated; asking the extension to reload", dir); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Log.WaitFor(from, 60*time.Second, "extension connected", "ext_version="+m.Version); err != nil {
		t.Fatalf("the extension did not come back with version %s: %v", m.Version, err)
	}
	if list, err := localclient.New(d.Paths).Profiles(ctx); err != nil || len(list.Profiles) != 1 || len(list.Pending) != 0 {
		t.Fatalf("profiles: %+v %v", list, err)
	}
}
