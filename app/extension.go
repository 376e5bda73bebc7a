package app

import "github.com/tether-browser/tether/apitype"

// Extension returns the Extension page's state.
func (a *App) Extension() (apitype.ExtensionState, error) {
	s, err := a.c.Extension(a.ctx())
	if err != nil {
		return s, fail("read the extension's state", err)
	}
	s.Steps = nonNil(s.Steps)
	return s, nil
}

// WriteExtension has the daemon write the unpacked extension built into it
// to its folder (ExtensionState.Dir), replacing an older copy atomically.
// After an update, reload it in chrome://extensions.
func (a *App) WriteExtension() (apitype.ExtensionState, error) {
	s, err := a.c.WriteExtension(a.ctx())
	if err != nil {
		return s, fail("write the extension", err)
	}
	s.Steps = nonNil(s.Steps)
	a.log.Info("extension written from the window", "dir", s.Dir)
	return s, nil
}

// RevealExtension has the daemon open the extension's folder in the file
// manager, writing it first when it is not there.
func (a *App) RevealExtension() error {
	if err := a.c.RevealExtension(a.ctx()); err != nil {
		return fail("open the extension's folder", err)
	}
	return nil
}

// OpenTestBrowser has the daemon start `tether browser`: a separate
// Chromium profile with the extension loaded, for trying Tether without
// touching the user's own Chrome.
func (a *App) OpenTestBrowser() error {
	if err := a.c.OpenTestBrowser(a.ctx()); err != nil {
		return fail("start the test browser", err)
	}
	a.log.Info("test browser asked for from the window")
	return nil
}
