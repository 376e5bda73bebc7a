// Code generated from protocol.schema.json by `npm run gen`; DO NOT EDIT.

/**
 * Frames between the Tether daemon and its extension. Generated from protocol/protocol.go; do not edit.
 */
export interface TetherProtocol {
  [k: string]: unknown | undefined;
}
/**
 * Challenge is the daemon's first frame on a socket whose handshake offered a nonce (NonceSubprotocolPrefix).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Challenge".
 */
export interface Challenge {
  type: 'challenge';
  /**
   * Protocol is the daemon's protocol Version.
   */
  protocol: number;
  /**
   * Nonce is the daemon's fresh nonce for this socket: 64 hex digits.
   */
  nonce: string;
  /**
   * ProfileProof is DaemonProof keyed on ProfileKey of the profile the
   * handshake named (ProfileSubprotocolPrefix); empty when the daemon
   * does not know that profile, or none was named.
   */
  profileProof?: string;
  /**
   * PairingProof is DaemonProof keyed on the daemon's pairing key, which
   * the daemon writes into tether.json in every extension folder it
   * writes (ExtensionConfig.PairingKey): a new profile loaded from such a
   * folder pairs only with the daemon that wrote it.
   */
  pairingProof: string;
}
/**
 * ClickParams clicks the element named by Ref, or the point At (then Ref is empty).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ClickParams".
 */
export interface ClickParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  ref: string;
  /**
   * Trusted clicks with trusted input through chrome.debugger (only when
   * the user enabled it in settings).
   */
  trusted?: boolean;
  /**
   * Button is left (default), right or middle.
   */
  button?: 'left' | 'right' | 'middle';
  /**
   * ClickCount is 1 (default) or 2: a double-click.
   */
  clickCount?: number;
  /**
   * Modifiers are the keys held during the click: Alt, Control, Meta, Shift.
   */
  modifiers?: string[];
  at?: Point;
  /**
   * FullPage: At is in document CSS pixels; the page is scrolled to it first.
   */
  fullPage?: boolean;
}
/**
 * At is the point to click instead of an element.
 */
export interface Point {
  x: number;
  y: number;
}
/**
 * ConsoleMessage is one console call or uncaught error.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ConsoleMessage".
 */
export interface ConsoleMessage {
  /**
   * Level is log, info, warn, error, debug, exception (uncaught error or
   * rejection), or network (the browser's own entry for a failed request).
   */
  level: string;
  text: string;
  /**
   * Time is milliseconds since the Unix epoch.
   */
  time: number;
  url?: string;
}
/**
 * ConsoleParams reads the tab's console buffer.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ConsoleParams".
 */
export interface ConsoleParams {
  tab?: number;
  /**
   * Clear empties the buffer after reading.
   */
  clear?: boolean;
}
/**
 * ConsoleResult is the tab's console buffer, oldest first.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ConsoleResult".
 */
export interface ConsoleResult {
  tab: number;
  messages: ConsoleMessage[];
  /**
   * Dropped counts messages dropped because the buffer was full.
   */
  dropped: number;
}
/**
 * DialogArmResult confirms the armed answer and lists dialogs so far.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "DialogArmResult".
 */
export interface DialogArmResult {
  tab: number;
  armed: number;
  dialogs?: DialogEvent[];
}
/**
 * DialogEvent is one dialog a page opened.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "DialogEvent".
 */
export interface DialogEvent {
  /**
   * Kind is alert, confirm, prompt or beforeunload.
   */
  kind: 'alert' | 'confirm' | 'prompt' | 'beforeunload';
  message: string;
  /**
   * Accepted is the answer given: true for OK.
   */
  accepted: boolean;
  /**
   * PromptText is the text answered to a prompt, if accepted.
   */
  promptText?: string;
  /**
   * Armed is true when the answer came from browser_handle_dialog, false
   * when it was the default policy (alert accepted; confirm, prompt dismissed).
   */
  armed: boolean;
  /**
   * Native is true for a dialog the browser showed to the user, who
   * answered it (the page opened it while the AI was not acting on the
   * tab); Accepted and PromptText are then the user's answer.
   */
  native?: boolean;
}
/**
 * Download is one download attributed to a shared tab.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Download".
 */
export interface Download {
  id: number;
  tab: number;
  url: string;
  /**
   * Filename is the full path on disk; empty until Chrome chose it.
   */
  filename: string;
  mime?: string;
  /**
   * State is in_progress, complete or interrupted.
   */
  state: string;
  /**
   * Error is the interrupt reason (e.g. USER_CANCELED, NETWORK_FAILED).
   */
  error?: string;
  /**
   * Received and Total are bytes; Total is -1 when unknown.
   */
  received: number;
  total: number;
  paused?: boolean;
  /**
   * WaitingForUser: Chrome asks the user where to save it, or whether to
   * keep a dangerous file.
   */
  waitingForUser?: boolean;
  /**
   * Start is milliseconds since the Unix epoch.
   */
  start: number;
}
/**
 * DownloadDecideParams resumes (allow) or cancels (deny) download ID, paused for the policy: cancel also removes a file already written.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "DownloadDecideParams".
 */
export interface DownloadDecideParams {
  id: number;
  action: 'resume' | 'cancel';
}
/**
 * DownloadEvent is a download of a shared tab (numbered Download.Tab) that started during, or within 10 s of, a tool call there, or its end; Download is the item as Chrome states it (Filename may be empty until Chrome chose it).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "DownloadEvent".
 */
export interface DownloadEvent {
  type: 'download';
  event: 'started' | 'ended';
  download: Download;
  /**
   * Site is the tab's origin when the download started: the site the
   * policy judges.
   */
  site: string;
  /**
   * Paused: the extension paused the download until download_decide.
   */
  paused?: boolean;
}
/**
 * DownloadsResult is the downloads attributed to a shared tab, oldest first.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "DownloadsResult".
 */
export interface DownloadsResult {
  tab: number;
  downloads: Download[];
}
/**
 * DragParams drags FromRef onto ToRef, or presses at From, moves to To and releases there (then the refs are empty).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "DragParams".
 */
export interface DragParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  fromRef: string;
  toRef: string;
  from?: Point1;
  to?: Point1;
  /**
   * FullPage: From and To are in document CSS pixels; the page is
   * scrolled to them first.
   */
  fullPage?: boolean;
}
/**
 * Point is a position in CSS pixels: in the top document's viewport, or in the document (from its top-left corner) when the params say FullPage.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Point".
 */
export interface Point1 {
  x: number;
  y: number;
}
/**
 * Error is a failed request.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Error".
 */
export interface Error {
  code:
    | 'stale_ref'
    | 'unknown_ref'
    | 'no_shared_tab'
    | 'unknown_tab'
    | 'restricted_page'
    | 'not_interactable'
    | 'timeout'
    | 'navigation_failed'
    | 'bad_request'
    | 'protocol_mismatch'
    | 'unauthorized'
    | 'pairing_denied'
    | 'too_many_profiles'
    | 'pairing_expired'
    | 'pairing_displaced'
    | 'dialog_open'
    | 'disabled'
    | 'duplicate'
    | 'internal';
  message: string;
}
/**
 * EvaluateParams runs Expression in the page's main world.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "EvaluateParams".
 */
export interface EvaluateParams {
  tab?: number;
  expression: string;
}
/**
 * EvaluateResult is the expression's value, JSON-serialized.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "EvaluateResult".
 */
export interface EvaluateResult {
  tab: number;
  /**
   * ValueJSON is the JSON of the value (awaited if a promise), or "undefined".
   */
  valueJson: string;
}
/**
 * FileUploadParams sets Files on the file input Ref names, or on the input that the control Ref names opens (a button or label forwarding to a hidden input).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "FileUploadParams".
 */
export interface FileUploadParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  ref: string;
  /**
   * Trusted performs the action with trusted input through chrome.debugger
   * (only when the user enabled it in settings).
   */
  trusted?: boolean;
  files: UploadFile[];
}
/**
 * UploadFile is one file for a file input.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "UploadFile".
 */
export interface UploadFile {
  name: string;
  mime: string;
  /**
   * DataBase64 is the file's content, base64 (standard encoding).
   */
  dataBase64: string;
}
/**
 * FindMatch is one element or text run that matched.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "FindMatch".
 */
export interface FindMatch {
  /**
   * Line is the snapshot line, e.g. `- button "Save" [ref=e12]`.
   */
  line: string;
  ref?: string;
  /**
   * Context is the nearest heading or table row above the match.
   */
  context?: string;
}
/**
 * FindParams searches the ARIA tree; at least one of Text and Role is set.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "FindParams".
 */
export interface FindParams {
  tab?: number;
  /**
   * Text matches accessible names and text, case-insensitively.
   */
  text?: string;
  /**
   * Role matches the ARIA role exactly.
   */
  role?: string;
  /**
   * Limit caps the matches (default 50).
   */
  limit?: number;
}
/**
 * FindResult lists the matches.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "FindResult".
 */
export interface FindResult {
  tab: number;
  url: string;
  title: string;
  matches: FindMatch[];
  /**
   * Total is the number of matches before Limit.
   */
  total: number;
  /**
   * Partial is true when the search ran into the call's deadline: the
   * matches are those found in the part of the page searched by then.
   */
  partial?: boolean;
  /**
   * More is true when a search by role alone stopped once it had more
   * matches than its limit: Total is then a floor, not a count.
   */
  more?: boolean;
}
/**
 * HandleDialogParams arms the answer to the tab's next Times dialogs.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "HandleDialogParams".
 */
export interface HandleDialogParams {
  tab?: number;
  accept: boolean;
  promptText?: string;
  /**
   * Times is how many dialogs the answer covers (default 1).
   */
  times?: number;
}
/**
 * Header is one HTTP header.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Header".
 */
export interface Header {
  name: string;
  value: string;
}
/**
 * Hello is the extension's first frame on every connection.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Hello".
 */
export interface Hello {
  type: 'hello';
  /**
   * Protocol is the extension's protocol Version.
   */
  protocol: number;
  /**
   * ProfileID is a random UUID the extension keeps in chrome.storage.local;
   * it identifies one Chrome profile across restarts. The daemon accepts
   * 1 to 128 ASCII letters, digits, '-' and '_' (ValidProfileID): it is
   * shown in terminals and any local process may claim one.
   */
  profileId: string;
  /**
   * Label is a human name for the profile, e.g. "Work".
   */
  label: string;
  /**
   * ExtVersion is the extension's manifest version string (x.y.z).
   */
  extVersion: string;
  /**
   * VersionName is the manifest's version_name: "<version> build <id>",
   * the id a hash of the built files (extension/build.mjs), so two
   * builds of the same version tell apart. Empty before 0.4.0.
   */
  versionName?: string;
  /**
   * InstallType is chrome.management.getSelf()'s installType:
   * "development" (loaded unpacked), "normal" (the Web Store), "admin",
   * "sideload" or "other". The daemon rewrites only a "development" one.
   */
  installType?: string;
  install?: InstallMarker;
  /**
   * UserAgent is navigator.userAgent, for display.
   */
  userAgent?: string;
  /**
   * Slug is the slug the daemon last assigned (from hello_ack), so slugs
   * survive a daemon that lost its records; empty on first contact.
   */
  slug?: string;
  /**
   * Proof is ExtensionProof keyed on the profile's pairing secret (64 hex
   * digits), over this socket's nonces; empty before pairing. A hello that
   * claims a known ProfileID without a valid proof is refused
   * (unauthorized). The secret itself is never sent after pairing.
   */
  proof?: string;
  /**
   * Tabs are the currently shared tabs.
   */
  tabs: TabInfo[];
}
/**
 * Install is the folder's tether-install.json, present only when
 * Tether wrote the folder the extension was loaded from.
 */
export interface InstallMarker {
  /**
   * Dir is the folder's absolute path as Tether wrote it.
   */
  dir: string;
  /**
   * ID is random (16 hex digits), drawn when the folder was first written.
   */
  id: string;
}
/**
 * TabInfo describes one shared tab.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TabInfo".
 */
export interface TabInfo {
  tab: number;
  url: string;
  title: string;
  /**
   * Active is true for Chrome's active tab of its window.
   */
  active: boolean;
  /**
   * Current is true for the tab that tool calls without a tab number address.
   */
  current: boolean;
  owner?: TabOwner;
}
/**
 * Owner is the app (and session) the tab belongs to; nil: the user's tab.
 */
export interface TabOwner {
  /**
   * App is the app's name: its MCP clientInfo.name, cleaned as the
   * timeline shows it ("" for a client that sent none).
   */
  app: string;
  /**
   * Session is the MCP session's id ("" for a tab the user gave to the
   * app rather than to one of its sessions).
   */
  session?: string;
}
/**
 * HelloAck accepts a hello.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "HelloAck".
 */
export interface HelloAck {
  type: 'hello_ack';
  /**
   * DaemonVersion is the daemon's build version.
   */
  daemonVersion: string;
  /**
   * AssignedLabel is the label the daemon records for this profile.
   */
  assignedLabel: string;
  /**
   * AssignedSlug is the short address of the profile in tool calls, e.g. "work".
   */
  assignedSlug: string;
  /**
   * Secret is set only when the daemon issues a new secret (at pairing):
   * 64 hex digits. The extension stores it in chrome.storage.local and
   * proves it holds it at every later connection (Hello.Proof) without
   * sending it; the daemon keeps only its SHA-256 (ProfileKey). It is
   * never shown to the user or logged.
   */
  secret?: string;
}
/**
 * HistoryParams goes back, forward or reloads, then waits for load.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "HistoryParams".
 */
export interface HistoryParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  action: 'back' | 'forward' | 'reload';
}
/**
 * HoverParams moves the pointer onto the element named by Ref, or onto the point At (then Ref is empty).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "HoverParams".
 */
export interface HoverParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  ref: string;
  /**
   * Trusted hovers with trusted input (CSS :hover applies).
   */
  trusted?: boolean;
  at?: Point2;
  /**
   * FullPage: At is in document CSS pixels; the page is scrolled to it first.
   */
  fullPage?: boolean;
}
/**
 * Point is a position in CSS pixels: in the top document's viewport, or in the document (from its top-left corner) when the params say FullPage.
 */
export interface Point2 {
  x: number;
  y: number;
}
/**
 * InstallMarker is tether-install.json, which Tether writes into every extension folder it writes (the config dir's chrome-extension/ and `tether browser`'s copies).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "InstallMarker".
 */
export interface InstallMarker1 {
  /**
   * Dir is the folder's absolute path as Tether wrote it.
   */
  dir: string;
  /**
   * ID is random (16 hex digits), drawn when the folder was first written.
   */
  id: string;
}
/**
 * NavigateParams loads URL in a tab.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "NavigateParams".
 */
export interface NavigateParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  /**
   * URL is absolute: http, https, file or about:blank.
   */
  url: string;
  /**
   * NewTab opens URL in a new shared tab instead of the addressed one.
   */
  newTab?: boolean;
  owner?: TabOwner1;
}
/**
 * Owner is the app and session the new tab belongs to (NewTab only).
 * A new tab opens in the background (active: false); browser_tabs
 * select brings it to the front.
 */
export interface TabOwner1 {
  /**
   * App is the app's name: its MCP clientInfo.name, cleaned as the
   * timeline shows it ("" for a client that sent none).
   */
  app: string;
  /**
   * Session is the MCP session's id ("" for a tab the user gave to the
   * app rather than to one of its sessions).
   */
  session?: string;
}
/**
 * NetRequest is one request a shared tab made (webRequest's view: no bodies).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "NetRequest".
 */
export interface NetRequest {
  /**
   * ID is Chrome's request id.
   */
  id: string;
  method: string;
  url: string;
  /**
   * Type is webRequest's resource type (main_frame, sub_frame, script,
   * image, xmlhttprequest for fetch and XHR, websocket, other…).
   */
  type: string;
  /**
   * Status is the HTTP status code; 0 without a response.
   */
  status?: number;
  /**
   * Error is Chrome's network error (net::ERR_…) when the request failed.
   */
  error?: string;
  /**
   * Start is milliseconds since the Unix epoch.
   */
  start: number;
  /**
   * Duration is milliseconds from start to the response's end or the
   * error; absent while Pending.
   */
  duration?: number;
  /**
   * Pending: no response end or error yet.
   */
  pending?: boolean;
  /**
   * Size is the response's Content-Length in bytes, -1 when not sent.
   */
  size: number;
  /**
   * Initiator is the origin that caused the request, when Chrome says.
   */
  initiator?: string;
  fromCache?: boolean;
  /**
   * RequestHeaders and ResponseHeaders are set only when NetworkParams
   * named this request.
   */
  requestHeaders?: Header[];
  responseHeaders?: Header[];
}
/**
 * NetworkParams reads a shared tab's requests.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "NetworkParams".
 */
export interface NetworkParams {
  tab?: number;
  /**
   * ID asks for that one request, with its headers; empty: every request
   * kept, without headers.
   */
  id?: string;
}
/**
 * NetworkResult is a shared tab's requests, oldest first.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "NetworkResult".
 */
export interface NetworkResult {
  tab: number;
  requests: NetRequest[];
  /**
   * Dropped counts older requests the bounded ring let go.
   */
  dropped: number;
}
/**
 * PageResult describes a tab after a read or an action.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "PageResult".
 */
export interface PageResult {
  /**
   * Tab is the shared tab's number.
   */
  tab: number;
  url: string;
  title: string;
  /**
   * Snapshot is the page's ARIA snapshot, Playwright aria-snapshot style:
   * one "- role "name" [state] [ref=e7]" line per node, nested by two spaces.
   */
  snapshot: string;
  /**
   * SnapshotGzip, when the request's PackOver asked for it, is the
   * snapshot text packed: base64 (RFC 4648, section 4) of its UTF-8 bytes
   * gzip-compressed (RFC 1952); Snapshot is then "". DecodeResult unpacks
   * it into Snapshot, so a decoded PageResult never carries it.
   */
  snapshotGzip?: string;
  /**
   * Doc is the number of the top frame's document the snapshot is of
   * (the d<doc> of its refs); 0 when unknown (about:blank, a document
   * that issued no ref yet). A reload is another document at the same URL.
   */
  doc?: number;
  /**
   * OpenedTabs lists tabs the action opened (target=_blank links,
   * window.open, OAuth popups); they are shared automatically.
   */
  openedTabs?: TabInfo[];
  /**
   * Dialogs lists the alert/confirm/prompt/beforeunload dialogs that
   * occurred in this tab since the previous result, with the answer given.
   */
  dialogs?: DialogEvent[];
  /**
   * Omitted is the number of elements the snapshot left out for size;
   * with OmittedMore, a lower bound.
   */
  omitted?: number;
  /**
   * OmittedMore is true when the page was not walked past the cap's
   * budget: more than Omitted elements were left out.
   */
  omittedMore?: boolean;
  /**
   * Partial is true when reading the page ran into the call's deadline:
   * the snapshot holds what was read by then (an action itself is never
   * cut short, only its follow-up snapshot).
   */
  partial?: boolean;
  scrolled?: ScrollReport;
}
/**
 * Scrolled reports what a scroll did (scroll only).
 */
export interface ScrollReport {
  /**
   * Page is true when the page (the document's scrolling element)
   * scrolled, false for an inner container.
   */
  page: boolean;
  /**
   * DX and DY are how far the scroll position moved.
   */
  dx: number;
  dy: number;
  /**
   * Left and Top are the scroll position afterwards; Width and Height
   * the scrollable size; ViewWidth and ViewHeight the visible size.
   */
  left: number;
  top: number;
  width: number;
  height: number;
  viewWidth: number;
  viewHeight: number;
  /**
   * Added counts the elements that appeared in the container while it
   * scrolled (virtualized rows, infinite scroll), Removed those that went.
   */
  added: number;
  removed: number;
  /**
   * Grew is how much the scrollable height grew (content loaded at the end).
   */
  grew: number;
  /**
   * Hidden is true when the tab was not visible (a background tab, a
   * minimized window): Chrome runs no animation frames there, so a page
   * that renders on a frame may not have drawn what scrolled in. The
   * scroll never brings the tab to the front; the agent may (tab_select).
   */
  hidden?: boolean;
}
/**
 * Pairing tells an extension that the user must approve this profile before it can be used.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Pairing".
 */
export interface Pairing {
  type: 'pairing';
  /**
   * Code is this profile's pairing code: 6 characters from
   * 23456789ABCDEFGHJKMNPQRSTUVWXYZ (no 0/O, 1/I/L), e.g. "K7M4PX",
   * random for each new waiting entry, kept if the same profile id
   * reconnects while it waits. The daemon sends it only to this profile's
   * socket and shows it next to the entry in the Tether window, its tray
   * and `tether profiles`; the popup shows it so the user approves the
   * entry whose code matches. Approval takes the code or the full profile id.
   */
  code: string;
  /**
   * Message tells the user how to approve, for the popup.
   */
  message: string;
}
/**
 * PressKeyParams presses Key: a single key ("Enter", "a", "ArrowDown") or a combo joined by "+" ("Control+A", "Shift+Tab"), in the focused element.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "PressKeyParams".
 */
export interface PressKeyParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  key: string;
  trusted?: boolean;
}
/**
 * ReadResult is a page's rendered DOM, for conversion to Markdown by the daemon.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ReadResult".
 */
export interface ReadResult {
  tab: number;
  url: string;
  title: string;
  /**
   * HTML is document.documentElement.outerHTML of the rendered page, with
   * open shadow roots inlined, form values reflected, and scripts removed.
   */
  html: string;
}
/**
 * ReadURLParams opens URL in a background tab for reading.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ReadURLParams".
 */
export interface ReadURLParams {
  url: string;
  owner?: TabOwner2;
  /**
   * CloseAfter closes the tab after reading (default true in the tool).
   */
  closeAfter: boolean;
}
/**
 * Owner is the app and session the tab belongs to while it is open.
 */
export interface TabOwner2 {
  /**
   * App is the app's name: its MCP clientInfo.name, cleaned as the
   * timeline shows it ("" for a client that sent none).
   */
  app: string;
  /**
   * Session is the MCP session's id ("" for a tab the user gave to the
   * app rather than to one of its sessions).
   */
  session?: string;
}
/**
 * RefParams names one element.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "RefParams".
 */
export interface RefParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  ref: string;
  /**
   * Trusted performs the action with trusted input through chrome.debugger
   * (only when the user enabled it in settings).
   */
  trusted?: boolean;
}
/**
 * Refused is sent instead of HelloAck when the daemon will not accept the connection; the daemon closes the socket right after it.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Refused".
 */
export interface Refused {
  type: 'refused';
  code:
    | 'stale_ref'
    | 'unknown_ref'
    | 'no_shared_tab'
    | 'unknown_tab'
    | 'restricted_page'
    | 'not_interactable'
    | 'timeout'
    | 'navigation_failed'
    | 'bad_request'
    | 'protocol_mismatch'
    | 'unauthorized'
    | 'pairing_denied'
    | 'too_many_profiles'
    | 'pairing_expired'
    | 'pairing_displaced'
    | 'dialog_open'
    | 'disabled'
    | 'internal';
  message: string;
}
/**
 * Reload tells the extension that the daemon has rewritten the folder it was loaded from with the build in the daemon (Version, VersionName): it saves its shared tabs, their numbers and its document counter to chrome.storage.local and calls chrome.runtime.reload().
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Reload".
 */
export interface Reload {
  type: 'reload';
  version: string;
  versionName: string;
}
/**
 * Request is a daemon → extension call.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Request".
 */
export interface Request {
  type: 'request';
  /**
   * ID correlates the response; unique per connection.
   */
  id: string;
  method:
    | 'navigate'
    | 'snapshot'
    | 'click'
    | 'type'
    | 'tabs_list'
    | 'tab_new'
    | 'tab_close'
    | 'tab_select'
    | 'find'
    | 'read'
    | 'console'
    | 'select_option'
    | 'hover'
    | 'drag'
    | 'press_key'
    | 'file_upload'
    | 'wait_for'
    | 'handle_dialog'
    | 'history'
    | 'screenshot'
    | 'evaluate'
    | 'read_url'
    | 'scroll'
    | 'tab_owner'
    | 'network'
    | 'downloads'
    | 'download_decide';
  /**
   * Params is the method's params object (see Method).
   */
  params: {};
  /**
   * TimeoutMs is how long the daemon waits for the response; the extension
   * should give up a little earlier and answer with code "timeout".
   */
  timeoutMs: number;
  /**
   * IdempotencyKey, when set, names the agent's call this request belongs
   * to (1 to 128 printable ASCII characters: the MCP request's _meta
   * "tether/idempotencyKey" scoped to the agent's app,
   * IdempotentCall.WireKey; the daemon sends it with every request of
   * that call, reads too). A key belongs to one call: Tool and
   * CallFingerprint name it. The extension remembers each key with its
   * call for 10 minutes and refuses (CodeBadRequest) a request whose
   * call is another (another tool or other arguments). For a method that
   * acts (Method.Mutates) it keeps one step per method: a repeat is
   * answered with the first answer, or with CodeDuplicate while the first
   * is still running (or its answer was lost), never by acting again.
   * Reads of the same call simply run.
   */
  idempotencyKey?: string;
  /**
   * Tool is the MCP tool of the agent's call, e.g. "browser_click"; sent
   * with IdempotencyKey.
   */
  tool?: string;
  /**
   * CallFingerprint is a digest of that call's arguments (64 hex
   * characters, SHA-256 of their JSON with sorted keys); sent with
   * IdempotencyKey. Only compared for equality.
   */
  callFingerprint?: string;
  /**
   * SentBefore is true on a request of a method that acts when the daemon
   * sent a request of that method for this IdempotencyKey's call before
   * (the agent repeats a call whose first attempt reached the browser).
   * An extension that holds no step of that method for the key (its
   * record was dropped for room: it keeps at most 500 keys) answers
   * CodeDuplicate without acting, since the first attempt may have acted.
   */
  sentBefore?: boolean;
}
/**
 * Response answers one Request: exactly one of Result and Error is set.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "Response".
 */
export interface Response {
  type: 'response';
  id: string;
  result?: {};
  error?: Error;
}
/**
 * ScreenshotGeometry maps a screenshot's pixels to CSS pixels: CSS x = OriginX + image x / Scale (likewise y).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ScreenshotGeometry".
 */
export interface ScreenshotGeometry {
  /**
   * ViewportWidth and ViewportHeight are the viewport's size in CSS pixels.
   */
  viewportWidth: number;
  viewportHeight: number;
  /**
   * DPR is the device pixel ratio.
   */
  dpr: number;
  /**
   * Scale is image pixels per CSS pixel: the DPR, times the factor the
   * image was scaled down by to fit the byte limit.
   */
  scale: number;
  /**
   * OriginX and OriginY are the image's top-left corner in CSS pixels:
   * in the viewport (0, 0 for a viewport capture; an element's box for
   * a capture by ref) or in the document (a full-page capture).
   */
  originX: number;
  originY: number;
  /**
   * FullPage: the image is of the whole document.
   */
  fullPage?: boolean;
}
/**
 * ScreenshotParams captures the tab with chrome.tabs.captureVisibleTab.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ScreenshotParams".
 */
export interface ScreenshotParams {
  tab?: number;
  /**
   * FullPage scrolls and stitches the whole page.
   */
  fullPage?: boolean;
  /**
   * Ref captures only that element's box.
   */
  ref?: string;
  /**
   * Format is png (default) or jpeg.
   */
  format?: 'png' | 'jpeg';
  /**
   * BringToFront lets a background tab come to the front for the capture.
   */
  bringToFront?: boolean;
  /**
   * MaxBytes caps the image; larger captures are scaled down.
   */
  maxBytes?: number;
}
/**
 * ScreenshotResult is the captured image.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ScreenshotResult".
 */
export interface ScreenshotResult {
  tab: number;
  mime: string;
  dataBase64: string;
  width: number;
  height: number;
  geometry?: ScreenshotGeometry1;
}
/**
 * Geometry maps the image to CSS pixels, for actions at coordinates.
 */
export interface ScreenshotGeometry1 {
  /**
   * ViewportWidth and ViewportHeight are the viewport's size in CSS pixels.
   */
  viewportWidth: number;
  viewportHeight: number;
  /**
   * DPR is the device pixel ratio.
   */
  dpr: number;
  /**
   * Scale is image pixels per CSS pixel: the DPR, times the factor the
   * image was scaled down by to fit the byte limit.
   */
  scale: number;
  /**
   * OriginX and OriginY are the image's top-left corner in CSS pixels:
   * in the viewport (0, 0 for a viewport capture; an element's box for
   * a capture by ref) or in the document (a full-page capture).
   */
  originX: number;
  originY: number;
  /**
   * FullPage: the image is of the whole document.
   */
  fullPage?: boolean;
}
/**
 * ScrollParams scrolls the page or a container by DX/DY CSS pixels, or to one of its edges (To), or brings Ref into view (To "view").
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ScrollParams".
 */
export interface ScrollParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  /**
   * Ref names the container, or an element inside it (its nearest
   * scrollable ancestor scrolls); empty: the page. With To "view", the
   * element to bring into view (required then).
   */
  ref?: string;
  /**
   * To is an edge (top, bottom, left, right) or view; empty: by DX/DY.
   */
  to?: 'top' | 'bottom' | 'left' | 'right' | 'view';
  /**
   * DX and DY are CSS pixels right and down (negative: left, up).
   */
  dx?: number;
  dy?: number;
}
/**
 * ScrollReport says what a scroll did, in CSS pixels.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ScrollReport".
 */
export interface ScrollReport1 {
  /**
   * Page is true when the page (the document's scrolling element)
   * scrolled, false for an inner container.
   */
  page: boolean;
  /**
   * DX and DY are how far the scroll position moved.
   */
  dx: number;
  dy: number;
  /**
   * Left and Top are the scroll position afterwards; Width and Height
   * the scrollable size; ViewWidth and ViewHeight the visible size.
   */
  left: number;
  top: number;
  width: number;
  height: number;
  viewWidth: number;
  viewHeight: number;
  /**
   * Added counts the elements that appeared in the container while it
   * scrolled (virtualized rows, infinite scroll), Removed those that went.
   */
  added: number;
  removed: number;
  /**
   * Grew is how much the scrollable height grew (content loaded at the end).
   */
  grew: number;
  /**
   * Hidden is true when the tab was not visible (a background tab, a
   * minimized window): Chrome runs no animation frames there, so a page
   * that renders on a frame may not have drawn what scrolled in. The
   * scroll never brings the tab to the front; the agent may (tab_select).
   */
  hidden?: boolean;
}
/**
 * SelectOptionParams selects options of a native select by value or label.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SelectOptionParams".
 */
export interface SelectOptionParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  ref: string;
  /**
   * Trusted performs the action with trusted input through chrome.debugger
   * (only when the user enabled it in settings).
   */
  trusted?: boolean;
  values: string[];
}
/**
 * SnapshotOptions shape every snapshot a method returns.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SnapshotOptions".
 */
export interface SnapshotOptions {
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
}
/**
 * SnapshotParams reads a tab's ARIA snapshot.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "SnapshotParams".
 */
export interface SnapshotParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  /**
   * Ref limits the snapshot to that element's subtree.
   */
  ref?: string;
  /**
   * Depth limits how many levels below the root are printed; 0: all.
   */
  depth?: number;
}
/**
 * TabNewParams opens URL in a new tab, which is shared automatically.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TabNewParams".
 */
export interface TabNewParams {
  /**
   * URL is absolute; empty opens about:blank.
   */
  url?: string;
  owner?: TabOwner3;
}
/**
 * Owner is the app and session the new tab belongs to. The tab opens
 * in the background (active: false); tab_select brings it forward.
 */
export interface TabOwner3 {
  /**
   * App is the app's name: its MCP clientInfo.name, cleaned as the
   * timeline shows it ("" for a client that sent none).
   */
  app: string;
  /**
   * Session is the MCP session's id ("" for a tab the user gave to the
   * app rather than to one of its sessions).
   */
  session?: string;
}
/**
 * TabOwner is the AI app and MCP session a shared tab belongs to: the one that opened it (or the tab it was opened from), or the app the user gave it to.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TabOwner".
 */
export interface TabOwner4 {
  /**
   * App is the app's name: its MCP clientInfo.name, cleaned as the
   * timeline shows it ("" for a client that sent none).
   */
  app: string;
  /**
   * Session is the MCP session's id ("" for a tab the user gave to the
   * app rather than to one of its sessions).
   */
  session?: string;
}
/**
 * TabOwnerParams gives tab Tab to Owner's app, or back to the user when Owner is nil.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TabOwnerParams".
 */
export interface TabOwnerParams {
  tab?: number;
  owner?: TabOwner4;
}
/**
 * TabParams addresses one shared tab.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TabParams".
 */
export interface TabParams {
  tab?: number;
}
/**
 * TabsChanged is pushed by the extension whenever a shared tab is opened, closed, navigated, retitled, shared, unshared, activated or given to an app (or back to the user), so the daemon never polls.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TabsChanged".
 */
export interface TabsChanged {
  type: 'tabs_changed';
  change:
    'opened' | 'closed' | 'navigated' | 'title' | 'shared' | 'unshared' | 'activated' | 'owner';
  /**
   * Tab is the number of the tab that changed.
   */
  tab: number;
  tabs: TabInfo[];
}
/**
 * TabsListParams has no fields yet.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TabsListParams".
 */
export interface TabsListParams {}
/**
 * TabsListResult lists the shared tabs of the profile.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TabsListResult".
 */
export interface TabsListResult {
  tabs: TabInfo[];
}
/**
 * TypeParams replaces the value of the editable element named by Ref with Text.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TypeParams".
 */
export interface TypeParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  ref: string;
  text: string;
  /**
   * Submit presses Enter after typing (submits the element's form).
   */
  submit?: boolean;
}
/**
 * WaitForParams waits until Text appears, TextGone disappears, or TimeMs passes (at least one is set).
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "WaitForParams".
 */
export interface WaitForParams {
  tab?: number;
  /**
   * MaxChars caps the snapshot text; past it, whole lines are left out and
   * a last line says how many elements were left out and how to reach
   * them (browser_find, or a subtree ref). 0: the extension's default (40 000).
   */
  maxChars?: number;
  /**
   * URLs prints each link's href as a "- /url: …" line under it. Off by
   * default: URLs are a fifth of a typical snapshot, and browser_read
   * gives every link with its absolute URL.
   */
  urls?: boolean;
  /**
   * PackOver asks for a page result's snapshot text, when it is longer
   * than PackOver UTF-16 code units and nothing was cut from it or
   * stitched into it, packed in PageResult.SnapshotGzip instead of
   * Snapshot: the extension's message hops (content script → service
   * worker → offscreen document → socket) then copy a tenth of a large
   * page's text. 0: never packed. A daemon sends it only if it reads
   * SnapshotGzip (PackSnapshotOver).
   */
  packOver?: number;
  text?: string;
  textGone?: string;
  timeMs?: number;
}

/** The methods the daemon may call (Request.method), in the protocol's order. */
export const METHODS: readonly Request['method'][] = [
  'navigate',
  'snapshot',
  'click',
  'type',
  'tabs_list',
  'tab_new',
  'tab_close',
  'tab_select',
  'find',
  'read',
  'console',
  'select_option',
  'hover',
  'drag',
  'press_key',
  'file_upload',
  'wait_for',
  'handle_dialog',
  'history',
  'screenshot',
  'evaluate',
  'read_url',
  'scroll',
  'tab_owner',
  'network',
  'downloads',
  'download_decide',
];
