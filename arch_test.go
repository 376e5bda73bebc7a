package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/tether-browser/tether"

// forbidden lists, per package, import path prefixes it must not depend on
// (directly or not). It keeps the dependency direction of STYLE.md: main
// wires everything; the broker knows nothing of MCP or UI; the tools reach
// the browser only through their own Browser interface.
var forbidden = map[string][]string{
	"broker":   {"github.com/mark3labs/mcp-go", "github.com/wailsapp/", "fyne.io/systray", module + "/mcp", module + "/daemon", module + "/bridge", module + "/policy", module + "/timeline"},
	"protocol": {"github.com/mark3labs/mcp-go", "github.com/gorilla/websocket", module + "/broker", module + "/mcp"},
	"mcp":      {module + "/broker", module + "/daemon", "github.com/gorilla/websocket", "github.com/wailsapp/", "fyne.io/systray"},
	"bridge":   {module + "/broker", module + "/mcp", "github.com/mark3labs/mcp-go"},
	"config":   {module + "/"},
	"logs":     {module + "/"},
	"launcher": {module + "/broker", module + "/mcp", module + "/daemon"},
	// The guardrails and the timeline are domain packages: the daemon adapts
	// them to the MCP server's Guard and Recorder, and the local API serves them.
	"policy":   {"github.com/mark3labs/mcp-go", module + "/broker", module + "/mcp", module + "/daemon", module + "/timeline", "github.com/wailsapp/", "fyne.io/systray"},
	"timeline": {"github.com/mark3labs/mcp-go", module + "/broker", module + "/mcp", module + "/daemon", module + "/policy", "github.com/wailsapp/", "fyne.io/systray"},
	// The tray's logic stays free of native code (it builds for every OS
	// without cgo); tray/native holds systray and go-autostart.
	// The window is its own process, a client of the daemon's local API
	// (localclient, apitype) only: none of the daemon's parts, its wiring,
	// the MCP server or the tray.
	"app": {"github.com/mark3labs/mcp-go", "fyne.io/systray", module + "/broker", module + "/policy", module + "/timeline", module + "/clients", module + "/launcher", module + "/daemon", module + "/mcp", module + "/bridge", module + "/tray"},
	// The tray, in the daemon's process, is a client of the same local API.
	"tray": {"github.com/mark3labs/mcp-go", "github.com/wailsapp/", module + "/app", "fyne.io/systray", "github.com/emersion/go-autostart", module + "/broker", module + "/policy", module + "/timeline", module + "/clients", module + "/mcp", module + "/daemon", module + "/bridge", module + "/launcher"},
	// The daemon's side of the UI processes: it starts them, it does not
	// link their toolkits, nor the timeline's store (it records through a
	// func).
	"uiproc":      {"github.com/mark3labs/mcp-go", "github.com/wailsapp/", "fyne.io/systray", module + "/app", module + "/tray", module + "/timeline", module + "/mcp", module + "/daemon"},
	"tray/native": {"github.com/mark3labs/mcp-go", "github.com/wailsapp/", module + "/broker", module + "/policy", module + "/timeline", module + "/mcp", module + "/daemon", module + "/bridge", module + "/launcher"},
}

func TestDependencyDirection(t *testing.T) {
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-deps", "./"+pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps ./%s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == module+"/"+pkg {
				continue
			}
			for _, b := range bad {
				if strings.HasPrefix(dep, b) {
					t.Errorf("package %s depends on %s; forbidden by the dependency direction in STYLE.md", pkg, dep)
				}
			}
		}
	}
}

// The build without the window (go build ., what `tether serve` and every
// AI app's `tether mcp` run) must not link Wails, GTK or WebKit: they alone
// nearly tripled the daemon's idle RSS (cli/build_split.go).
func TestLeanBuildHasNoWindow(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/wailsapp/") || dep == module+"/app" || dep == module+"/frontend" {
			t.Errorf("the build without the window depends on %s; only cli/window.go (build tag desktop) may", dep)
		}
	}
	// Nor any other native toolkit: the approval dialog's GTK code
	// (dialog/gtk_linux.go) is built with the desktop tag only.
	out, err = exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .CgoPkgConfig \" \"}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if pkg, libs, _ := strings.Cut(line, " "); strings.Contains(libs, "gtk") || strings.Contains(libs, "webkit") {
			t.Errorf("the build without the window links %s through %s", libs, pkg)
		}
	}
}

// The build with the window has the GTK approval dialog, which uiproc
// starts as `tether-desktop approval-dialog`.
func TestDesktopBuildHasDialog(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "desktop,production,webkit2_41", "-f", "{{join .CgoPkgConfig \" \"}}", "./dialog").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "gtk+-3.0") {
		t.Errorf("the desktop build's dialog package does not use GTK 3 (pkg-config: %q)", out)
	}
}

// TestEveryPackageHasADocComment: every package says what it owns.
func TestEveryPackageHasADocComment(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range strings.Fields(string(out)) {
		pkgs, err := parser.ParseDir(token.NewFileSet(), dir, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		for name, p := range pkgs {
			if strings.HasSuffix(name, "_test") {
				continue
			}
			documented := false
			for _, f := range p.Files {
				if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Package "+name) || name == "main" && f.Doc != nil && strings.HasPrefix(f.Doc.Text(), "Command ") {
					documented = true
				}
			}
			if !documented {
				t.Errorf("package %s (%s) has no doc comment starting \"Package %s\"", name, filepath.Base(dir), name)
			}
		}
	}
}

// TestDocsStandOnTheRepository: a fresh clone has no ../shared, so what the
// code relies on is explained in the repository (docs/), never by pointing
// at the shared reference notes. Tests and the bench may still read
// ../shared's data (corpus pages, bug-report cases), skipping without it.
func TestDocsStandOnTheRepository(t *testing.T) {
	banned := []string{"shared/reference", "shared/STYLE", "reference §"}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "dist", ".git", "testdata":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".ts", ".md", ".sh", ".yml", ".yaml":
		default:
			if d.Name() != "Makefile" {
				return nil
			}
		}
		if path == "arch_test.go" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, s := range banned {
			if strings.Contains(string(b), s) {
				t.Errorf("%s points at %q: say it in docs/ (in the project's own words) and point there", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
