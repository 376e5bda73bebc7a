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
    | 'unauthorized'
    | 'pairing_denied'
    | 'too_many_profiles'
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
  /**
   * Slug is the slug the daemon last assigned (from hello_ack), so slugs
   * survive a daemon that lost its records; empty on first contact.
   */
  slug?: string;
  /**
   * Secret is the per-profile secret the daemon issued at pairing; empty
   * before pairing. A hello that claims a known ProfileID without its
   * secret is refused.
   */
  secret?: string;
  /**
   * Tabs are the currently shared tabs.
   */
  tabs: TabInfo[];
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
   * Secret is set only when the daemon issues a new secret (at pairing);
   * the extension stores it in chrome.storage.local and sends it in every
   * later hello. It is never shown to the user or logged.
   */
  secret?: string;
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
  /**
   * OpenedTabs lists tabs the action opened (target=_blank links,
   * window.open, OAuth popups); they are shared automatically.
   */
  openedTabs?: TabInfo[];
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
   * Message tells the user how to approve, for the popup.
   */
  message: string;
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
  method:
    | 'navigate'
    | 'snapshot'
    | 'click'
    | 'type'
    | 'tabs_list'
    | 'tab_new'
    | 'tab_close'
    | 'tab_select';
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
 * TabsChanged is pushed by the extension whenever a shared tab is opened, closed, navigated, retitled, shared, unshared or activated, so the daemon never polls.
 *
 * This interface was referenced by `TetherProtocol`'s JSON-Schema
 * via the `definition` "TabsChanged".
 */
export interface TabsChanged {
  type: 'tabs_changed';
  change: 'opened' | 'closed' | 'navigated' | 'title' | 'shared' | 'unshared' | 'activated';
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
  ref: string;
  text: string;
  /**
   * Submit presses Enter after typing (submits the element's form).
   */
  submit?: boolean;
}
