// Messages between the extension's own contexts (offscreen document, service
// worker, content script). Every message names its target context and kind,
// so each listener ignores what is not addressed to it.
import type { Error as WireError, HelloAck, Request, TabInfo, TabsChanged } from '../protocol.gen';

export type Method = Request['method'];

/** The methods the daemon may call: an explicit allow-list. */
export const METHODS: readonly Method[] = ['navigate', 'snapshot', 'click', 'type', 'tabs_list', 'tab_new', 'tab_close', 'tab_select'];

export function isMethod(m: unknown): m is Method {
  return typeof m === 'string' && (METHODS as readonly string[]).includes(m);
}

/** What the offscreen document needs to open and greet the daemon. */
export interface DaemonConfig {
  port: number;
  label: string;
  profileId: string;
  extVersion: string;
  /** The slug of the last hello_ack, if any. */
  slug?: string;
  /** The per-profile secret from pairing, if any. Never shown or logged. */
  secret?: string;
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
/** Refusal codes after which the extension retries slowly. */
export const SLOW_RETRY_CODES: readonly string[] = ['too_many_profiles'];
/** The slow retry period. */
export const SLOW_RETRY_MS = 30_000;

/** The connection state shown in the popup (chrome.storage.session key "status"). */
export interface ConnectionStatus {
  /** pairing: the daemon holds the socket until the user approves this profile. */
  state: 'connecting' | 'pairing' | 'connected' | 'disconnected';
  port: number;
  /** Date.now() of the last state change. */
  since: number;
  /** The last refused frame from the daemon, if any. */
  lastRefusal?: { code: string; message: string; at: number };
  /** The daemon's pairing message while state is pairing. */
  pairing?: string;
  /** True when the connection stopped retrying until the user presses Reconnect. */
  halted?: boolean;
}

/** One tab of the popup's window, for the share list. */
export interface PopupTab {
  tabId: number;
  title: string;
  url: string;
  active: boolean;
  /** The tab's Tether number when shared. */
  number?: number;
}

/** What the popup shows about tabs (answer to popup-tabs). */
export interface PopupTabs {
  /** The last-focused normal window's tabs, without the popup page itself. */
  tabs: PopupTab[];
  /** The active tab of that window, unless it is the popup page. */
  activeTabId?: number;
}

/** Messages handled by the service worker. */
export type BackgroundMessage =
  | { target: 'background'; kind: 'daemon-config' }
  | { target: 'background'; kind: 'connection-status'; status: ConnectionStatus }
  | { target: 'background'; kind: 'hello-ack'; ack: HelloAck }
  | { target: 'background'; kind: 'daemon-request'; request: Request; deadline: number }
  | { target: 'background'; kind: 'register-document' }
  | { target: 'background'; kind: 'popup-tabs' }
  | { target: 'background'; kind: 'popup-share'; tabId: number; shared: boolean }
  | { target: 'background'; kind: 'popup-reconnect' }
  | { target: 'background'; kind: 'popup-rename'; label: string };

/** Messages handled by the offscreen document (from the service worker). */
export type OffscreenMessage =
  | { target: 'offscreen'; kind: 'tabs-changed'; frame: TabsChanged }
  | { target: 'offscreen'; kind: 'reconnect' };

/** The answer to a daemon-request: the result object, or an error. */
export type Outcome<T = object> = { ok: true; value: T } | { ok: false; error: WireError };

/** The page part of a PageResult, as read by the content script. */
export interface PageSnapshot {
  url: string;
  title: string;
  snapshot: string;
}

/** Messages handled by the content script of a tab's top frame. */
export type ContentMessage =
  | { target: 'content'; kind: 'ping' }
  | { target: 'content'; kind: 'snapshot'; docsIssued: number }
  | { target: 'content'; kind: 'click'; ref: string; docsIssued: number }
  | { target: 'content'; kind: 'type'; ref: string; text: string; submit: boolean; docsIssued: number };

/** A content script's answer. navigating: the action started a navigation of the page. */
export type ContentReply =
  | { ok: true; page: PageSnapshot; navigating?: boolean }
  | { ok: true; pong: true }
  | { ok: false; error: WireError };

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
export const PROTOCOL_VERSION = 2;
