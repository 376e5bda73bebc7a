// Command bindings writes the window's generated JavaScript/TypeScript
// bindings (frontend/wailsjs: the App methods as typed functions, its
// struct types as models.ts, and the Wails runtime wrapper) without the
// wails CLI, which does not compile on Go 1.26 (platform notes). Wails
// generates them when an app built with -tags bindings runs; this is that
// app, with the same bound struct as the real window.
//
// Run it from the folder holding wails.json (`make bindings` does):
//
//	go run -tags bindings ./build/bindings
package main

import (
	"fmt"
	"os"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"

	"github.com/tether-browser/tether/app"
)

func main() {
	err := wails.Run(&options.App{
		Title: "Tether (bindings)",
		Bind:  []any{app.New(app.Config{})},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bindings:", err)
		os.Exit(1)
	}
}
