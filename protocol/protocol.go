// Package protocol defines every frame exchanged between the Tether daemon and
// its Manifest V3 extension over the extension WebSocket.
//
// This file is the single source of truth for the wire format: the
// extension's TypeScript types (extension/src/protocol.gen.ts) are generated
// from the JSON Schema that Schema() derives from these types, and a test fails
// when the generated files are stale (run `make generate`).
//
// Every frame is one WebSocket text message holding one JSON object whose
// "type" field names its kind:
//
//	extension → daemon: hello, response, tabs_changed, download
//	daemon → extension: challenge, hello_ack, pairing, request, refused, reload
//
// The daemon proves itself first (protocol 4): the extension opens the
// socket offering a fresh nonce (NonceSubprotocolPrefix) and, once paired,
// its profile id (ProfileSubprotocolPrefix); the daemon's first frame is
// challenge, with its own nonce and proofs keyed on what only the real
// daemon holds (DaemonProof; see proof.go). The extension checks them and
// only then sends hello, which carries its own proof (ExtensionProof), never
// the pairing secret. A program other than Tether answering on the port
// learns no secret and is obeyed in nothing.
//
// The daemon answers hello with hello_ack, or refused and closes. A profile
// the daemon has never seen must first be approved by
// the user: the daemon answers pairing (with the pairing code the popup
// shows), holds the socket, and sends hello_ack (with the profile's new
// secret) once the user approves, or refused if the user denies
// (pairing_denied) or nobody approves it within 10 minutes
// (pairing_expired), or pairing_displaced when newer profiles pushed it out
// of the daemon's full waiting list (it keeps its code and reconnects within
// seconds). Afterwards the daemon sends requests, each with a unique id,
// and the extension answers each with exactly one response carrying that id;
// the extension pushes tabs_changed whenever its shared tabs change.
package protocol

import "encoding/json"

// ProfileSubprotocolPrefix starts the WebSocket subprotocol a paired
// extension offers when it opens the socket (Sec-WebSocket-Protocol, next
// to "tether"): "tether.profile.<profileId>.<NamedProof>". It tells the
// daemon which profile's key to prove itself with in its challenge
// (Challenge.ProfileProof), and, when the proof holds for a nonce not seen
// before, lets it keep that socket out of the bound on sockets that have
// not said hello yet. It carries no secret.
const ProfileSubprotocolPrefix = "tether.profile."

// NonceSubprotocolPrefix starts the subprotocol that carries the
// extension's fresh nonce: "tether.nonce.<64 hex digits>" (32 random bytes,
// new for every socket). The daemon's proofs cover it, so a proof recorded
// earlier cannot be played back.
const NonceSubprotocolPrefix = "tether.nonce."

// Subprotocol is the subprotocol the daemon selects when offered.
const Subprotocol = "tether"

// Version is the protocol version spoken by this build. A hello with another
// version is refused with a message naming both versions.
const Version = 4

// FrameType is the discriminator of every frame.
type FrameType string

// Frame kinds.
const (
	TypeHello FrameType = "hello"
	// TypeChallenge is the daemon's first frame (Challenge).
	TypeChallenge FrameType = "challenge"
	TypeHelloAck  FrameType = "hello_ack"
	TypeRequest   FrameType = "request"
	TypeResponse  FrameType = "response"
	TypeRefused   FrameType = "refused"
	TypePairing   FrameType = "pairing"
	// TypeTabsChanged is pushed by the extension when its shared tabs change.
	TypeTabsChanged FrameType = "tabs_changed"
	// TypeDownload is pushed by the extension when a download attributed
	// to a shared tab starts during, or within 10 s of, a tool call there
	// (then paused until the daemon decides: download_decide), and when
	// such a download ends.
	TypeDownload FrameType = "download"
	// TypeReload is sent by the daemon after hello_ack when it has just
	// rewritten the folder the extension was loaded from with a newer
	// build (Reload): the extension saves its shared tabs and reloads.
	TypeReload FrameType = "reload"
)

// Envelope is decoded first to learn a frame's type; the frame is then decoded
// again into its concrete struct.
type Envelope struct {
	Type FrameType `json:"type"`
}

// Hello is the extension's first frame on every connection.
type Hello struct {
	Type FrameType `json:"type" jsonschema:"enum=hello"`
	// Protocol is the extension's protocol Version.
	Protocol int `json:"protocol"`
	// ProfileID is a random UUID the extension keeps in chrome.storage.local;
	// it identifies one Chrome profile across restarts. The daemon accepts
	// 1 to 128 ASCII letters, digits, '-' and '_' (ValidProfileID): it is
	// shown in terminals and any local process may claim one.
	ProfileID string `json:"profileId" jsonschema:"minLength=1,maxLength=128,pattern=^[A-Za-z0-9_-]+$"`
	// Label is a human name for the profile, e.g. "Work".
	Label string `json:"label"`
	// ExtVersion is the extension's manifest version string (x.y.z).
	ExtVersion string `json:"extVersion"`
	// VersionName is the manifest's version_name: "<version> build <id>",
	// the id a hash of the built files (extension/build.mjs), so two
	// builds of the same version tell apart. Empty before 0.4.0.
	VersionName string `json:"versionName,omitempty"`
	// InstallType is chrome.management.getSelf()'s installType:
	// "development" (loaded unpacked), "normal" (the Web Store), "admin",
	// "sideload" or "other". The daemon rewrites only a "development" one.
	InstallType string `json:"installType,omitempty"`
	// Install is the folder's tether-install.json, present only when
	// Tether wrote the folder the extension was loaded from.
	Install *InstallMarker `json:"install,omitempty"`
	// UserAgent is navigator.userAgent, for display.
	UserAgent string `json:"userAgent,omitempty"`
	// Slug is the slug the daemon last assigned (from hello_ack), so slugs
	// survive a daemon that lost its records; empty on first contact.
	Slug string `json:"slug,omitempty"`
	// Proof is ExtensionProof keyed on the profile's pairing secret (64 hex
	// digits), over this socket's nonces; empty before pairing. A hello that
	// claims a known ProfileID without a valid proof is refused
	// (unauthorized). The secret itself is never sent after pairing.
	Proof string `json:"proof,omitempty"`
	// Tabs are the currently shared tabs.
	Tabs []TabInfo `json:"tabs"`
}

// Challenge is the daemon's first frame on a socket whose handshake
// offered a nonce (NonceSubprotocolPrefix). The extension sends hello only
// after checking it, and reads no other frame before: without a valid
// proof it sends nothing more, closes the socket and tells the user that
// another program answered on Tether's port.
type Challenge struct {
	Type FrameType `json:"type" jsonschema:"enum=challenge"`
	// Protocol is the daemon's protocol Version.
	Protocol int `json:"protocol"`
	// Nonce is the daemon's fresh nonce for this socket: 64 hex digits.
	Nonce string `json:"nonce" jsonschema:"pattern=^[0-9a-f]{64}$"`
	// ProfileProof is DaemonProof keyed on ProfileKey of the profile the
	// handshake named (ProfileSubprotocolPrefix); empty when the daemon
	// does not know that profile, or none was named.
	ProfileProof string `json:"profileProof,omitempty"`
	// PairingProof is DaemonProof keyed on the daemon's pairing key, which
	// the daemon writes into tether.json in every extension folder it
	// writes (ExtensionConfig.PairingKey): a new profile loaded from such a
	// folder pairs only with the daemon that wrote it.
	PairingProof string `json:"pairingProof"`
}

// InstallMarker is tether-install.json, which Tether writes into every
// extension folder it writes (the config dir's chrome-extension/ and
// `tether browser`'s copies). The daemon rewrites a folder only when its
// path is one Tether writes to and the marker on disk there has the same
// ID as the one the extension reports.
type InstallMarker struct {
	// Dir is the folder's absolute path as Tether wrote it.
	Dir string `json:"dir" jsonschema:"maxLength=4096"`
	// ID is random (16 hex digits), drawn when the folder was first written.
	ID string `json:"id" jsonschema:"maxLength=64"`
}

// Reload tells the extension that the daemon has rewritten the folder it
// was loaded from with the build in the daemon (Version, VersionName): it
// saves its shared tabs, their numbers and its document counter to
// chrome.storage.local and calls chrome.runtime.reload(). Sent at most
// once per connection, right after hello_ack.
type Reload struct {
	Type        FrameType `json:"type" jsonschema:"enum=reload"`
	Version     string    `json:"version"`
	VersionName string    `json:"versionName"`
}

// HelloAck accepts a hello.
type HelloAck struct {
	Type FrameType `json:"type" jsonschema:"enum=hello_ack"`
	// DaemonVersion is the daemon's build version.
	DaemonVersion string `json:"daemonVersion"`
	// AssignedLabel is the label the daemon records for this profile.
	AssignedLabel string `json:"assignedLabel"`
	// AssignedSlug is the short address of the profile in tool calls, e.g. "work".
	AssignedSlug string `json:"assignedSlug"`
	// Secret is set only when the daemon issues a new secret (at pairing):
	// 64 hex digits. The extension stores it in chrome.storage.local and
	// proves it holds it at every later connection (Hello.Proof) without
	// sending it; the daemon keeps only its SHA-256 (ProfileKey). It is
	// never shown to the user or logged.
	Secret string `json:"secret,omitempty"`
}

// Pairing tells an extension that the user must approve this profile before
// it can be used. The socket stays open; hello_ack or refused follows
// (refused with "pairing_expired" when nobody approved it within 10
// minutes: the extension then asks again when it reconnects; or with "pairing_displaced" when newer profiles pushed it out of the
// waiting list: it keeps its code, and an approval given meanwhile, and
// reconnects within seconds).
type Pairing struct {
	Type FrameType `json:"type" jsonschema:"enum=pairing"`
	// Code is this profile's pairing code: 6 characters from
	// 23456789ABCDEFGHJKMNPQRSTUVWXYZ (no 0/O, 1/I/L), e.g. "K7M4PX",
	// random for each new waiting entry, kept if the same profile id
	// reconnects while it waits. The daemon sends it only to this profile's
	// socket and shows it next to the entry in the Tether window, its tray
	// and `tether profiles`; the popup shows it so the user approves the
	// entry whose code matches. Approval takes the code or the full profile id.
	Code string `json:"code"`
	// Message tells the user how to approve, for the popup.
	Message string `json:"message"`
}

// TabChange names what changed in a tabs_changed frame.
type TabChange string

// Tab changes.
const (
	TabOpened    TabChange = "opened"
	TabClosed    TabChange = "closed"
	TabNavigated TabChange = "navigated"
	TabTitle     TabChange = "title"
	TabShared    TabChange = "shared"
	TabUnshared  TabChange = "unshared"
	TabActivated TabChange = "activated"
	// TabOwnerChanged: the user gave the tab to an AI app, or back.
	TabOwnerChanged TabChange = "owner"
)

// TabsChanged is pushed by the extension whenever a shared tab is opened,
// closed, navigated, retitled, shared, unshared, activated or given to
// an app (or back to the user), so the daemon
// never polls. Tabs is the complete list after the change.
type TabsChanged struct {
	Type   FrameType `json:"type" jsonschema:"enum=tabs_changed"`
	Change TabChange `json:"change" jsonschema:"enum=opened,enum=closed,enum=navigated,enum=title,enum=shared,enum=unshared,enum=activated,enum=owner"`
	// Tab is the number of the tab that changed.
	Tab  int       `json:"tab"`
	Tabs []TabInfo `json:"tabs"`
}

// Refused is sent instead of HelloAck when the daemon will not accept the
// connection; the daemon closes the socket right after it. The extension shows
// Message to the user and does not reconnect until it is reloaded when Code is
// "protocol_mismatch".
type Refused struct {
	Type    FrameType `json:"type" jsonschema:"enum=refused"`
	Code    ErrorCode `json:"code" jsonschema:"enum=stale_ref,enum=unknown_ref,enum=no_shared_tab,enum=unknown_tab,enum=restricted_page,enum=not_interactable,enum=timeout,enum=navigation_failed,enum=bad_request,enum=protocol_mismatch,enum=unauthorized,enum=pairing_denied,enum=too_many_profiles,enum=pairing_expired,enum=pairing_displaced,enum=dialog_open,enum=disabled,enum=internal"`
	Message string    `json:"message"`
}

// Method names a request the daemon sends to the extension.
type Method string

// Methods. Each names its params and result type.
const (
	// MethodNavigate loads a URL: NavigateParams → PageResult.
	MethodNavigate Method = "navigate"
	// MethodSnapshot reads a tab's ARIA snapshot: TabParams → PageResult.
	MethodSnapshot Method = "snapshot"
	// MethodClick clicks an element: ClickParams → PageResult.
	MethodClick Method = "click"
	// MethodType types into an element: TypeParams → PageResult.
	MethodType Method = "type"
	// MethodTabsList lists the shared tabs: TabsListParams → TabsListResult.
	MethodTabsList Method = "tabs_list"
	// MethodTabNew opens a new shared tab: TabNewParams → PageResult.
	MethodTabNew Method = "tab_new"
	// MethodTabClose closes a shared tab: TabParams → TabsListResult.
	MethodTabClose Method = "tab_close"
	// MethodTabSelect brings a shared tab to the front: TabParams → TabsListResult.
	MethodTabSelect Method = "tab_select"
	// MethodFind searches the page's ARIA tree: FindParams → FindResult.
	MethodFind Method = "find"
	// MethodRead returns the rendered DOM for Markdown conversion: TabParams → ReadResult.
	MethodRead Method = "read"
	// MethodConsole returns the tab's buffered console messages: ConsoleParams → ConsoleResult.
	MethodConsole Method = "console"
	// MethodSelectOption picks options of a native select: SelectOptionParams → PageResult.
	MethodSelectOption Method = "select_option"
	// MethodHover moves the pointer over an element or a point: HoverParams → PageResult.
	MethodHover Method = "hover"
	// MethodDrag drags one element onto another (HTML5 drag and drop), or from one point to another: DragParams → PageResult.
	MethodDrag Method = "drag"
	// MethodPressKey presses a key or combo in the focused element: PressKeyParams → PageResult.
	MethodPressKey Method = "press_key"
	// MethodFileUpload sets files on a file input: FileUploadParams → PageResult.
	MethodFileUpload Method = "file_upload"
	// MethodWaitFor waits for text to appear or disappear, or for a time: WaitForParams → PageResult.
	MethodWaitFor Method = "wait_for"
	// MethodHandleDialog arms the answer to the tab's next dialog(s): HandleDialogParams → DialogArmResult.
	MethodHandleDialog Method = "handle_dialog"
	// MethodHistory goes back, forward or reloads: HistoryParams → PageResult.
	MethodHistory Method = "history"
	// MethodScreenshot captures the tab: ScreenshotParams → ScreenshotResult.
	MethodScreenshot Method = "screenshot"
	// MethodEvaluate runs a JavaScript expression in the page: EvaluateParams → EvaluateResult.
	MethodEvaluate Method = "evaluate"
	// MethodReadURL opens a URL in a background tab, waits for load and returns its DOM: ReadURLParams → ReadResult.
	MethodReadURL Method = "read_url"
	// MethodScroll scrolls the page or a container, or an element into view: ScrollParams → PageResult (with Scrolled).
	MethodScroll Method = "scroll"
	// MethodTabOwner gives a shared tab to an AI app, or back to the user (the user's choice in the window): TabOwnerParams → TabInfo.
	MethodTabOwner Method = "tab_owner"
	// MethodNetwork lists a shared tab's requests since it was shared, or
	// one request with its headers: NetworkParams → NetworkResult.
	MethodNetwork Method = "network"
	// MethodDownloads lists the downloads attributed to a shared tab:
	// TabParams → DownloadsResult.
	MethodDownloads Method = "downloads"
	// MethodDownloadDecide resumes or cancels a download the extension
	// paused for the policy's decision (DownloadEvent):
	// DownloadDecideParams → Download.
	MethodDownloadDecide Method = "download_decide"
)

// Mutates reports whether a method changes a tab. Mutating calls on one tab
// are serialized by the daemon; reads may run alongside them.
func (m Method) Mutates() bool {
	switch m {
	case MethodSnapshot, MethodTabsList, MethodFind, MethodRead, MethodConsole, MethodScreenshot, MethodReadURL, MethodNetwork, MethodDownloads:
		return false
	}
	return true
}

// Request is a daemon → extension call.
type Request struct {
	Type FrameType `json:"type" jsonschema:"enum=request"`
	// ID correlates the response; unique per connection.
	ID     string `json:"id"`
	Method Method `json:"method" jsonschema:"enum=navigate,enum=snapshot,enum=click,enum=type,enum=tabs_list,enum=tab_new,enum=tab_close,enum=tab_select,enum=find,enum=read,enum=console,enum=select_option,enum=hover,enum=drag,enum=press_key,enum=file_upload,enum=wait_for,enum=handle_dialog,enum=history,enum=screenshot,enum=evaluate,enum=read_url,enum=scroll,enum=tab_owner,enum=network,enum=downloads,enum=download_decide"`
	// Params is the method's params object (see Method).
	Params json.RawMessage `json:"params" jsonschema:"type=object"`
	// TimeoutMs is how long the daemon waits for the response; the extension
	// should give up a little earlier and answer with code "timeout".
	TimeoutMs int `json:"timeoutMs"`
	// IdempotencyKey, when set, names the agent's call this request belongs
	// to (1 to 128 printable ASCII characters: the MCP request's _meta
	// "tether/idempotencyKey" scoped to the agent's app,
	// IdempotentCall.WireKey; the daemon sends it with every request of
	// that call, reads too). A key belongs to one call: Tool and
	// CallFingerprint name it. The extension remembers each key with its
	// call for 10 minutes and refuses (CodeBadRequest) a request whose
	// call is another (another tool or other arguments). For a method that
	// acts (Method.Mutates) it keeps one step per method: a repeat is
	// answered with the first answer, or with CodeDuplicate while the first
	// is still running (or its answer was lost), never by acting again.
	// Reads of the same call simply run.
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"minLength=1,maxLength=128"`
	// Tool is the MCP tool of the agent's call, e.g. "browser_click"; sent
	// with IdempotencyKey.
	Tool string `json:"tool,omitempty" jsonschema:"maxLength=64"`
	// CallFingerprint is a digest of that call's arguments (64 hex
	// characters, SHA-256 of their JSON with sorted keys); sent with
	// IdempotencyKey. Only compared for equality.
	CallFingerprint string `json:"callFingerprint,omitempty" jsonschema:"maxLength=64"`
	// SentBefore is true on a request of a method that acts when the daemon
	// sent a request of that method for this IdempotencyKey's call before
	// (the agent repeats a call whose first attempt reached the browser).
	// An extension that holds no step of that method for the key (its
	// record was dropped for room: it keeps at most 500 keys) answers
	// CodeDuplicate without acting, since the first attempt may have acted.
	SentBefore bool `json:"sentBefore,omitempty"`
}

// Response answers one Request: exactly one of Result and Error is set.
type Response struct {
	Type   FrameType       `json:"type" jsonschema:"enum=response"`
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result,omitempty" jsonschema:"type=object"`
	Error  *Error          `json:"error,omitempty"`
}

// ErrorCode classifies an error so the daemon can tell the agent what to do.
type ErrorCode string

// Error codes. The message that accompanies each says what to do next.
const (
	// CodeStaleRef: the ref no longer names an element in the document; take a new snapshot.
	CodeStaleRef ErrorCode = "stale_ref"
	// CodeUnknownRef: the ref was never issued in this tab.
	CodeUnknownRef ErrorCode = "unknown_ref"
	// CodeNoSharedTab: the profile has no shared tab to act on.
	CodeNoSharedTab ErrorCode = "no_shared_tab"
	// CodeUnknownTab: no shared tab has that number.
	CodeUnknownTab ErrorCode = "unknown_tab"
	// CodeRestrictedPage: Chrome does not let extensions script this page (chrome://, the Web Store…).
	CodeRestrictedPage ErrorCode = "restricted_page"
	// CodeNotInteractable: the element exists but cannot take this action (disabled, not editable…).
	CodeNotInteractable ErrorCode = "not_interactable"
	// CodeTimeout: the operation did not finish in time.
	CodeTimeout ErrorCode = "timeout"
	// CodeNavigationFailed: the page did not load (bad URL, network error).
	CodeNavigationFailed ErrorCode = "navigation_failed"
	// CodeBadRequest: the params did not validate.
	CodeBadRequest ErrorCode = "bad_request"
	// CodeProtocolMismatch: the extension and daemon speak different protocol versions.
	CodeProtocolMismatch ErrorCode = "protocol_mismatch"
	// CodeUnauthorized: the hello claimed a known profile without a valid proof of its secret.
	CodeUnauthorized ErrorCode = "unauthorized"
	// CodePairingDenied: the user denied this profile.
	CodePairingDenied ErrorCode = "pairing_denied"
	// CodeTooManyProfiles: the daemon already has its maximum of connected profiles.
	CodeTooManyProfiles ErrorCode = "too_many_profiles"
	// CodePairingExpired: a profile waiting for approval was let go (nobody
	// approved it within 10 minutes); the
	// extension asks again when it reconnects.
	CodePairingExpired ErrorCode = "pairing_expired"
	// CodePairingDisplaced: a profile waiting for approval was pushed out of
	// the daemon's full waiting list by newer ones (any local process can
	// ask). The daemon keeps its code, and an approval given meanwhile, for
	// 10 minutes: the extension keeps showing the code and reconnects within
	// a few seconds.
	CodePairingDisplaced ErrorCode = "pairing_displaced"
	// CodeDialogOpen: a dialog blocks the page; the message says which and how to answer it.
	CodeDialogOpen ErrorCode = "dialog_open"
	// CodeDisabled: the feature is off in the user's settings (e.g. trusted input); the message says which setting.
	CodeDisabled ErrorCode = "disabled"
	// CodeDuplicate: a request repeated an idempotency key whose first
	// request is still running or whose answer was not kept; the message
	// tells the agent to take a snapshot instead of retrying.
	CodeDuplicate ErrorCode = "duplicate"
	// CodeInternal: a bug or an unexpected browser failure.
	CodeInternal ErrorCode = "internal"
)

// ErrorCodes lists every ErrorCode. The decoder accepts exactly these in a
// response's error, and the jsonschema enum on Error.Code (what the
// extension's generated types allow) must list the same:
// TestErrorCodesMatchSchema fails when a new code is added to one only.
var ErrorCodes = []ErrorCode{
	CodeStaleRef, CodeUnknownRef, CodeNoSharedTab, CodeUnknownTab, CodeRestrictedPage, CodeNotInteractable,
	CodeTimeout, CodeNavigationFailed, CodeBadRequest, CodeProtocolMismatch, CodeUnauthorized, CodePairingDenied,
	CodeTooManyProfiles, CodePairingExpired, CodePairingDisplaced, CodeDialogOpen, CodeDisabled, CodeDuplicate, CodeInternal,
}

// Error is a failed request.
type Error struct {
	Code    ErrorCode `json:"code" jsonschema:"enum=stale_ref,enum=unknown_ref,enum=no_shared_tab,enum=unknown_tab,enum=restricted_page,enum=not_interactable,enum=timeout,enum=navigation_failed,enum=bad_request,enum=protocol_mismatch,enum=unauthorized,enum=pairing_denied,enum=too_many_profiles,enum=pairing_expired,enum=pairing_displaced,enum=dialog_open,enum=disabled,enum=duplicate,enum=internal"`
	Message string    `json:"message"`
}

// TabScoped is implemented by the params of every method that addresses a
// tab, so the daemon can route and serialize calls per tab.
type TabScoped interface {
	TabNumber() int
	SetTabNumber(int)
}

// TabNumber returns the addressed tab number (0: the current tab).
func (p *TabParams) TabNumber() int { return p.Tab }

// SetTabNumber addresses tab n.
func (p *TabParams) SetTabNumber(n int) { p.Tab = n }

// TabParams addresses one shared tab. Tab is the tab's number as listed by
// tabs_list; 0 or absent means the current tab: the shared tab used last, else
// Chrome's active tab if it is shared.
type TabParams struct {
	Tab int `json:"tab,omitempty"`
}

// SnapshotOptions shape every snapshot a method returns.
type SnapshotOptions struct {
	// MaxChars caps the snapshot text; past it, whole lines are left out and
	// a last line says how many elements were left out and how to reach
	// them (browser_find, or a subtree ref). 0: the extension's default (40 000).
	MaxChars int `json:"maxChars,omitempty"`
	// URLs prints each link's href as a "- /url: …" line under it. Off by
	// default: URLs are a fifth of a typical snapshot, and browser_read
	// gives every link with its absolute URL.
	URLs bool `json:"urls,omitempty"`
	// PackOver asks for a page result's snapshot text, when it is longer
	// than PackOver UTF-16 code units and nothing was cut from it or
	// stitched into it, packed in PageResult.SnapshotGzip instead of
	// Snapshot: the extension's message hops (content script → service
	// worker → offscreen document → socket) then copy a tenth of a large
	// page's text. 0: never packed. A daemon sends it only if it reads
	// SnapshotGzip (PackSnapshotOver).
	PackOver int `json:"packOver,omitempty"`
}

// PackSnapshotOver is the PackOver the daemon asks for (UTF-16 code units,
// 128 Ki): an uncapped snapshot of a large page; the default 40 000-character
// cap never reaches it.
const PackSnapshotOver = 128 << 10

// MaxUnpackedSnapshot is the most bytes a PageResult.SnapshotGzip may
// unpack to (64 MiB: the largest snapshotMaxChars, 10 000 000, of three-byte
// UTF-8 characters, with room to spare); more is refused as malformed.
const MaxUnpackedSnapshot = 64 << 20

// SnapshotParams reads a tab's ARIA snapshot.
type SnapshotParams struct {
	TabParams
	SnapshotOptions
	// Ref limits the snapshot to that element's subtree.
	Ref string `json:"ref,omitempty"`
	// Depth limits how many levels below the root are printed; 0: all.
	Depth int `json:"depth,omitempty"`
}

// NavigateParams loads URL in a tab. With no shared tab at all, the extension
// opens a new tab, shares it and loads URL there.
type NavigateParams struct {
	TabParams
	SnapshotOptions
	// URL is absolute: http, https, file or about:blank.
	URL string `json:"url"`
	// NewTab opens URL in a new shared tab instead of the addressed one.
	NewTab bool `json:"newTab,omitempty"`
	// Owner is the app and session the new tab belongs to (NewTab only).
	// A new tab opens in the background (active: false); browser_tabs
	// select brings it to the front.
	Owner *TabOwner `json:"owner,omitempty"`
}

// Point is a position in CSS pixels: in the top document's viewport, or in
// the document (from its top-left corner) when the params say FullPage.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// ClickParams clicks the element named by Ref, or the point At (then Ref
// is empty).
type ClickParams struct {
	TabParams
	SnapshotOptions
	Ref string `json:"ref"`
	// Trusted clicks with trusted input through chrome.debugger (only when
	// the user enabled it in settings).
	Trusted bool `json:"trusted,omitempty"`
	// Button is left (default), right or middle.
	Button string `json:"button,omitempty" jsonschema:"enum=left,enum=right,enum=middle"`
	// ClickCount is 1 (default) or 2: a double-click.
	ClickCount int `json:"clickCount,omitempty"`
	// Modifiers are the keys held during the click: Alt, Control, Meta, Shift.
	Modifiers []string `json:"modifiers,omitempty"`
	// At is the point to click instead of an element.
	At *Point `json:"at,omitempty"`
	// FullPage: At is in document CSS pixels; the page is scrolled to it first.
	FullPage bool `json:"fullPage,omitempty"`
}

// HoverParams moves the pointer onto the element named by Ref, or onto the
// point At (then Ref is empty).
type HoverParams struct {
	TabParams
	SnapshotOptions
	Ref string `json:"ref"`
	// Trusted hovers with trusted input (CSS :hover applies).
	Trusted bool `json:"trusted,omitempty"`
	// At is the point to hover instead of an element.
	At *Point `json:"at,omitempty"`
	// FullPage: At is in document CSS pixels; the page is scrolled to it first.
	FullPage bool `json:"fullPage,omitempty"`
}

// TypeParams replaces the value of the editable element named by Ref with Text.
type TypeParams struct {
	TabParams
	SnapshotOptions
	Ref  string `json:"ref"`
	Text string `json:"text"`
	// Submit presses Enter after typing (submits the element's form).
	Submit bool `json:"submit,omitempty"`
}

// TabsListParams has no fields yet.
type TabsListParams struct{}

// TabNewParams opens URL in a new tab, which is shared automatically.
type TabNewParams struct {
	// URL is absolute; empty opens about:blank.
	URL string `json:"url,omitempty"`
	// Owner is the app and session the new tab belongs to. The tab opens
	// in the background (active: false); tab_select brings it forward.
	Owner *TabOwner `json:"owner,omitempty"`
}

// HeaderSession is the HTTP header with which `tether mcp` names its
// session for good: a random id it keeps while it runs, over every MCP
// session it opens with a daemon (after a daemon restart it initializes
// again, and stays the same session to Tether: its tabs stay its own).
// 16 to 64 characters of [A-Za-z0-9_-]; any other value is ignored.
const HeaderSession = "Tether-Session"

// ValidSessionKey reports whether v may name a session (HeaderSession).
func ValidSessionKey(v string) bool {
	if len(v) < 16 || len(v) > 64 {
		return false
	}
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// TabOwner is the AI app and MCP session a shared tab belongs to: the one
// that opened it (or the tab it was opened from), or the app the user gave
// it to. A tab without an owner is the user's, usable by every session.
type TabOwner struct {
	// App is the app's name: its MCP clientInfo.name, cleaned as the
	// timeline shows it ("" for a client that sent none).
	App string `json:"app"`
	// Session is the MCP session's id ("" for a tab the user gave to the
	// app rather than to one of its sessions).
	Session string `json:"session,omitempty"`
}

// TabOwnerParams gives tab Tab to Owner's app, or back to the user when
// Owner is nil. A tab given to an app joins no tab group; one given back
// leaves its group.
type TabOwnerParams struct {
	TabParams
	Owner *TabOwner `json:"owner,omitempty"`
}

// TabResult is implemented by the results that name the tab they
// describe (a tab the call opened, for tab_new and navigate with NewTab).
type TabResult interface {
	ResultTab() int
}

// ResultTab implements TabResult.
func (r *PageResult) ResultTab() int { return r.Tab }

// ResultTab implements TabResult.
func (r *ReadResult) ResultTab() int { return r.Tab }

// Opener is implemented by the params of the methods that open a tab, so
// the daemon can say whose the new tab is.
type Opener interface {
	SetOwner(*TabOwner)
}

// SetOwner implements Opener.
func (p *TabNewParams) SetOwner(o *TabOwner) { p.Owner = o }

// SetOwner implements Opener.
func (p *NavigateParams) SetOwner(o *TabOwner) { p.Owner = o }

// SetOwner implements Opener.
func (p *ReadURLParams) SetOwner(o *TabOwner) { p.Owner = o }

// PageResult describes a tab after a read or an action.
type PageResult struct {
	// Tab is the shared tab's number.
	Tab   int    `json:"tab"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// Snapshot is the page's ARIA snapshot, Playwright aria-snapshot style:
	// one "- role "name" [state] [ref=e7]" line per node, nested by two spaces.
	Snapshot string `json:"snapshot"`
	// SnapshotGzip, when the request's PackOver asked for it, is the
	// snapshot text packed: base64 (RFC 4648, section 4) of its UTF-8 bytes
	// gzip-compressed (RFC 1952); Snapshot is then "". DecodeResult unpacks
	// it into Snapshot, so a decoded PageResult never carries it.
	SnapshotGzip string `json:"snapshotGzip,omitempty"`
	// Doc is the number of the top frame's document the snapshot is of
	// (the d<doc> of its refs); 0 when unknown (about:blank, a document
	// that issued no ref yet). A reload is another document at the same URL.
	Doc int `json:"doc,omitempty"`
	// OpenedTabs lists tabs the action opened (target=_blank links,
	// window.open, OAuth popups); they are shared automatically.
	OpenedTabs []TabInfo `json:"openedTabs,omitempty"`
	// Dialogs lists the alert/confirm/prompt/beforeunload dialogs that
	// occurred in this tab since the previous result, with the answer given.
	Dialogs []DialogEvent `json:"dialogs,omitempty"`
	// Omitted is the number of elements the snapshot left out for size;
	// with OmittedMore, a lower bound.
	Omitted int `json:"omitted,omitempty"`
	// OmittedMore is true when the page was not walked past the cap's
	// budget: more than Omitted elements were left out.
	OmittedMore bool `json:"omittedMore,omitempty"`
	// Partial is true when reading the page ran into the call's deadline:
	// the snapshot holds what was read by then (an action itself is never
	// cut short, only its follow-up snapshot).
	Partial bool `json:"partial,omitempty"`
	// Scrolled reports what a scroll did (scroll only).
	Scrolled *ScrollReport `json:"scrolled,omitempty"`
}

// ScrollParams scrolls the page or a container by DX/DY CSS pixels, or to
// one of its edges (To), or brings Ref into view (To "view").
type ScrollParams struct {
	TabParams
	SnapshotOptions
	// Ref names the container, or an element inside it (its nearest
	// scrollable ancestor scrolls); empty: the page. With To "view", the
	// element to bring into view (required then).
	Ref string `json:"ref,omitempty"`
	// To is an edge (top, bottom, left, right) or view; empty: by DX/DY.
	To string `json:"to,omitempty" jsonschema:"enum=top,enum=bottom,enum=left,enum=right,enum=view"`
	// DX and DY are CSS pixels right and down (negative: left, up).
	DX int `json:"dx,omitempty"`
	DY int `json:"dy,omitempty"`
}

// ScrollReport says what a scroll did, in CSS pixels.
type ScrollReport struct {
	// Page is true when the page (the document's scrolling element)
	// scrolled, false for an inner container.
	Page bool `json:"page"`
	// DX and DY are how far the scroll position moved.
	DX int `json:"dx"`
	DY int `json:"dy"`
	// Left and Top are the scroll position afterwards; Width and Height
	// the scrollable size; ViewWidth and ViewHeight the visible size.
	Left       int `json:"left"`
	Top        int `json:"top"`
	Width      int `json:"width"`
	Height     int `json:"height"`
	ViewWidth  int `json:"viewWidth"`
	ViewHeight int `json:"viewHeight"`
	// Added counts the elements that appeared in the container while it
	// scrolled (virtualized rows, infinite scroll), Removed those that went.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Grew is how much the scrollable height grew (content loaded at the end).
	Grew int `json:"grew"`
	// Hidden is true when the tab was not visible (a background tab, a
	// minimized window): Chrome runs no animation frames there, so a page
	// that renders on a frame may not have drawn what scrolled in. The
	// scroll never brings the tab to the front; the agent may (tab_select).
	Hidden bool `json:"hidden,omitempty"`
}

// DialogEvent is one dialog a page opened.
type DialogEvent struct {
	// Kind is alert, confirm, prompt or beforeunload.
	Kind    string `json:"kind" jsonschema:"enum=alert,enum=confirm,enum=prompt,enum=beforeunload"`
	Message string `json:"message"`
	// Accepted is the answer given: true for OK.
	Accepted bool `json:"accepted"`
	// PromptText is the text answered to a prompt, if accepted.
	PromptText string `json:"promptText,omitempty"`
	// Armed is true when the answer came from browser_handle_dialog, false
	// when it was the default policy (alert accepted; confirm, prompt dismissed).
	Armed bool `json:"armed"`
	// Native is true for a dialog the browser showed to the user, who
	// answered it (the page opened it while the AI was not acting on the
	// tab); Accepted and PromptText are then the user's answer.
	Native bool `json:"native,omitempty"`
}

// RefParams names one element.
type RefParams struct {
	TabParams
	SnapshotOptions
	Ref string `json:"ref"`
	// Trusted performs the action with trusted input through chrome.debugger
	// (only when the user enabled it in settings).
	Trusted bool `json:"trusted,omitempty"`
}

// FindParams searches the ARIA tree; at least one of Text and Role is set.
type FindParams struct {
	TabParams
	// Text matches accessible names and text, case-insensitively.
	Text string `json:"text,omitempty"`
	// Role matches the ARIA role exactly.
	Role string `json:"role,omitempty"`
	// Limit caps the matches (default 50).
	Limit int `json:"limit,omitempty"`
}

// FindMatch is one element or text run that matched.
type FindMatch struct {
	// Line is the snapshot line, e.g. `- button "Save" [ref=e12]`.
	Line string `json:"line"`
	Ref  string `json:"ref,omitempty"`
	// Context is the nearest heading or table row above the match.
	Context string `json:"context,omitempty"`
}

// FindResult lists the matches.
type FindResult struct {
	Tab     int         `json:"tab"`
	URL     string      `json:"url"`
	Title   string      `json:"title"`
	Matches []FindMatch `json:"matches"`
	// Total is the number of matches before Limit.
	Total int `json:"total"`
	// Partial is true when the search ran into the call's deadline: the
	// matches are those found in the part of the page searched by then.
	Partial bool `json:"partial,omitempty"`
	// More is true when a search by role alone stopped once it had more
	// matches than its limit: Total is then a floor, not a count.
	More bool `json:"more,omitempty"`
}

// ReadResult is a page's rendered DOM, for conversion to Markdown by the daemon.
type ReadResult struct {
	Tab   int    `json:"tab"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// HTML is document.documentElement.outerHTML of the rendered page, with
	// open shadow roots inlined, form values reflected, and scripts removed.
	HTML string `json:"html"`
}

// ReadURLParams opens URL in a background tab for reading.
type ReadURLParams struct {
	URL string `json:"url"`
	// Owner is the app and session the tab belongs to while it is open.
	Owner *TabOwner `json:"owner,omitempty"`
	// CloseAfter closes the tab after reading (default true in the tool).
	CloseAfter bool `json:"closeAfter"`
}

// ConsoleParams reads the tab's console buffer.
type ConsoleParams struct {
	TabParams
	// Clear empties the buffer after reading.
	Clear bool `json:"clear,omitempty"`
}

// ConsoleMessage is one console call or uncaught error.
type ConsoleMessage struct {
	// Level is log, info, warn, error, debug, exception (uncaught error or
	// rejection), or network (the browser's own entry for a failed request).
	Level string `json:"level"`
	Text  string `json:"text"`
	// Time is milliseconds since the Unix epoch.
	Time int64  `json:"time"`
	URL  string `json:"url,omitempty"`
}

// ConsoleResult is the tab's console buffer, oldest first.
type ConsoleResult struct {
	Tab      int              `json:"tab"`
	Messages []ConsoleMessage `json:"messages"`
	// Dropped counts messages dropped because the buffer was full.
	Dropped int `json:"dropped"`
}

// NetworkParams reads a shared tab's requests.
type NetworkParams struct {
	TabParams
	// ID asks for that one request, with its headers; empty: every request
	// kept, without headers.
	ID string `json:"id,omitempty"`
}

// Header is one HTTP header. Cookie, Set-Cookie, Authorization and
// Proxy-Authorization values are always "<redacted>".
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// NetRequest is one request a shared tab made (webRequest's view: no bodies).
type NetRequest struct {
	// ID is Chrome's request id.
	ID     string `json:"id"`
	Method string `json:"method"`
	URL    string `json:"url"`
	// Type is webRequest's resource type (main_frame, sub_frame, script,
	// image, xmlhttprequest for fetch and XHR, websocket, other…).
	Type string `json:"type"`
	// Status is the HTTP status code; 0 without a response.
	Status int `json:"status,omitempty"`
	// Error is Chrome's network error (net::ERR_…) when the request failed.
	Error string `json:"error,omitempty"`
	// Start is milliseconds since the Unix epoch.
	Start int64 `json:"start"`
	// Duration is milliseconds from start to the response's end or the
	// error; absent while Pending.
	Duration int64 `json:"duration,omitempty"`
	// Pending: no response end or error yet.
	Pending bool `json:"pending,omitempty"`
	// Size is the response's Content-Length in bytes, -1 when not sent.
	Size int64 `json:"size"`
	// Initiator is the origin that caused the request, when Chrome says.
	Initiator string `json:"initiator,omitempty"`
	FromCache bool   `json:"fromCache,omitempty"`
	// RequestHeaders and ResponseHeaders are set only when NetworkParams
	// named this request.
	RequestHeaders  []Header `json:"requestHeaders,omitempty"`
	ResponseHeaders []Header `json:"responseHeaders,omitempty"`
}

// NetworkResult is a shared tab's requests, oldest first.
type NetworkResult struct {
	Tab      int          `json:"tab"`
	Requests []NetRequest `json:"requests"`
	// Dropped counts older requests the bounded ring let go.
	Dropped int `json:"dropped"`
}

// Download is one download attributed to a shared tab.
type Download struct {
	ID  int    `json:"id"`
	Tab int    `json:"tab"`
	URL string `json:"url"`
	// Filename is the full path on disk; empty until Chrome chose it.
	Filename string `json:"filename"`
	Mime     string `json:"mime,omitempty"`
	// State is in_progress, complete or interrupted.
	State string `json:"state"`
	// Error is the interrupt reason (e.g. USER_CANCELED, NETWORK_FAILED).
	Error string `json:"error,omitempty"`
	// Received and Total are bytes; Total is -1 when unknown.
	Received int64 `json:"received"`
	Total    int64 `json:"total"`
	Paused   bool  `json:"paused,omitempty"`
	// WaitingForUser: Chrome asks the user where to save it, or whether to
	// keep a dangerous file.
	WaitingForUser bool `json:"waitingForUser,omitempty"`
	// Start is milliseconds since the Unix epoch.
	Start int64 `json:"start"`
}

// DownloadsResult is the downloads attributed to a shared tab, oldest first.
type DownloadsResult struct {
	Tab       int        `json:"tab"`
	Downloads []Download `json:"downloads"`
}

// DownloadEventKind names what a download frame reports.
type DownloadEventKind string

// Download events.
const (
	// DownloadStarted: a new download; Paused says whether the extension
	// paused it to wait for download_decide.
	DownloadStarted DownloadEventKind = "started"
	// DownloadEnded: a download reported as started completed or was
	// interrupted (Download.State says which).
	DownloadEnded DownloadEventKind = "ended"
)

// DownloadEvent is a download of a shared tab (numbered Download.Tab)
// that started during, or within 10 s of, a tool call there, or its end;
// Download is the item as Chrome states it (Filename may be empty until
// Chrome chose it).
type DownloadEvent struct {
	Type     FrameType         `json:"type" jsonschema:"enum=download"`
	Event    DownloadEventKind `json:"event" jsonschema:"enum=started,enum=ended"`
	Download Download          `json:"download"`
	// Site is the tab's origin when the download started: the site the
	// policy judges.
	Site string `json:"site"`
	// Paused: the extension paused the download until download_decide.
	Paused bool `json:"paused,omitempty"`
}

// DownloadDecideParams resumes (allow) or cancels (deny) download ID,
// paused for the policy: cancel also removes a file already written.
type DownloadDecideParams struct {
	ID     int    `json:"id"`
	Action string `json:"action" jsonschema:"enum=resume,enum=cancel"`
}

// SelectOptionParams selects options of a native select by value or label.
type SelectOptionParams struct {
	RefParams
	Values []string `json:"values"`
}

// DragParams drags FromRef onto ToRef, or presses at From, moves to To and
// releases there (then the refs are empty).
type DragParams struct {
	TabParams
	SnapshotOptions
	FromRef string `json:"fromRef"`
	ToRef   string `json:"toRef"`
	From    *Point `json:"from,omitempty"`
	To      *Point `json:"to,omitempty"`
	// FullPage: From and To are in document CSS pixels; the page is
	// scrolled to them first.
	FullPage bool `json:"fullPage,omitempty"`
}

// PressKeyParams presses Key: a single key ("Enter", "a", "ArrowDown") or a
// combo joined by "+" ("Control+A", "Shift+Tab"), in the focused element.
type PressKeyParams struct {
	TabParams
	SnapshotOptions
	Key     string `json:"key"`
	Trusted bool   `json:"trusted,omitempty"`
}

// UploadFile is one file for a file input.
type UploadFile struct {
	Name string `json:"name"`
	Mime string `json:"mime"`
	// DataBase64 is the file's content, base64 (standard encoding).
	DataBase64 string `json:"dataBase64"`
}

// FileUploadParams sets Files on the file input Ref names, or on the input
// that the control Ref names opens (a button or label forwarding to a hidden input).
type FileUploadParams struct {
	RefParams
	Files []UploadFile `json:"files"`
}

// WaitForParams waits until Text appears, TextGone disappears, or TimeMs
// passes (at least one is set).
type WaitForParams struct {
	TabParams
	SnapshotOptions
	Text     string `json:"text,omitempty"`
	TextGone string `json:"textGone,omitempty"`
	TimeMs   int    `json:"timeMs,omitempty"`
}

// HandleDialogParams arms the answer to the tab's next Times dialogs.
type HandleDialogParams struct {
	TabParams
	Accept     bool   `json:"accept"`
	PromptText string `json:"promptText,omitempty"`
	// Times is how many dialogs the answer covers (default 1).
	Times int `json:"times,omitempty"`
}

// DialogArmResult confirms the armed answer and lists dialogs so far.
type DialogArmResult struct {
	Tab     int           `json:"tab"`
	Armed   int           `json:"armed"`
	Dialogs []DialogEvent `json:"dialogs,omitempty"`
}

// HistoryParams goes back, forward or reloads, then waits for load.
type HistoryParams struct {
	TabParams
	SnapshotOptions
	Action string `json:"action" jsonschema:"enum=back,enum=forward,enum=reload"`
}

// ScreenshotParams captures the tab with chrome.tabs.captureVisibleTab.
type ScreenshotParams struct {
	TabParams
	// FullPage scrolls and stitches the whole page.
	FullPage bool `json:"fullPage,omitempty"`
	// Ref captures only that element's box.
	Ref string `json:"ref,omitempty"`
	// Format is png (default) or jpeg.
	Format string `json:"format,omitempty" jsonschema:"enum=png,enum=jpeg"`
	// BringToFront lets a background tab come to the front for the capture.
	BringToFront bool `json:"bringToFront,omitempty"`
	// MaxBytes caps the image; larger captures are scaled down.
	MaxBytes int `json:"maxBytes,omitempty"`
}

// ScreenshotResult is the captured image.
type ScreenshotResult struct {
	Tab        int    `json:"tab"`
	Mime       string `json:"mime"`
	DataBase64 string `json:"dataBase64"`
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	// Geometry maps the image to CSS pixels, for actions at coordinates.
	Geometry *ScreenshotGeometry `json:"geometry,omitempty"`
}

// ScreenshotGeometry maps a screenshot's pixels to CSS pixels: CSS x =
// OriginX + image x / Scale (likewise y).
type ScreenshotGeometry struct {
	// ViewportWidth and ViewportHeight are the viewport's size in CSS pixels.
	ViewportWidth  float64 `json:"viewportWidth"`
	ViewportHeight float64 `json:"viewportHeight"`
	// DPR is the device pixel ratio.
	DPR float64 `json:"dpr"`
	// Scale is image pixels per CSS pixel: the DPR, times the factor the
	// image was scaled down by to fit the byte limit.
	Scale float64 `json:"scale"`
	// OriginX and OriginY are the image's top-left corner in CSS pixels:
	// in the viewport (0, 0 for a viewport capture; an element's box for
	// a capture by ref) or in the document (a full-page capture).
	OriginX float64 `json:"originX"`
	OriginY float64 `json:"originY"`
	// FullPage: the image is of the whole document.
	FullPage bool `json:"fullPage,omitempty"`
}

// EvaluateParams runs Expression in the page's main world.
type EvaluateParams struct {
	TabParams
	Expression string `json:"expression"`
}

// EvaluateResult is the expression's value, JSON-serialized.
type EvaluateResult struct {
	Tab int `json:"tab"`
	// ValueJSON is the JSON of the value (awaited if a promise), or "undefined".
	ValueJSON string `json:"valueJson"`
}

// TabInfo describes one shared tab.
type TabInfo struct {
	Tab   int    `json:"tab"`
	URL   string `json:"url"`
	Title string `json:"title"`
	// Active is true for Chrome's active tab of its window.
	Active bool `json:"active"`
	// Current is true for the tab that tool calls without a tab number address.
	Current bool `json:"current"`
	// Owner is the app (and session) the tab belongs to; nil: the user's tab.
	Owner *TabOwner `json:"owner,omitempty"`
}

// TabsListResult lists the shared tabs of the profile.
type TabsListResult struct {
	Tabs []TabInfo `json:"tabs"`
}
