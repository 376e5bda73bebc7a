package app

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/tether-browser/tether/policy"
)

// Window is the Wails window around an App: the daemon's approver, the
// tray's "Open Tether", and the main thread's event loop (Run).
type Window struct {
	app *App
}

// NewWindow returns a window for cfg; Run shows it.
func NewWindow(cfg Config) *Window { return &Window{app: New(cfg)} }

// Bindings returns the App bound to the frontend.
func (w *Window) Bindings() *App { return w.app }

// Ask implements policy.Approver: see App.ask.
func (w *Window) Ask(ctx context.Context, r policy.Request) (policy.Answer, error) {
	return w.app.ask(ctx, r)
}

// Show shows and raises the window (the tray's "Open Tether", a second
// launch of tether). Asked before the window is up, it shows it once it is.
func (w *Window) Show() { w.app.show() }

// Notify shows a notice in the window's status line; kind is "info" or
// "error".
func (w *Window) Notify(kind, text string) { w.app.notify(kind, text) }

// WindowOptions configure Run.
type WindowOptions struct {
	// Assets is the built frontend (frontend.Dist()).
	Assets fs.FS
	// StartHidden keeps the window hidden until Show (what the login item
	// runs: `tether --hidden`).
	StartHidden bool
	// Icon is the window's icon (PNG).
	Icon []byte
}

// Run shows the window and runs the native event loop until ctx ends. Call
// it from the main goroutine: Wails owns the main thread. Closing the window
// hides it; only ctx (the tray's Quit, the daemon stopping) ends Run.
// Build with -tags desktop,production (and webkit2_41 on Linux); without
// them Wails refuses to start and Run returns its error.
func (w *Window) Run(ctx context.Context, o WindowOptions) (err error) {
	log := w.app.log
	defer func() {
		// Wails panics when GTK cannot start (a DISPLAY naming no server).
		if p := recover(); p != nil {
			err = fmt.Errorf("the window could not open: %v", p)
		}
	}()
	var started sync.Once
	return wails.Run(&options.App{
		Title:             "Tether",
		Width:             1120,
		Height:            760,
		MinWidth:          760,
		MinHeight:         520,
		StartHidden:       o.StartHidden,
		HideWindowOnClose: true,
		BackgroundColour:  &options.RGBA{R: 250, G: 250, B: 249, A: 255},
		AssetServer:       &assetserver.Options{Assets: o.Assets},
		OnStartup: func(wctx context.Context) {
			go func() {
				<-ctx.Done()
				wruntime.Quit(wctx)
			}()
		},
		// The window takes calls once its page is up: a WindowShow sent
		// while a hidden window is still being built is lost (seen under
		// Xvfb), so a Show before then waits for this.
		OnDomReady: func(wctx context.Context) {
			started.Do(func() { w.app.start(ctx, &wailsShell{ctx: wctx}) })
		},
		Bind:   []any{w.app},
		Logger: slogLogger{log},
		Linux: &linux.Options{
			Icon:             o.Icon,
			ProgramName:      "tether",
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
	})
}

// wailsShell is Shell on the Wails runtime.
type wailsShell struct{ ctx context.Context }

func (s *wailsShell) Emit(event string, data any) { wruntime.EventsEmit(s.ctx, event, data) }

func (s *wailsShell) Show() {
	wruntime.WindowUnminimise(s.ctx)
	wruntime.WindowShow(s.ctx)
}

func (s *wailsShell) Ask(title, message string) (bool, error) {
	if runtime.GOOS == "linux" {
		// Wails passes the text to gtk_message_dialog_new as a printf
		// format: a % from a URL would be read as a conversion.
		message = strings.ReplaceAll(message, "%", "%%")
	}
	got, err := wruntime.MessageDialog(s.ctx, wruntime.MessageDialogOptions{
		Type: wruntime.QuestionDialog, Title: title, Message: message,
		Buttons: []string{"Yes", "No"}, DefaultButton: "No", CancelButton: "No",
	})
	if err != nil {
		return false, err
	}
	switch got {
	case "Yes":
		return true, nil
	case "No":
		return false, nil
	}
	return false, ErrDialogClosed
}

func (s *wailsShell) SaveFile(title, defaultName string) (string, error) {
	return wruntime.SaveFileDialog(s.ctx, wruntime.SaveDialogOptions{
		Title: title, DefaultFilename: defaultName,
		Filters: []wruntime.FileFilter{{DisplayName: "JSON Lines (*.jsonl)", Pattern: "*.jsonl"}},
	})
}

func (s *wailsShell) Reveal(dir string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", dir)
	case "windows":
		cmd = exec.Command("explorer", dir)
	default:
		cmd = exec.Command("xdg-open", dir)
	}
	var out strings.Builder
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", cmd.Path, err)
	}
	// xdg-open and open return at once when a file manager took the folder;
	// a quick failure (no file manager: xdg-open exits 3) is reported. One
	// still running after a while is taken to have opened it.
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil && runtime.GOOS != "windows" { // explorer exits 1 even when it opened the folder
			return fmt.Errorf("%s: %v %s", filepath.Base(cmd.Path), err, strings.TrimSpace(out.String()))
		}
	case <-time.After(5 * time.Second):
	}
	return nil
}

// slogLogger is Wails' logger on slog.
type slogLogger struct{ log *slog.Logger }

func (l slogLogger) Print(m string)   { l.log.Debug("wails", "msg", m) }
func (l slogLogger) Trace(m string)   { l.log.Debug("wails", "msg", m) }
func (l slogLogger) Debug(m string)   { l.log.Debug("wails", "msg", m) }
func (l slogLogger) Info(m string)    { l.log.Debug("wails", "msg", m) }
func (l slogLogger) Warning(m string) { l.log.Warn("wails", "msg", m) }
func (l slogLogger) Error(m string)   { l.log.Error("wails", "msg", m) }
func (l slogLogger) Fatal(m string)   { l.log.Error("wails fatal", "msg", m) }
