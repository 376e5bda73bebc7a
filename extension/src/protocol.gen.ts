// Code generated from protocol.schema.json by `npm run gen`; DO NOT EDIT.

/**
 * Frames between the Tether daemon and its extension. Generated from protocol/protocol.go; do not edit.
 */
export interface TetherProtocol {
  [k: string]: unknown | undefined;
}
/**
 * ClickParams clicks the element named by Ref.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "ClickParams".
 */
export interface ClickParams {
  tab?: number;
  ref: string;
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
    | 'internal';
  message: string;
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
   * it identifies one Chrome profile across restarts.
   */
  profileId: string;
  /**
   * Label is a human name for the profile, e.g. "Work".
   */
  label: string;
  /**
   * ExtVersion is the extension's manifest version string.
   */
  extVersion: string;
  /**
   * UserAgent is navigator.userAgent, for display.
   */
  userAgent?: string;
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
   * URL is absolute: http, https, file or about:blank.
   */
  url: string;
  /**
   * NewTab opens URL in a new shared tab instead of the addressed one.
   */
  newTab?: boolean;
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
    | 'internal';
  message: string;
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
  method: 'navigate' | 'snapshot' | 'click' | 'type' | 'tabs_list';
  /**
   * Params is the method's params object (see Method).
   */
  params: {};
  /**
   * TimeoutMs is how long the daemon waits for the response; the extension
   * should give up a little earlier and answer with code "timeout".
   */
  timeoutMs: number;
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
  ref: string;
  text: string;
  /**
   * Submit presses Enter after typing (submits the element's form).
   */
  submit?: boolean;
}
