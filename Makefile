# Tether — build, run and test. See README.md.
#   make run    build everything and start Tether (daemon, tray and window)
#   make test   build everything and run every test, real Chromium included

GO        ?= go
BIN       := bin/tether
# The build with the window; bare bin/tether execs it (cli/build_split.go).
DESKTOP   := bin/tether-desktop
EXT       := extension
FE        := frontend
# The window is Wails v2 with WebKitGTK 4.1 on Linux: Debian and Ubuntu ship
# only libwebkit2gtk-4.1, which Wails selects with the webkit2_41 tag.
TAGS      := desktop,production,webkit2_41
# The one version string (x.y.z): `tether version`, the window, the
# extension's manifest and the package names. cli/version.go holds the
# default; `make dist VERSION=1.2.3` stamps another.
VERSION   ?= $(shell sed -n 's/^var version = "\(.*\)"$$/\1/p' cli/version.go)
LDFLAGS   := -X github.com/tether-browser/tether/cli.version=$(VERSION)
# The lean bin/tether (daemon, tray, CLI: what the login item runs) is built
# without cgo on Linux, where it needs none (the tray speaks D-Bus in Go): no
# libc mapped, 1.1-1.4 MB less idle RSS (bench/idleprof_test.go, 2026-12-03).
LEAN_ENV  := $(if $(filter Linux,$(shell uname -s)),CGO_ENABLED=0)
GOFILES   := $(shell find . -name '*.go' -not -path './$(EXT)/node_modules/*' 2>/dev/null)
EXTSRC    := $(shell find $(EXT)/src $(EXT)/static -type f 2>/dev/null) $(EXT)/build.mjs $(EXT)/package.json $(FE)/src/theme.css
FESRC     := $(shell find $(FE)/src $(FE)/wailsjs -type f 2>/dev/null) $(wildcard $(FE)/*.json $(FE)/*.ts $(FE)/*.js $(FE)/index.html)

.PHONY: all build run test test-go test-ext test-fe bindings screenshot generate deps-build deps-test deps-cross deps-dist clean cross bench dist test-dist mac-app

all: build

deps-build:
	@build/deps.sh nodejs:node npm:npm pkg-config:pkg-config
	@build/deps.sh libgtk-3-dev:pc=gtk+-3.0 libwebkit2gtk-4.1-dev:pc=webkit2gtk-4.1

deps-test: deps-build
	@build/deps.sh chromium:chromium dbus-x11:dbus-launch xvfb:Xvfb xdotool:xdotool imagemagick:import lintian:lintian caddy:caddy libnss3-tools:certutil

deps-cross:
	@build/deps.sh gcc-mingw-w64-x86-64:x86_64-w64-mingw32-gcc

deps-dist: deps-cross
	@build/deps.sh nsis:makensis dpkg-dev:dpkg-shlibdeps

$(EXT)/node_modules/.package-lock.json: $(EXT)/package-lock.json
	cd $(EXT) && npm ci --no-audit --no-fund
	@touch $@

$(EXT)/dist/manifest.json: $(EXT)/node_modules/.package-lock.json $(EXTSRC)
	cd $(EXT) && TETHER_VERSION=$(VERSION) npm run build

$(FE)/node_modules/.package-lock.json: $(FE)/package-lock.json
	cd $(FE) && npm ci --no-audit --no-fund
	@touch $@

$(FE)/dist/index.html: $(FE)/node_modules/.package-lock.json $(FESRC)
	cd $(FE) && npm run build

$(BIN): $(EXT)/dist/manifest.json $(GOFILES) go.mod go.sum
	$(LEAN_ENV) $(GO) build -ldflags '$(LDFLAGS)' -o $(BIN) .

$(DESKTOP): $(EXT)/dist/manifest.json $(FE)/dist/index.html $(GOFILES) go.mod go.sum
	$(GO) build -tags $(TAGS) -ldflags '$(LDFLAGS)' -o $(DESKTOP) .

# The window's typed bindings (frontend/wailsjs), generated from the Go App
# without the wails CLI (it does not build on Go 1.26); committed, and
# app/bindings_test.go fails when they are stale.
bindings:
	$(GO) run -tags bindings ./build/bindings >/dev/null

build: deps-build $(BIN) $(DESKTOP)

run: build
	./$(BIN)

generate: $(EXT)/node_modules/.package-lock.json
	$(GO) run ./build/genproto $(EXT)/src/protocol.schema.json
	cd $(EXT) && npm run gen

test: deps-test build test-ext test-fe test-go

test-ext: $(EXT)/node_modules/.package-lock.json
	cd $(EXT) && npm run typecheck && npm test

test-fe: $(FE)/node_modules/.package-lock.json
	cd $(FE) && npm run typecheck && npm test

# go test's -timeout: the end-to-end package takes 8-9 minutes on two cores
# here (test/e2e/main_test.go); the last CI run on record, before its tests
# ran side by side, ran past 15 minutes in it.
test-go: $(BIN) $(DESKTOP)
	@bad=$$(gofmt -l $(GOFILES)); if [ -n "$$bad" ]; then echo "not gofmt-clean (run gofmt -w):"; echo "$$bad"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags $(TAGS) .
	TETHER_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 20m ./...

# The README's picture of the window (docs/window.png): the real app under
# Xvfb, its timeline after a short real session through real Chromium.
screenshot: deps-test build
	@mkdir -p docs
	TETHER_BIN=$(CURDIR)/$(BIN) TETHER_SCREENSHOT=$(CURDIR)/docs/window.png $(GO) test -count=1 -run '^TestScreenshot$$' -v ./test/e2e/ | grep -v '^\[' | tail -5
	TETHER_BIN=$(CURDIR)/$(BIN) TETHER_POPUP_SCREENSHOT=$(CURDIR)/docs/popup.png $(GO) test -count=1 -run '^TestPopup$$' -v ./test/e2e/ | grep -v '^\[' | tail -5

# Benchmarks (about 20 minutes; not part of `make test`): Tether side by side
# with Playwright MCP and Chrome DevTools MCP (installed with npm into a
# temporary folder for the run) on the readability corpus. Writes BENCHMARKS.md.
# `make bench SMOKE=1`: 5 pages, Tether only, well under a minute; CI runs it,
# and it fails on any error. It prints its report and leaves BENCHMARKS.md alone.
bench: build
ifeq ($(SMOKE),1)
	$(GO) run ./bench all -smoke -bin $(BIN)
else
	$(GO) run ./bench all -bin $(BIN) > BENCHMARKS.md.tmp && mv BENCHMARKS.md.tmp BENCHMARKS.md
	@cat BENCHMARKS.md
endif

# Windows must keep building although it cannot run here. go-autostart
# needs cgo on Windows (the Startup-folder shortcut), hence MinGW. On macOS
# the tray, the approval dialog (purego, no cgo) and the daemon's side of
# the UI processes are vetted; the window (Wails on WebKit, cgo) can only be
# built on a Mac: docs/desktop-checklist.md.
cross: deps-cross $(EXT)/dist/manifest.json $(FE)/dist/index.html
	CGO_ENABLED=1 CC=x86_64-w64-mingw32-gcc GOOS=windows GOARCH=amd64 $(GO) build -tags desktop,production -ldflags '$(LDFLAGS)' -o bin/tether.exe .
	GOOS=darwin GOARCH=arm64 $(GO) vet ./tray
	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 $(GO) vet ./dialog ./uiproc ./localclient

# Release artefacts in dist/ (not committed): tether_<version>_amd64.deb
# (nfpm; Depends from dpkg-shlibdeps), tether-<version>-setup.exe (NSIS,
# warnings are errors; from `make cross`'s tether.exe) and
# tether-extension-<version>.zip (the Chrome Web Store upload: the manifest
# without its "key"). The Linux binaries are rebuilt stripped into bin/dist
# (only the link step differs from `make build`). build/dist/dist_test.go
# checks the result; CI runs `make dist` before `make test`.
# macOS (a .app with Info.plist's LSUIElement) is built on a Mac only:
# docs/desktop-checklist.md.
dist: deps-dist cross $(EXT)/dist/manifest.json $(FE)/dist/index.html
	@mkdir -p dist bin/dist
	$(LEAN_ENV) $(GO) build -buildmode=pie -ldflags '-s -w $(LDFLAGS)' -o bin/dist/tether .
	$(GO) build -tags $(TAGS) -buildmode=pie -ldflags '-s -w $(LDFLAGS)' -o bin/dist/tether-desktop .
	$(GO) run ./build/dist -version $(VERSION) -bin bin/dist -ext $(EXT)/dist -out dist deb zip
	makensis -WX -NOCD -V2 -DVERSION=$(VERSION) -DEXE=bin/tether.exe -DOUTFILE=dist/tether-$(VERSION)-setup.exe build/dist/tether.nsi > dist/makensis.log 2>&1 || { cat dist/makensis.log; exit 1; }
	@ls -l dist

# macOS only (it cannot be built here; docs/desktop-checklist.md):
# bin/Tether.app, both binaries in Contents/MacOS, Info.plist with
# LSUIElement (a menu bar app, no Dock icon) and the icon. Unsigned.
mac-app: $(EXT)/dist/manifest.json $(FE)/dist/index.html
	@test "$$(uname)" = Darwin || { echo "make mac-app runs on macOS only"; exit 1; }
	$(GO) build -ldflags '$(LDFLAGS)' -o bin/mac/tether .
	$(GO) build -tags desktop,production -ldflags '$(LDFLAGS)' -o bin/mac/tether-desktop .
	rm -rf bin/Tether.app && mkdir -p bin/Tether.app/Contents/MacOS bin/Tether.app/Contents/Resources
	cp bin/mac/tether bin/mac/tether-desktop bin/Tether.app/Contents/MacOS/
	sed 's/@VERSION@/$(VERSION)/g' build/dist/Info.plist > bin/Tether.app/Contents/Info.plist
	sips -s format icns build/dist/pkg/tether-64.png --out bin/Tether.app/Contents/Resources/tether.icns >/dev/null

# Builds dist/ and checks it (build/dist/dist_test.go): dpkg-deb's info and
# contents, lintian with no tag, the installer a PE file that makensis built
# without a warning, the zip's manifest without "key", and the unpacked zip
# in real Chromium (another id, refused until --allow-extension or
# extensionIds allows it, then paired; bin/dist/tether is the daemon); as
# root it also installs the .deb with apt-get, runs `tether version`, a
# serve smoke and the tray app (on Xvfb and a private D-Bus session with a
# tray host), and removes it again. CI runs it.
test-dist: deps-test dist
	TETHER_DIST=$(CURDIR)/dist TETHER_VERSION=$(VERSION) TETHER_BIN=$(CURDIR)/bin/dist/tether $(GO) test -count=1 -timeout 15m -v -run '^TestDist$$' ./build/dist

clean:
	rm -rf bin dist $(EXT)/dist $(FE)/dist
