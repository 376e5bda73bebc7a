package tray

import "embed"

//go:generate go run ./internal/genicons icons

//go:embed icons
var iconFiles embed.FS

// Icon returns the icon of a state in the format systray wants on goos: an
// ICO on Windows, a PNG elsewhere (runtime.GOOS in production).
func Icon(s State, goos string) []byte {
	ext := ".png"
	if goos == "windows" {
		ext = ".ico"
	}
	b, err := iconFiles.ReadFile("icons/" + string(s) + ext)
	if err != nil {
		panic("tray: no icon for state " + string(s)) // the states and files are both fixed here
	}
	return b
}
