package app

import "testing"

// A link or HTML file dropped on the window must not navigate it: the page
// it loads could use the Wails bridge with the window's control token
// (answer held calls, resume, pair a browser). Checked by hand under Xvfb
// with a GTK drag source dropping a file:// page that called
// App.SetPaused(true) over window.webkit.messageHandlers.external.
func TestWindowRefusesWebViewDrops(t *testing.T) {
	if webViewDrop == nil || !webViewDrop.DisableWebViewDrop || webViewDrop.EnableFileDrop {
		t.Fatalf("DragAndDrop = %+v; want WebKit's drop handling off and no file drop", webViewDrop)
	}
}
