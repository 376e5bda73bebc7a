// Messages between the extension's own contexts (offscreen document, service
// worker, content script). Every message names its target context and kind,
// so each listener ignores what is not addressed to it.
import { METHODS, type DownloadEvent, type Error as WireError, type FindMatch, type HelloAck, type InstallMarker, type Reload, type Request, type ScrollReport, type TabInfo, type TabsChanged } from '../protocol.gen';
import type { PageControl } from './page-hooks';

export type Method = Request['method'];

/** Whether m is a method the daemon may call (METHODS, from the protocol: an explicit allow-list). */
export function isMethod(m: unknown): m is Method {
  return typeof m === 'string' && (METHODS as readonly string[]).includes(m);
}

/** What the offscreen document needs to open and greet the daemon. */
export interface DaemonConfig {
  port: number;
  label: string;
  profileId: string;
  extVersion: string;
  /** The manifest's version_name ("<version> build <id>"), if any. */
  versionName?: string;
  /** chrome.management.getSelf()'s installType ("development" when loaded unpacked). */
  installType?: string;
  /** The folder's tether-install.json, when Tether wrote the folder. */
  install?: InstallMarker;
  /** The slug of the last hello_ack, if any. */
  slug?: string;
  /** The per-profile secret from pairing with this daemon or broker, if any. Never sent, shown or logged: the hello proves it (shared/proof.ts). */
  secret?: string;
  /**
   * The local daemon's pairing key from tether.json (64 hex digits), when
   * Tether wrote the folder: before pairing, only a daemon that proves it
   * holds this key is answered. Never used for a remote broker.
   */
  pairingKey?: string;
  /**
   * The remote broker's URL (chrome.storage.local brokerUrl) when the user
   * chose one instead of the local daemon; the offscreen document checks it
   * again (parseBrokerUrl) before dialling. slug and secret are then this
   * broker's.
   */
  brokerUrl?: string;
  /** The shared tabs, announced in hello. */
  tabs: TabInfo[];
  /**
   * True after a refusal that needs the user (protocol_mismatch, unauthorized,
   * pairing_denied): do not connect until the popup's Reconnect or a reload.
   */
  halted: boolean;
}

/** Refusal codes after which the extension stops reconnecting until the user asks. */
export const HALTING_CODES: readonly string[] = ['protocol_mismatch', 'unauthorized', 'pairing_denied'];
/**
 * Refusal codes after which the extension retries slowly: too many profiles
 * connected, or a pairing nobody approved in time (pairing_expired: the
 * extension asks again when it reconnects).
 */
export const SLOW_RETRY_CODES: readonly string[] = ['too_many_profiles', 'pairing_expired'];
/**
 * Refusal codes after which the extension asks again within seconds and
 * keeps showing its pairing code: pairing_displaced, when other hellos (any
 * program on the computer can send them) pushed this browser out of the
 * daemon's waiting list. The daemon keeps its code, and an approval given
 * meanwhile, for its next hello.
 */
export const QUICK_RETRY_CODES: readonly string[] = ['pairing_displaced'];
/** The quick retry waits between these (uniformly at random), so that floods do not fall in step with it. */
export const QUICK_RETRY_MIN_MS = 2_000;
export const QUICK_RETRY_MAX_MS = 5_000;
/** The WebSocket subprotocol the daemon selects (protocol.Subprotocol). */
export const SUBPROTOCOL = 'tether';
/** Starts the subprotocol that names a paired profile: its id, never its secret (protocol.ProfileSubprotocolPrefix). */
export const PROFILE_SUBPROTOCOL_PREFIX = 'tether.profile.';
/** Starts the subprotocol that carries the socket's fresh nonce (protocol.NonceSubprotocolPrefix). */
export const NONCE_SUBPROTOCOL_PREFIX = 'tether.nonce.';

/** The slow retry period. */
export const SLOW_RETRY_MS = 30_000;

/** The connection state shown in the popup (chrome.storage.session key "status"). */
export interface ConnectionStatus {
  /** pairing: the daemon holds the socket until the user approves this profile. */
  state: 'connecting' | 'pairing' | 'connected' | 'disconnected';
  port: number;
  /** Date.now() of the last state change. */
  since: number;
  /**
   * The last refused frame from the daemon, if any; code "unverified" when
   * the program on the port did not prove it is Tether (the extension sent
   * it nothing).
   */
  lastRefusal?: { code: string; message: string; at: number };
  /**
   * True when the program on the port may be a Tether that forgot this
   * browser: the popup offers Pair again, which drops the stored secret and
   * pairs anew (the user approves it in Tether).
   */
  pairAgain?: boolean;
  /**
   * True when another program, not Tether, answers on the local port (it
   * failed the challenge, or answered HTTP that is not Tether's to the
   * socket: lastRefusal says which): starting Tether cannot work while it
   * holds the port, so the popup says how to free it or move Tether.
   */
  otherProgram?: boolean;
  /** The daemon's pairing message while state is pairing. */
  pairing?: string;
  /** The pairing code while state is pairing: Tether shows the same one next to this browser. */
  pairingCode?: string;
  /** True when the connection stopped retrying until the user presses Reconnect. */
  halted?: boolean;
  /** The remote broker's HOST[:PORT] when the extension uses one instead of the local daemon. */
  broker?: string;
  /** Why the last attempt to reach the remote broker failed (dialFailure), or why its URL is refused. */
  linkError?: string;
  /** True while the computer is offline (navigator.onLine false): no attempt until the browser's online event. */
  offline?: boolean;
}

/** One tab of the popup's window, for the share list. */
export interface PopupTab {
  tabId: number;
  title: string;
  url: string;
  active: boolean;
  /** The tab's Tether number when shared. */
  number?: number;
  /** The AI app the shared tab belongs to (absent: the user's, any app may use it). */
  owner?: string;
  /** The tab's favicon, only an http(s) or data:image URL (the popup loads nothing else). */
  favIconUrl?: string;
  /** True while an AI app is acting on the tab (a tool call on it, plus a short grace). */
  acting?: boolean;
  /** True for a tab of another window than the last-focused one (listed after it). */
  otherWindow?: boolean;
}

/** What the popup shows about tabs (answer to popup-tabs). */
export interface PopupTabs {
  /** The last-focused normal window's tabs, then the other windows', without the popup page itself. */
  tabs: PopupTab[];
  /** The active tab of that window, unless it is the popup page. */
  activeTabId?: number;
}

/** Messages handled by the service worker. */
export type BackgroundMessage =
  | { target: 'background'; kind: 'daemon-config' }
  | { target: 'background'; kind: 'connection-status'; status: ConnectionStatus }
  // broker: the remote broker's origin the ack came from (absent: the local daemon).
  | { target: 'background'; kind: 'hello-ack'; ack: HelloAck; broker?: string }
  // The daemon (or the remote broker: its origin) holds this profile as a new one (a pairing frame, or pairing_denied): it has no slug there.
  | { target: 'background'; kind: 'unpaired'; broker?: string }
  // The daemon rewrote the extension's folder: save the shared tabs and reload.
  | { target: 'background'; kind: 'daemon-reload'; frame: Reload }
  | { target: 'background'; kind: 'daemon-request'; request: Request; deadline: number }
  // doc: the number the document had, asked back after a restore (answered with it, or with a new one).
  | { target: 'background'; kind: 'register-document'; doc?: number }
  | { target: 'background'; kind: 'page-hooks'; batch: HookBatch }
  // An action's follow-up read starts in the sending frame: until the reply, the page may be busy with it.
  | { target: 'background'; kind: 'reading' }
  // The sending frame's own work before an action's dispatch starts (on) or ends: the page may be busy with it.
  | { target: 'background'; kind: 'preparing'; on: boolean }
  // Answered after ms (at most DELAY_MAX_MS): a hidden page's settle times its quiet window by it (its own timers fire on whole seconds).
  | { target: 'background'; kind: 'delay'; ms: number }
  | { target: 'background'; kind: 'popup-tabs' }
  | { target: 'background'; kind: 'popup-share'; tabId: number; shared: boolean }
  | { target: 'background'; kind: 'popup-take-back'; tabId: number }
  | { target: 'background'; kind: 'popup-reconnect' }
  | { target: 'background'; kind: 'popup-pair-again' }
  | { target: 'background'; kind: 'popup-rename'; label: string }
  // url: the remote broker's URL, or '' for the local daemon (answered with PopupBrokerReply).
  | { target: 'background'; kind: 'popup-broker'; url: string };

/** The answer to popup-broker: stored (and reconnecting), or refused with a sentence for the user. */
export type PopupBrokerReply = { ok: true } | { ok: false; error: string };

/** Messages handled by the offscreen document (from the service worker). */
export type OffscreenMessage =
  | { target: 'offscreen'; kind: 'tabs-changed'; frame: TabsChanged }
  | { target: 'offscreen'; kind: 'download'; frame: DownloadEvent }
  | { target: 'offscreen'; kind: 'reconnect' }
  | { target: 'offscreen'; kind: 'pair-again' };

/** The answer to a daemon-request: the result object, or an error. */
export type Outcome<T = object> = { ok: true; value: T } | { ok: false; error: WireError };

/** The page part of a PageResult, as read by the content script. */
export interface PageSnapshot {
  url: string;
  title: string;
  snapshot: string;
  /** The snapshot packed, when SnapshotShape.packOver asked for it (PageResult.snapshotGzip); snapshot is then ''. */
  snapshotGzip?: string;
  /** Nodes left out for size or depth (the service worker adds the note line); with omittedMore, at least this many. */
  omitted?: number;
  /** The walk stopped at its budget: more than omitted nodes were left out. */
  omittedMore?: boolean;
  /** The read ran into its deadline: the snapshot is what was read by then. */
  partial?: boolean;
  /** frameIds of cross-origin frame placeholders in snapshot (FRAME_MARK lines). */
  frames?: Array<number | string>;
  /** What a scroll did (scroll only). */
  scrolled?: ScrollReport;
}

/** How a content script shapes the snapshot of its reply (snapshot and every action). */
export interface SnapshotShape {
  maxChars?: number;
  depth?: number;
  /** Print each link's URL as a `- /url:` line (SnapshotOptions.urls). */
  urls?: boolean;
  /** Only this ref's subtree. */
  ref?: string;
  /** Pack a longer text that nothing was cut from or stitched into (SnapshotOptions.packOver; UTF-16 code units). */
  packOver?: number;
}

/** The page-world hooks' records, relayed by a content script (page-controlled data). */
export interface HookBatch {
  /** phase: see DialogRecord in shared/page-hooks.ts. */
  dialogs: Array<{ kind: 'alert' | 'confirm' | 'prompt'; message: string; phase: 'answered' | 'open' | 'closed'; accepted: boolean; promptText?: string; armed: boolean }>;
  console: Array<{ level: string; text: string; time: number; url?: string }>;
}

/**
 * Messages handled by the content scripts of a shared tab (page-state goes to
 * every frame; the others to the frame that holds the element or document).
 */
export type ContentMessage = ContentBody & {
  /** Date.now() past which a snapshot or search stops and answers with what it has (partial). */
  until?: number;
};
type ContentBody =
  | { target: 'content'; kind: 'ping' }
  | ({ target: 'content'; kind: 'page-state' } & PageControl)
  | { target: 'content'; kind: 'snapshot'; docsIssued: number; snap?: SnapshotShape }
  | { target: 'content'; kind: 'find'; text?: string; role?: string; limit?: number; docsIssued: number }
  | { target: 'content'; kind: 'read' }
  | { target: 'content'; kind: 'click'; ref: string; docsIssued: number; button?: MouseButton; count?: number; modifiers?: string[]; at?: ViewportPoint }
  | { target: 'content'; kind: 'hit'; x: number; y: number }
  | { target: 'content'; kind: 'type'; ref: string; text: string; submit: boolean; docsIssued: number }
  | ActionMessage;

/** A mouse button of browser_click. */
export type MouseButton = 'left' | 'right' | 'middle';

/** A point in CSS pixels of a frame's viewport. */
export interface ViewportPoint {
  x: number;
  y: number;
}

/** A file for file_upload, as the daemon sends it. */
export interface UploadFileData {
  name: string;
  mime: string;
  dataBase64: string;
}

/**
 * The action methods' content messages (select_option … wait_for, scroll; settle waits
 * for the DOM to go quiet after trusted input). ref "" in type: the focused element.
 * point, viewport and scroll_to serve trusted input and screenshots.
 */
export type ActionMessage =
  | { target: 'content'; kind: 'select_option'; ref: string; values: string[]; docsIssued: number }
  | { target: 'content'; kind: 'hover'; ref: string; docsIssued: number; at?: ViewportPoint }
  | { target: 'content'; kind: 'drag'; ref: string; toRef: string; docsIssued: number; from?: ViewportPoint; to?: ViewportPoint }
  | { target: 'content'; kind: 'press_key'; key: string; docsIssued: number }
  | { target: 'content'; kind: 'file_upload'; ref: string; files: UploadFileData[]; docsIssued: number }
  | { target: 'content'; kind: 'wait_for'; text?: string; textGone?: string; timeMs?: number; limitMs: number; docsIssued: number }
  | { target: 'content'; kind: 'settle'; docsIssued: number }
  | { target: 'content'; kind: 'point'; ref: string; docsIssued: number }
  | { target: 'content'; kind: 'viewport'; ref?: string; docsIssued: number }
  | { target: 'content'; kind: 'scroll'; ref?: string; to?: 'top' | 'bottom' | 'left' | 'right' | 'view'; dx: number; dy: number; docsIssued: number }
  | { target: 'content'; kind: 'scroll_to'; x: number; y: number; hideFixed?: boolean };

/** Where the page's viewport is, for screenshots (CSS pixels). */
export interface ViewportInfo {
  width: number;
  height: number;
  scrollX: number;
  scrollY: number;
  scrollWidth: number;
  scrollHeight: number;
  dpr: number;
  /** The element's box in the viewport, when a ref was given. */
  box?: { x: number; y: number; width: number; height: number };
}

/** The longest delay a content script may ask the service worker for, in ms. */
export const DELAY_MAX_MS = 2000;

/**
 * A content script's answer. navigating: the action started a navigation of
 * the page. redrawing: the action's page was snapshotted before the browser
 * drew its change (content/actions.ts settle), and may be busy drawing it
 * for a while after this answer. doc: the number of the document that answered, once it has one
 * (the service worker then knows the frame shows it: see claimDocument).
 */
export type ContentReply = (
  | { ok: true; page: PageSnapshot; navigating?: boolean; redrawing?: boolean }
  | { ok: true; pong: true }
  | { ok: true; found: FindMatch[]; frames: Array<number | string>; url: string; title: string; partial?: boolean; more?: boolean }
  | { ok: true; html: string; url: string; title: string }
  | { ok: true; point: { x: number; y: number } }
  /** hit: the cross-origin frame at the point (its frameId, or its key as in PageSnapshot.frames) and the point in its viewport; null: the point is in this frame. */
  | { ok: true; hit: { frame: number | string; x: number; y: number } | null }
  | { ok: true; viewport: ViewportInfo }
  | { ok: false; error: WireError }
) & { doc?: number };

export function isBackgroundMessage(m: unknown): m is BackgroundMessage {
  return typeof m === 'object' && m !== null && (m as { target?: unknown }).target === 'background';
}

export function isOffscreenMessage(m: unknown): m is OffscreenMessage {
  return typeof m === 'object' && m !== null && (m as { target?: unknown }).target === 'offscreen';
}

export function isContentMessage(m: unknown): m is ContentMessage {
  return typeof m === 'object' && m !== null && (m as { target?: unknown }).target === 'content';
}

/** Default daemon port when the extension folder has no tether.json. */
export const DEFAULT_PORT = 47615;
/** Default profile label when neither tether.json nor storage names one. */
export const DEFAULT_LABEL = 'Chrome';
/** The protocol version this build speaks (protocol.Version in Go). */
export const PROTOCOL_VERSION = 4;
