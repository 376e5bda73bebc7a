package app

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	wruntime "github.com/wailsapp/wails/v2/pkg/runtime"
)

// Window is the Wails window around an App, the main thread's event loop
// of the window process.
type Window struct {
	app *App
}

// NewWindow returns a window for cfg; Run shows it.
func NewWindow(cfg Config) *Window { return &Window{app: New(cfg)} }

// webViewDrop turns off WebKit's own drop handling. Left on, a link or
// an HTML file dropped on the window navigates it to that page, and the
// page can post to the Wails bridge like Tether's own frontend: call
// App.Answer, App.SetPaused or App.ApproveProfile with the control token
// the window holds (seen under Xvfb: a dropped file:// page paused Tether).
var webViewDrop = &options.DragAndDrop{DisableWebViewDrop: true}

// WindowOptions configure Run.
type WindowOptions struct {
	// Assets is the built frontend (frontend.Dist()).
	Assets fs.FS
	// Icon is the window's icon (PNG).
	Icon []byte
}

// Run shows the window and runs the native event loop until the process
// should end: ctx ended, the window stayed closed for Config.Linger, or
// the daemon stayed unreachable for Config.GoneAfter (then it returns
// ErrDaemonGone). Closing the window hides it; a WindowShow event from the
// daemon shows it again. Call it from the main goroutine: Wails owns the
// main thread. Build with -tags desktop,production (and webkit2_41 on
// Linux); without them Wails refuses to start and Run returns its error.
func (w *Window) Run(ctx context.Context, o WindowOptions) (err error) {
	log := w.app.log
	defer func() {
		// Wails panics when GTK cannot start (a DISPLAY naming no server).
		if p := recover(); p != nil {
			err = fmt.Errorf("the window could not open: %v", p)
		}
	}()
	var started sync.Once
	runErr := make(chan error, 1)
	werr := wails.Run(&options.App{
		Title:            "Tether",
		Width:            1120,
		Height:           760,
		MinWidth:         760,
		MinHeight:        520,
		BackgroundColour: &options.RGBA{R: 250, G: 250, B: 249, A: 255},
		AssetServer:      &assetserver.Options{Assets: o.Assets},
		OnStartup: func(wctx context.Context) {
			go func() {
				<-ctx.Done() // also before the page is up
				w.app.markExiting()
				wruntime.Quit(wctx)
			}()
		},
		// The window takes calls once its page is up: a show asked while
		// the page is still being built is lost (seen under Xvfb), and
		// events emitted before it have no listener.
		OnDomReady: func(wctx context.Context) {
			started.Do(func() {
				go func() {
					runErr <- w.app.run(ctx, &wailsShell{ctx: wctx})
					wruntime.Quit(wctx)
				}()
			})
		},
		// The close button hides the window (the process lingers, see
		// App.run) until the process is ending.
		OnBeforeClose: func(context.Context) bool { return w.app.closeRequested() },
		Bind:          []any{w.app},
		DragAndDrop:   webViewDrop,
		Logger:        slogLogger{log},
		Linux: &linux.Options{
			Icon:             o.Icon,
			ProgramName:      "tether",
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
	})
	if werr != nil {
		return werr
	}
	select {
	case err := <-runErr:
		return err
	default:
		return nil // the loop ended before the page was up
	}
}

// wailsShell is Shell on the Wails runtime.
type wailsShell struct{ ctx context.Context }

func (s *wailsShell) Emit(event string, data any) { wruntime.EventsEmit(s.ctx, event, data) }

func (s *wailsShell) Show() {
	wruntime.WindowUnminimise(s.ctx)
	wruntime.WindowShow(s.ctx)
}

func (s *wailsShell) Hide() { wruntime.WindowHide(s.ctx) }

func (s *wailsShell) SaveFile(title, defaultName string) (string, error) {
	return wruntime.SaveFileDialog(s.ctx, wruntime.SaveDialogOptions{
		Title: title, DefaultFilename: defaultName,
		Filters: []wruntime.FileFilter{{DisplayName: "JSON Lines (*.jsonl)", Pattern: "*.jsonl"}},
	})
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
