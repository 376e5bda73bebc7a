// The popup's share list, built by the service worker (answer to popup-tabs)
// and shown by the popup (popup/view.ts).
import type { TabOwner } from '../protocol.gen';
import type { PopupTab, PopupTabs } from './messages';

/** What the service worker knows of the tabs besides Chrome's own fields. */
export interface PopupTabState {
  /** Tab id → Tether number, for shared tabs. */
  shared: Record<string, number>;
  /** Tab id → the AI app that owns it. */
  owners?: Record<string, TabOwner>;
  /** The tabs an AI app is acting on now. */
  acting?: ReadonlySet<number>;
  /**
   * The last-focused normal window: its tabs come first; the others are
   * marked otherWindow. When it has none to list (the popup page opened as
   * a tab in a window of its own), the first listed tab's window is this one.
   */
  windowId?: number;
}

/**
 * The favicon URL the popup may load: http(s) or a data: image. Anything
 * else (chrome://, file:, a page URL of another scheme) is dropped.
 */
export function safeFavicon(url: string | undefined): string | undefined {
  if (!url) return undefined;
  return /^(https?:\/\/|data:image\/)/i.test(url) ? url : undefined;
}

/**
 * The tabs the popup lists: the windows' tabs without the popup page (when
 * it is open as a tab), the last-focused window's first, each shared one
 * with its number, the app it belongs to and whether an AI acts on it now.
 */
export function popupTabList(windowTabs: chrome.tabs.Tab[], ownUrl: string, state: PopupTabState): PopupTabs {
  const mine: PopupTab[] = [];
  const others: PopupTab[] = [];
  let activeTabId: number | undefined;
  const owners = state.owners ?? {};
  const listed = windowTabs.filter((t) => t.id !== undefined && !(t.url || t.pendingUrl || '').startsWith(ownUrl));
  // The popup opened as a tab in a window of its own: "this window" is the next one.
  const here = listed.some((t) => t.windowId === state.windowId) ? state.windowId : listed[0]?.windowId;
  for (const t of listed) {
    if (t.id === undefined) continue;
    const url = t.url || t.pendingUrl || '';
    const other = here !== undefined && t.windowId !== here;
    const entry: PopupTab = { tabId: t.id, title: t.title || url || 'Untitled tab', url, active: t.active };
    const n = state.shared[t.id];
    if (n !== undefined) entry.number = n;
    const owner = owners[t.id];
    if (n !== undefined && owner) entry.owner = owner.app || 'an unnamed AI app';
    const icon = safeFavicon(t.favIconUrl);
    if (icon) entry.favIconUrl = icon;
    if (n !== undefined && state.acting?.has(t.id)) entry.acting = true;
    if (other) entry.otherWindow = true;
    (other ? others : mine).push(entry);
    if (t.active && !other && activeTabId === undefined) activeTabId = t.id;
  }
  const tabs = [...mine, ...others];
  return activeTabId === undefined ? { tabs } : { tabs, activeTabId };
}
