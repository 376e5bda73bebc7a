// Package apitype is the wire contract of the daemon's local API: its
// routes and the JSON bodies and events they carry. The CLI, the tray and
// the window reach the daemon only through it (package localclient), never
// through the daemon's objects; the daemon serves it (package localapi).
//
// It is a leaf: it imports nothing of Tether, so that the tray and the
// window depend on no broker, policy or timeline code.
//
// # Credential and checks
//
// Every route takes the control token (`control-token` in the config dir,
// mode 0600) as "Authorization: Bearer <token>". The MCP token (which
// `tether connect --http` writes into other apps' configs) is refused with
// 403; a missing or wrong token with 401 (read the file again: `tether
// token rotate` replaces it). A Host that is not loopback (127.0.0.1,
// localhost, [::1], with the daemon's port or none) gets 421 and any
// Origin header (a browser page) gets 403. Errors are JSON Error bodies
// saying what to do next.
//
// # Events
//
// GET /api/events is a Server-Sent Events stream (the WHATWG HTML
// "server-sent events" format): each event is
//
//	id: <Event.Seq>
//	event: <Event.Kind>
//	data: <Event as JSON, one line>
//
// A client that reconnects sends the last id it saw as Last-Event-ID and
// gets what it missed from the daemon's ring of recent events, or, when
// those are gone, a KindResync event: it should then read GET /api/state
// and reload the timeline. A client too slow to keep up is never waited
// for: its events are dropped, counted, and followed by a KindResync event
// carrying the count once it catches up. A comment line (": ping") is sent
// every PingInterval so that dead connections are noticed.
package apitype

import "time"

// Routes of the local API. Paths with {x} take a path value.
const (
	// PathHealth answers without a token (Health); on loopback, with
	// ?nonce=<64 hex digits> (HealthNonce), it proves the daemon is the
	// one of its config dir (Health.Proof).
	PathHealth = "/health"
	// HealthNonce is PathHealth's query parameter for a proof.
	HealthNonce = "nonce"
	// PathPrefix is where every local API route lives.
	PathPrefix = "/api/"

	// GET → State.
	PathState = "/api/state"
	// GET → Server-Sent Events of Event (see the package doc).
	PathEvents = "/api/events"

	// GET → ProfileList.
	PathProfiles = "/api/profiles"
	// POST NameRequest{pairing code or full id} → Profile.
	PathProfileApprove = "/api/profiles/approve"
	// POST NameRequest{pairing code or full id} → Profile (status
	// "pending": what was denied, as it claimed itself).
	PathProfileDeny = "/api/profiles/deny"
	// POST NameRequest{slug, label or id prefix} → Profile.
	PathProfileForget = "/api/profiles/forget"
	// POST TabOwnerRequest → Tab: give a shared tab to an AI app, or back
	// to the user (404: unknown profile; 409: no such shared tab).
	PathTabOwner = "/api/tabs/owner"

	// GET → []Token, by name: the named MCP tokens (remote mode,
	// docs/remote.md).
	PathTokens = "/api/tokens"
	// POST NameRequest → IssuedToken (400: bad name; 409: name taken).
	PathTokenAdd = "/api/tokens/add"
	// POST NameRequest → 204 (404: no such token). Its next request gets 401.
	PathTokenRevoke = "/api/tokens/revoke"

	// GET → Pause; POST Pause → Pause.
	PathPause = "/api/pause"

	// GET → []Approval, oldest first.
	PathApprovals = "/api/approvals"
	// POST AnswerRequest → 204; 409 when the call was already decided.
	PathApprovalAnswer = "/api/approvals/answer"

	// GET ?client=&profile=&outcome=&before=&limit= → []TimelineEntry,
	// newest first (TimelineFilter as query parameters).
	PathTimeline = "/api/timeline"
	// GET → TimelineFacets.
	PathTimelineFacets = "/api/timeline/facets"
	// GET with the same query → JSON Lines of the daemon's timeline rows,
	// oldest first; limit 0 exports every matching row.
	PathTimelineExport = "/api/timeline/export"

	// GET → []Client.
	PathClients = "/api/clients"
	// POST ClientRequest → ClientOutcome.
	PathClientConnect = "/api/clients/connect"
	// POST ClientRequest → ClientOutcome.
	PathClientDisconnect = "/api/clients/disconnect"

	// GET → ExtensionState.
	PathExtension = "/api/extension"
	// POST → ExtensionState: writes the unpacked extension.
	PathExtensionWrite = "/api/extension/write"
	// POST → 204: opens its folder in the file manager (writing it first).
	PathExtensionReveal = "/api/extension/reveal"

	// POST → 204: starts `tether browser`, a separate Chromium profile with
	// the extension loaded.
	PathTestBrowser = "/api/browser"

	// POST → 204: opens the window (starts its process, or tells the
	// running one to show itself). 409 under `tether serve`.
	PathWindowOpen = "/api/window/open"
	// POST WindowPainted → 204: the window reports its first painted frame;
	// the daemon sends it on as a KindWindow event.
	PathWindowPainted = "/api/window/painted"

	// POST → 204: stops the daemon (in-flight MCP calls finish first).
	PathShutdown = "/api/shutdown"
)

// PingInterval is how often the event stream sends a comment line.
const PingInterval = 15 * time.Second

// Error is the body of every failed request.
type Error struct {
	// Error says what went wrong and what to do next.
	Error string `json:"error"`
}

// NameRequest names a browser profile.
type NameRequest struct {
	Name string `json:"name"`
}

// Token is a named MCP token, without its secret.
type Token struct {
	Name string `json:"name"`
	// CreatedMs is when it was issued, in Unix milliseconds.
	CreatedMs int64 `json:"createdMs"`
	// LastUsedMs is its last authenticated request, in Unix milliseconds
	// (0: never); stored once a minute, so up to a minute late.
	LastUsedMs int64 `json:"lastUsedMs"`
}

// IssuedToken is a new named token: Secret is shown this once (only its
// hash is kept).
type IssuedToken struct {
	Token
	Secret string `json:"secret"`
}

// AnswerRequest answers a held call.
type AnswerRequest struct {
	// ID is the Approval's ID (the call's id).
	ID string `json:"id"`
	// Answer is AllowOnce, AlwaysAllowSite or Deny.
	Answer string `json:"answer"`
	// By says where the user answered, for the timeline and the event
	// stream: "window" or "cli" ("" reads as "cli").
	By string `json:"by,omitempty"`
}

// The answers to a held call.
const (
	AllowOnce       = "allow_once"
	AlwaysAllowSite = "always_allow_site"
	Deny            = "deny"
)

// ClientRequest names an MCP client (Client.ID, e.g. "claude-code").
type ClientRequest struct {
	ID string `json:"id"`
}

// Pause is the kill switch: while Paused, every tool call is refused.
type Pause struct {
	Paused bool `json:"paused"`
}

// WindowPainted reports the window's first painted frame.
type WindowPainted struct {
	// SinceStartMs is how long after its process started the window
	// painted its first frame, in milliseconds.
	SinceStartMs float64 `json:"sinceStartMs"`
}

// State is everything the tray and the window show besides the timeline.
type State struct {
	// Version is the daemon's version.
	Version string `json:"version"`
	// Paused is the kill switch: every tool call is refused while it is on.
	Paused bool `json:"paused"`
	// Profiles are the known browser profiles, connected ones first, then
	// by slug.
	Profiles []ProfileView `json:"profiles"`
	// Pairing are new profiles waiting for the user's approval.
	Pairing []PairingView `json:"pairing"`
	// Refused are the browsers refused recently that stopped asking, the
	// most recent first (as ProfileList.Refused).
	Refused []RefusedView `json:"refused"`
	// Approvals are the held calls, oldest first.
	Approvals []Approval `json:"approvals"`
	// Running are the tool calls running now, oldest first.
	Running []RunningCall `json:"running"`
	// Window is true when the daemon can open a window (bare tether in a
	// desktop session); false under `tether serve`.
	Window bool `json:"window"`
	// NoWindow says why Window is false in the app (e.g. "no display
	// ..."); empty under `tether serve` and when Window is true.
	NoWindow string `json:"noWindow,omitempty"`
	// EventsDropped is how many events the daemon has dropped, over all
	// subscribers, because they read too slowly.
	EventsDropped int64 `json:"eventsDropped"`
	// Apps are the AI apps with a live MCP session, sorted: those a tab
	// can be given to (PathTabOwner).
	Apps []string `json:"apps"`
	// Stopping is true once the daemon is stopping (`tether stop`, a
	// signal, Quit): it denies the held calls, lets the calls in Running
	// finish (up to 65 s, daemon.DrainTimeout) and refuses new ones, which
	// `tether mcp` sends on to the next daemon.
	Stopping bool `json:"stopping,omitempty"`
}

// ProfileView is one browser profile in State.
type ProfileView struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Slug  string `json:"slug"`
	// Status is "connected" or "disconnected".
	Status     string `json:"status"`
	ExtVersion string `json:"extVersion"`
	// ExtOutdated, when not empty, says that its extension is older than
	// the one in Tether, which cannot update it, and how to reload it.
	ExtOutdated string `json:"extOutdated,omitempty"`
	// LastSeenMs is when it was last connected, in Unix milliseconds (0:
	// never; now while connected).
	LastSeenMs int64 `json:"lastSeenMs"`
	// Tabs are its shared tabs.
	Tabs []TabView `json:"tabs"`
}

// TabView is one shared tab.
type TabView struct {
	// Number is the tab's stable number in tool calls.
	Number int    `json:"number"`
	Title  string `json:"title"`
	URL    string `json:"url"`
	// Current is the tab a call without a tab number addresses.
	Current bool `json:"current"`
	// Owner is the AI app the tab belongs to ("" : the user's, which every
	// app may use).
	Owner string `json:"owner"`
}

// PairingView is a new browser profile waiting for approval.
type PairingView struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	// Code is its pairing code (6 characters), the one the extension's
	// popup shows in that browser: the user approves the entry whose code
	// matches, since any local process can claim a label.
	Code    string `json:"code"`
	SinceMs int64  `json:"sinceMs"`
	// ExpiresMs is when it is let go unless approved (Unix ms).
	ExpiresMs int64 `json:"expiresMs"`
}

// RefusedView is a browser refused recently that stopped asking (see
// RefusedProfile), in State.
type RefusedView struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	// Refusal is pairing_denied, unauthorized or protocol_mismatch.
	Refusal string `json:"refusal"`
	// Reason says why in a few words; NextStep is what the user does now.
	Reason   string `json:"reason"`
	NextStep string `json:"nextStep"`
	// AtMs is its last refusal (Unix ms).
	AtMs int64 `json:"atMs"`
}

// Approval is a held call waiting for the user's answer.
type Approval struct {
	// ID is the call's id (CallEvent.ID), also what AnswerRequest names.
	ID      string   `json:"id"`
	Tool    string   `json:"tool"`
	Class   string   `json:"class"`
	Client  string   `json:"client"`
	Profile string   `json:"profile"`
	Tab     int      `json:"tab"`
	Sites   []string `json:"sites"`
	// Summary is the arguments, secrets redacted (paths for uploads).
	Summary string `json:"summary"`
	// SinceMs and DeadlineMs are Unix milliseconds; at the deadline the
	// call is denied unanswered.
	SinceMs    int64 `json:"sinceMs"`
	DeadlineMs int64 `json:"deadlineMs"`
}

// RunningCall is a tool call that has started and not finished.
type RunningCall struct {
	ID     string `json:"id"`
	Tool   string `json:"tool"`
	Client string `json:"client"`
	// Profile is its profile's slug and Tab its tab number, when the call
	// named them (0: the profile's current tab).
	Profile string `json:"profile"`
	Tab     int    `json:"tab"`
	SinceMs int64  `json:"sinceMs"`
}

// ProfileList is GET /api/profiles: every profile with its details.
type ProfileList struct {
	Profiles []Profile `json:"profiles"`
	Pending  []Profile `json:"pending"`
	// Refused are the browsers refused recently that stopped asking
	// (broker.RefusedProfile: within broker.RefusalTTL, at most
	// broker.MaxRefusals), the most recent first.
	Refused []RefusedProfile `json:"refused"`
}

// RefusedProfile is a browser Tether refused recently in a way its
// extension does not recover from by itself: it asks nothing more until
// its popup's Reconnect, a reload at chrome://extensions, or a restart of
// the browser. Id and label are what it claimed (any local program can
// claim them).
type RefusedProfile struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	// Slug is the paired profile it claimed to be (refusal unauthorized).
	Slug string `json:"slug,omitempty"`
	// Refusal is the refusal code sent to it: pairing_denied,
	// unauthorized or protocol_mismatch.
	Refusal string `json:"refusal"`
	// Reason says why in a few words; NextStep is what the user does now.
	Reason   string `json:"reason"`
	NextStep string `json:"nextStep"`
	// At is its last refusal; Count how many came in a row.
	At    time.Time `json:"at"`
	Count int       `json:"count"`
}

// Profile is one browser profile in ProfileList and in what approve and
// forget return. Secrets never appear.
type Profile struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Slug  string `json:"slug,omitempty"`
	// Status is connected, disconnected or pending; or approved, in what
	// approve returns for a profile that pairs when its extension
	// reconnects (it had been pushed out of the waiting list).
	Status     string `json:"status"`
	ExtVersion string `json:"extVersion,omitempty"`
	// ExtOutdated, when not empty, says that its extension is older than
	// the one in Tether, which cannot update it, and how to reload it.
	ExtOutdated string    `json:"extOutdated,omitempty"`
	LastSeen    time.Time `json:"lastSeen,omitzero"`
	Since       time.Time `json:"since,omitzero"`
	// Code is a pending profile's pairing code.
	Code string `json:"code,omitempty"`
	// Expires is when a pending profile is let go unless approved.
	Expires time.Time `json:"expires,omitzero"`
	Tabs    []Tab     `json:"tabs,omitempty"`
	// RTTMs is a connected profile's link round trip to Tether, in
	// milliseconds (0: unknown); GET /api/profiles only, not State (it
	// changes with every ping).
	RTTMs float64 `json:"rttMs,omitempty"`
}

// Tab is one shared tab in Profile.
type Tab struct {
	Tab     int    `json:"tab"`
	Title   string `json:"title,omitempty"`
	URL     string `json:"url,omitempty"`
	Current bool   `json:"current,omitempty"`
	// Owner is the AI app the tab belongs to ("" : the user's).
	Owner string `json:"owner,omitempty"`
}

// TabOwnerRequest gives a shared tab to an AI app, or back to the user.
type TabOwnerRequest struct {
	// Profile names the profile (slug, label or id prefix).
	Profile string `json:"profile"`
	// Tab is the tab's number.
	Tab int `json:"tab"`
	// App is the app to give it to; "" gives it back to the user.
	App string `json:"app"`
}

// TimelineEntry is one tool call on the timeline.
type TimelineEntry struct {
	// ID is the row's id (paging: TimelineFilter.BeforeID).
	ID int64 `json:"id"`
	// CallID is the call's id, as in CallEvent ("" for rows recorded
	// before call ids existed).
	CallID string `json:"callId"`
	// TimeMs is when the call arrived, in Unix milliseconds.
	TimeMs int64 `json:"timeMs"`
	// Client is the MCP client's name from its clientInfo, e.g. "claude-ai".
	Client string `json:"client"`
	// Token is the named token the client used (remote mode: tether
	// token add), "" for the local MCP token.
	Token   string `json:"token"`
	Profile string `json:"profile"`
	Tab     int    `json:"tab"`
	Tool    string `json:"tool"`
	// Args summarizes the arguments, secrets and typed passwords redacted.
	Args     string `json:"args"`
	Class    string `json:"class"`
	Site     string `json:"site"`
	Decision string `json:"decision"`
	// DurationMs is how long the call took, approval wait included.
	DurationMs float64 `json:"durationMs"`
	// RTTMs is the round-trip time of the profile's link to Tether as the
	// call ended, in milliseconds (0: unknown).
	RTTMs float64 `json:"rttMs"`
	// Outcome is "ok", "error", "refused", "denied" or "paused";
	// "interrupted" for a call that acts during which Tether stopped (it
	// may have acted; Error says so); "" for a call still running;
	// "ignored" for a dialog answered after its call
	// was decided; "unrecorded" for a gap: Args says how many calls ended
	// while the timeline's queue was full and were not stored (no Tool).
	Outcome string `json:"outcome"`
	Error   string `json:"error"`
}

// TimelineFilter selects timeline rows; empty fields match everything. As
// query parameters: client, profile, outcome, before, limit.
type TimelineFilter struct {
	Client  string `json:"client"`
	Profile string `json:"profile"`
	// Outcome is one of TimelineEntry's outcomes.
	Outcome string `json:"outcome"`
	// BeforeID pages: rows older than this ID, when > 0.
	BeforeID int64 `json:"beforeId"`
	// Limit caps the rows (100 when 0, at most 1000; export: 0 is all).
	Limit int `json:"limit"`
}

// TimelineFacets are the values the timeline's filters offer.
type TimelineFacets struct {
	Clients  []string `json:"clients"`
	Profiles []string `json:"profiles"`
	Outcomes []string `json:"outcomes"`
}

// Client is one MCP client Tether can connect.
type Client struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Path is the config file Connect writes (the first, when several).
	Path string `json:"path"`
	// Installed is true when the client's config folder exists.
	Installed bool `json:"installed"`
	// Connected is true when every config file has Tether's entry.
	Connected bool `json:"connected"`
	// Mode is the entry's transport, "stdio" or "http", when connected.
	Mode string `json:"mode"`
	// Reload tells what makes the client pick a change up.
	Reload string `json:"reload"`
	// Error is set when a config file cannot be read or parsed; Connect
	// will refuse to touch it until the user fixes it.
	Error string `json:"error"`
}

// ClientOutcome is what Connect or Disconnect did.
type ClientOutcome struct {
	// Message describes it for the user, a line per file and the next step.
	Message string `json:"message"`
	// Changed is true when a file changed.
	Changed bool `json:"changed"`
	// Client is the client's state afterwards.
	Client Client `json:"client"`
}

// OutdatedExtension is one profile's outdated extension in ExtensionState.
type OutdatedExtension struct {
	Profile string `json:"profile"`
	// Message says it is outdated and how to reload it.
	Message string `json:"message"`
}

// ExtensionState is the window's Extension page: whether an extension
// ever connected, and how to install one in the user's own Chrome.
type ExtensionState struct {
	// Connected is true while at least one profile's extension is connected.
	Connected bool `json:"connected"`
	// Known is how many browser profiles have ever connected.
	Known int `json:"known"`
	// Dir is the folder the unpacked extension is written to.
	Dir string `json:"dir"`
	// Written is true when Dir holds an extension; WrittenVersion is its
	// version and Version the version built into the daemon. When they
	// differ, write it again, then reload it in chrome://extensions.
	Written        bool   `json:"written"`
	WrittenVersion string `json:"writtenVersion"`
	Version        string `json:"version"`
	// ID is the extension's ID in Chrome (fixed by the manifest's key).
	ID string `json:"id"`
	// Outdated are the connected profiles whose extension is older than
	// Version and that Tether cannot update itself (a folder it did not
	// write, such as a checkout's extension/dist, or a Web Store install),
	// each with how to reload it. An extension loaded from a folder Tether
	// wrote is updated and reloaded by the daemon at its hello.
	Outdated []OutdatedExtension `json:"outdated"`
	// Steps say how to load it in chrome://extensions.
	Steps []string `json:"steps"`
}

// Event kinds (Event.Kind, the SSE "event:" field).
const (
	// KindState carries State after a change of the profiles, the pause
	// switch or the approval queue.
	KindState = "state"
	// KindCall carries a CallEvent: one phase of one tool call.
	KindCall = "call"
	// KindNotice carries a Notice: the outcome of an action (a Connect
	// from the tray) or of a background task, for the window's status bar.
	KindNotice = "notice"
	// KindWindow carries a WindowEvent.
	KindWindow = "window"
	// KindResync carries only Dropped: events were missed; read State and
	// reload the timeline.
	KindResync = "resync"
)

// Event is one event of GET /api/events. Exactly the field its Kind names
// is set.
type Event struct {
	// Seq increases by one per event the daemon sends; it is the SSE id.
	Seq    uint64       `json:"seq"`
	Kind   string       `json:"kind"`
	State  *State       `json:"state,omitempty"`
	Call   *CallEvent   `json:"call,omitempty"`
	Notice *Notice      `json:"notice,omitempty"`
	Window *WindowEvent `json:"window,omitempty"`
	// Dropped, on KindResync, is how many events this client missed.
	Dropped int `json:"dropped,omitempty"`
}

// The phases of a tool call (CallEvent.Phase). Each call's id appears once
// per phase it goes through: started, then held and answered for a call
// that waited for the user, then finished. A call refused before it
// started (paused, a deny rule) has only finished.
const (
	PhaseStarted  = "started"
	PhaseHeld     = "held"
	PhaseAnswered = "answered"
	PhaseFinished = "finished"
	// PhaseLateAnswer is not a phase of a running call but a native
	// approval dialog answered after its call was decided: Entry is the
	// timeline row of outcome "ignored" that records it, and ID the id of
	// the call it answered (which has already finished).
	PhaseLateAnswer = "late_answer"
)

// CallEvent is one phase of one tool call.
type CallEvent struct {
	// ID is the call's id, the same in every phase.
	ID    string `json:"id"`
	Phase string `json:"phase"`
	// Entry is the call as known at this phase; on PhaseFinished, the row
	// recorded on the timeline.
	Entry TimelineEntry `json:"entry"`
	// Approval, on PhaseHeld, is the held call.
	Approval *Approval `json:"approval,omitempty"`
	// Answer, on PhaseAnswered, is AllowOnce, AlwaysAllowSite or Deny, or
	// "timeout" and "cancelled"; AnsweredBy says where: "window", "dialog",
	// "cli", "timeout", "pause", "cancelled" or "shutdown" (Tether stopped).
	Answer     string `json:"answer,omitempty"`
	AnsweredBy string `json:"answeredBy,omitempty"`
}

// Notice is a message for the window's status bar.
type Notice struct {
	// Kind is "info" or "error".
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// Window event actions (WindowEvent.Action).
const (
	// WindowShow asks the running window process to show and raise itself.
	WindowShow = "show"
	// WindowPaintedAction reports the window's first painted frame.
	WindowPaintedAction = "painted"
)

// WindowEvent concerns the window process.
type WindowEvent struct {
	Action string `json:"action"`
	// SinceStartMs, on WindowPaintedAction, is WindowPainted's figure.
	SinceStartMs float64 `json:"sinceStartMs,omitempty"`
}

// Health is /health's JSON body. It holds no secrets.
//
// A request through the reverse proxy in remote mode (docs/remote.md) gets
// {"name":"tether"} alone; the other fields are for this machine.
type Health struct {
	// Name is always "tether".
	Name string `json:"name"`
	// Version is the daemon's build version.
	Version string `json:"version"`
	// UptimeSeconds since start.
	UptimeSeconds float64 `json:"uptimeSeconds"`
	// Profiles is the number of connected browser profiles.
	Profiles int `json:"profiles"`
	// Proof answers GET /health?nonce=<64 hex digits> on loopback:
	// protocol.HealthProof keyed on the config dir's pairing key, so a
	// client can tell this daemon from another program on its port before
	// it sends a token (localclient.Probe).
	Proof string `json:"proof,omitempty"`
}
