//go:build linux

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/tether-browser/tether/config"
	"github.com/tether-browser/tether/daemon"
	"github.com/tether-browser/tether/policy"
	"github.com/tether-browser/tether/test/desktop"
	"github.com/tether-browser/tether/test/mcpclient"
	"github.com/tether-browser/tether/timeline"
	"github.com/tether-browser/tether/tray/native"
)

// requireDesktop fails in CI, and skips elsewhere, when the tools of a
// desktop session are missing.
func requireDesktop(t *testing.T) {
	t.Helper()
	for _, tool := range []struct{ cmd, pkg string }{{"Xvfb", "xvfb"}, {"dbus-launch", "dbus-x11"}, {"xdotool", "xdotool"}} {
		if _, err := exec.LookPath(tool.cmd); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is required in CI (apt-get install %s; make deps-test installs it)", tool.cmd, tool.pkg)
			}
			t.Skipf("%s not found: install %s to run the window's end-to-end test", tool.cmd, tool.pkg)
		}
	}
}

// App is bare `tether` (daemon, tray and window) on a private X display and
// D-Bus session, as a Daemon the harness's helpers accept.
type App struct {
	*Daemon
	Display string
	Bus     string
	Home    string
}

// StartApp starts bare `tether` with args (e.g. --hidden) on a new Xvfb
// display and session bus, with its own HOME and config dir, and waits for
// its daemon and tray.
func StartApp(t *testing.T, bin string, args ...string) *App {
	t.Helper()
	a := &App{Display: desktop.Xvfb(t), Bus: desktop.SessionBus(t), Home: t.TempDir()}
	dir := filepath.Join(t.TempDir(), "config")
	a.Daemon = StartTether(t, bin, dir, UserEnv(a.Home, dir, a.Bus, a.Display), args...)
	return a
}

// The real app, end to end, under Xvfb and a D-Bus session: window, tray,
// native approval dialog, real Chromium and a real MCP client.
func TestAppUnderXvfb(t *testing.T) {
	requireDesktop(t)
	RequireChromium(t)
	bin := Binary(t)
	a := StartApp(t, bin, "--hidden")
	const windowName = "^Tether$"

	// Started hidden (the login item's way): no window until asked. A second
	// tether exits at once and shows the first one's window.
	if desktop.Visible(t, a.Display, windowName) {
		t.Fatal("tether --hidden showed its window")
	}
	second := exec.Command(bin)
	second.Env = a.Env()
	started := time.Now()
	out, err := second.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "already running") {
		t.Fatalf("a second tether: %v\n%s", err, out)
	}
	if d := time.Since(started); d > 5*time.Second {
		t.Errorf("the second tether took %s to exit", d)
	}
	win := desktop.WaitWindow(t, a.Display, windowName)
	if _, _, err := a.Log.WaitFor(0, 5*time.Second, "window opened over the local API"); err != nil {
		t.Fatal(err)
	}

	// Closing the window hides it; the daemon keeps running, and the
	// tray's Open Tether brings it back (below).
	if got := desktop.Close(t, a.Display, win); got != "unmapped" {
		t.Fatalf("closing the window: it was %s, want hidden", got)
	}
	if _, _, err := daemon.Probe(context.Background(), a.Paths); err != nil {
		t.Fatalf("the daemon after closing the window: %v", err)
	}

	// The tray, over D-Bus.
	tr := desktop.TrayOf(t, a.Bus, a.cmd.Process.Pid)
	item, m, sigs := tr.Item, tr.Menu, tr.Signals
	top := m.Layout()
	for _, title := range []string{"No extension connected", native.TitleOpen, native.TitleConnect, native.TitlePause, native.TitleLogin, native.TitleQuit} {
		top.Find(t, title)
	}
	if c := desktop.IconColour(t, item); c != "grey" {
		t.Fatalf("icon with no extension: %s, want grey", c)
	}
	m.Click(top.Find(t, native.TitleOpen).ID)
	desktop.WaitWindow(t, a.Display, windowName)

	// A real Chromium profile connects and is paired: the icon goes amber
	// (approval waiting), then green.
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	from := a.Log.Len()
	StartBrowser(t, a.Daemon, BrowserOptions{Label: "Work", WaitFor: "new browser profile waiting for approval"})
	desktop.WaitIcon(t, sigs, item, "amber")
	line, _, err := a.Log.WaitFor(from, 10*time.Second, "waiting for approval", "label=Work")
	if err != nil {
		t.Fatal(err)
	}
	tetherCLI(t, a.Daemon, "profiles", "approve", logCode(t, line))
	desktop.WaitIcon(t, sigs, item, "green")

	// A real tool call from an MCP client lands on the timeline, with the
	// client's name from its clientInfo.
	ctx := Context(t, 5*time.Minute)
	c := stdioClient(t, ctx, a.Daemon)
	snap := mustCall(t, ctx, c, "browser_navigate", map[string]any{"url": fixtures.URL + "/upload.html"})
	if !strings.Contains(snap, "No file chosen yet") {
		t.Fatalf("the upload page:\n%s", snap)
	}
	rows := timelineRows(t, a.Daemon)
	if len(rows) == 0 || rows[0].Tool != "browser_navigate" || rows[0].Client != "tether-e2e" || rows[0].Outcome != timeline.OK || rows[0].Profile != "work" {
		t.Fatalf("the timeline after navigate: %+v", rows)
	}

	// A confirm rule (file upload is sensitive) holds the call and asks in
	// a native dialog; Yes lets it run and the page sees the file.
	file := filepath.Join(t.TempDir(), "report 100%.txt")
	if err := os.WriteFile(file, []byte("quarterly"), 0o600); err != nil {
		t.Fatal(err)
	}
	input := ref(t, snap, "button", "Attachment")
	type result struct {
		text  string
		isErr bool
	}
	upload := func() chan result {
		done := make(chan result, 1)
		go func() {
			text, isErr := call(t, ctx, c, "browser_file_upload", map[string]any{"ref": input, "paths": []string{file}})
			done <- result{text, isErr}
		}()
		return done
	}
	done := upload()
	answerDialog(t, a, "alt+y")
	if r := <-done; r.isErr {
		t.Fatalf("upload allowed in the dialog: %s", r.text)
	}
	if snap := mustCall(t, ctx, c, "browser_snapshot", nil); !strings.Contains(snap, "chose report 100%.txt") {
		t.Fatalf("the page did not get the file:\n%s", snap)
	}
	if e := latest(t, a.Daemon, "browser_file_upload"); e.Outcome != timeline.OK || !strings.Contains(e.Decision, "allowed once by the user") {
		t.Fatalf("the timeline after the allowed upload: %+v", e)
	}

	// No: the AI gets a refusal, and the timeline says denied.
	done = upload()
	answerDialog(t, a, "alt+n")
	if r := <-done; !r.isErr || !strings.Contains(r.text, "The user denied browser_file_upload") {
		t.Fatalf("upload denied in the dialog: isError %v\n%s", r.isErr, r.text)
	}
	if e := latest(t, a.Daemon, "browser_file_upload"); e.Outcome != timeline.Denied || !strings.Contains(e.Decision, "denied by the user") {
		t.Fatalf("the timeline after the denied upload: %+v", e)
	}

	// Pause AI access from the tray: every call is refused.
	m.Click(top.Find(t, native.TitlePause).ID)
	if _, _, err := a.Log.WaitFor(0, 10*time.Second, "AI access paused"); err != nil {
		t.Fatal(err)
	}
	desktop.WaitIcon(t, sigs, item, "red")
	if text, isErr := call(t, ctx, c, "browser_tabs", map[string]any{"action": "list"}); !isErr || !strings.Contains(text, policy.PausedMessage) {
		t.Fatalf("browser_tabs while paused: isError %v, %s", isErr, text)
	}
	m.Click(top.Find(t, native.TitlePause).ID)
	desktop.WaitIcon(t, sigs, item, "green")

	// Connect to ▸ Claude Desktop writes its file in the test HOME.
	m.Click(top.Find(t, native.TitleConnect).Find(t, "Claude Desktop").ID)
	if _, _, err := a.Log.WaitFor(0, 10*time.Second, "client config changed from the tray"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(a.Home, ".config", "Claude", "claude_desktop_config.json"))
	if err != nil || !bytes.Contains(b, []byte(`"tether"`)) {
		t.Fatalf("claude_desktop_config.json: %v\n%s", err, b)
	}

	// Quit from the tray ends the whole app.
	m.Click(top.Find(t, native.TitleQuit).ID)
	if err := a.WaitExit(20 * time.Second); err != nil {
		t.Fatalf("tether after Quit: %v", err)
	}
	// Quit means quit: the AI app's bridge, still running, does not start
	// Tether again behind the user's back.
	text, isErr, err := mcpclient.Call(ctx, c, "browser_tabs", nil, nil)
	if (err == nil && !isErr) || !strings.Contains(fmt.Sprint(err)+text, "the user quit Tether") {
		t.Fatalf("a call after Quit: %q, isError %v, %v; want a refusal saying the user quit Tether", text, isErr, err)
	}
	if _, _, err := daemon.Probe(context.Background(), a.Paths); err == nil {
		t.Fatal("a daemon runs again after Quit")
	}
}

// answerDialog waits for the native approval dialog and presses keys in it
// (GTK's Yes/No buttons have the mnemonics Alt+Y and Alt+N).
func answerDialog(t *testing.T, a *App, keys string) {
	t.Helper()
	win := desktop.WaitWindow(t, a.Display, "^Tether: allow browser_file_upload")
	if out, err := desktop.Xdotool(t, a.Display, "windowfocus", "--sync", win); err != nil {
		t.Fatalf("focus the dialog: %v %s", err, out)
	}
	if out, err := desktop.Xdotool(t, a.Display, "key", "--clearmodifiers", keys); err != nil {
		t.Fatalf("xdotool key %s: %v %s", keys, err, out)
	}
}

// timelineRows reads the persisted timeline (newest first) through the
// daemon's own store file, as `tether timeline` does.
func timelineRows(t *testing.T, d *Daemon) []timeline.Entry {
	t.Helper()
	cmd := exec.Command(d.Bin, "timeline", "export")
	cmd.Env = d.Env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tether timeline export: %v", err)
	}
	rows, err := timeline.ReadJSONL(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(rows)-1; i < j; i, j = i+1, j-1 {
		rows[i], rows[j] = rows[j], rows[i]
	}
	return rows
}

// latest returns the newest timeline row of tool.
func latest(t *testing.T, d *Daemon, tool string) timeline.Entry {
	t.Helper()
	for _, e := range timelineRows(t, d) {
		if e.Tool == tool {
			return e
		}
	}
	t.Fatalf("no %s on the timeline", tool)
	return timeline.Entry{}
}

// TestScreenshot writes the README's picture of the window: the timeline
// after a short real session (two MCP clients, real Chromium, a held upload
// denied in the native dialog, a call while paused). It runs only when
// TETHER_SCREENSHOT names the PNG to write (`make screenshot`).
func TestScreenshot(t *testing.T) {
	out := os.Getenv("TETHER_SCREENSHOT")
	if out == "" {
		t.Skip("set TETHER_SCREENSHOT=path.png (make screenshot) to write the README's screenshot")
	}
	requireDesktop(t)
	RequireChromium(t)
	if _, err := exec.LookPath("import"); err != nil {
		t.Fatal("import (ImageMagick) is needed to capture the window: apt-get install imagemagick")
	}
	bin := Binary(t)
	a := StartApp(t, bin)
	win := desktop.WaitWindow(t, a.Display, "^Tether$")
	fixtures := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer fixtures.Close()
	from := a.Log.Len()
	StartBrowser(t, a.Daemon, BrowserOptions{Label: "Work", WaitFor: "new browser profile waiting for approval"})
	line, _, err := a.Log.WaitFor(from, 10*time.Second, "waiting for approval", "label=Work")
	if err != nil {
		t.Fatal(err)
	}
	tetherCLI(t, a.Daemon, "profiles", "approve", logCode(t, line))
	if _, _, err := a.Log.WaitFor(from, 10*time.Second, "browser profile approved"); err != nil {
		t.Fatal(err)
	}

	ctx := Context(t, 3*time.Minute)
	claude := namedStdioClient(t, ctx, a.Daemon, "claude-ai")
	cursor := namedStdioClient(t, ctx, a.Daemon, "cursor-vscode")
	snap := mustCall(t, ctx, claude, "browser_navigate", map[string]any{"url": fixtures.URL + "/form.html"})
	mustCall(t, ctx, claude, "browser_type", map[string]any{"ref": ref(t, snap, "textbox", "Your name"), "text": "Ada Lovelace"})
	mustCall(t, ctx, claude, "browser_click", map[string]any{"ref": ref(t, snap, "button", "Greet")})
	call(t, ctx, claude, "browser_click", map[string]any{"ref": "e999"}) // an error row
	mustCall(t, ctx, cursor, "browser_tabs", nil)
	mustCall(t, ctx, cursor, "browser_read", nil)
	snap = mustCall(t, ctx, claude, "browser_navigate", map[string]any{"url": fixtures.URL + "/upload.html"})
	file := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(file, []byte("notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		call(t, ctx, claude, "browser_file_upload", map[string]any{"ref": ref(t, snap, "button", "Attachment"), "paths": []string{file}})
	}()
	answerDialog(t, a, "alt+n")
	<-done
	mustCall(t, ctx, cursor, "browser_snapshot", nil)
	tetherCLI(t, a.Daemon, "pause")
	call(t, ctx, claude, "browser_navigate", map[string]any{"url": fixtures.URL + "/form.html"})
	tetherCLI(t, a.Daemon, "resume")
	mustCall(t, ctx, claude, "browser_snapshot", nil)

	// The timeline page (Ctrl+2), then the window alone.
	if out, err := desktop.Xdotool(t, a.Display, "windowfocus", "--sync", win); err != nil {
		t.Fatalf("focus the window: %v %s", err, out)
	}
	if out, err := desktop.Xdotool(t, a.Display, "key", "--clearmodifiers", "ctrl+2"); err != nil {
		t.Fatalf("ctrl+2: %v %s", err, out)
	}
	// The frontend renders the page and its rows asynchronously and says
	// nothing the test can wait on from outside; the last row recorded is
	// the snapshot above, so wait for the timeline's export to hold it, then
	// give the page a moment to paint.
	latest(t, a.Daemon, "browser_snapshot")
	time.Sleep(time.Second) // painting only: nothing is asserted after it
	cmd := exec.Command("import", "-window", win, out)
	cmd.Env = append(os.Environ(), "DISPLAY="+a.Display)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("import: %v\n%s", err, b)
	}
	t.Logf("wrote %s", out)
}

// namedStdioClient is a `tether mcp` session whose clientInfo names it as
// an AI app would (the timeline's client column).
func namedStdioClient(t *testing.T, ctx context.Context, d *Daemon, name string) *client.Client {
	t.Helper()
	c, err := client.NewStdioMCPClient(d.Bin, []string{config.EnvConfigDir + "=" + d.Paths.Dir}, "mcp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := mcpclient.Initialize(ctx, c, name); err != nil {
		t.Fatal(err)
	}
	return c
}
