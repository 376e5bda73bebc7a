// The popup's share list, built by the service worker (answer to popup-tabs)
// and shown by the popup (popup/view.ts).
import type { TabOwner } from '../protocol.gen';
import type { PopupTab, PopupTabs } from './messages';

/**
 * The tabs the popup lists: a window's tabs without the popup page (when it
 * is open as a tab), each shared one with its number and the app it belongs to.
 */
export function popupTabList(windowTabs: chrome.tabs.Tab[], shared: Record<string, number>, ownUrl: string, owners: Record<string, TabOwner> = {}): PopupTabs {
  const tabs: PopupTab[] = [];
  let activeTabId: number | undefined;
  for (const t of windowTabs) {
    if (t.id === undefined) continue;
    const url = t.url || t.pendingUrl || '';
    if (url.startsWith(ownUrl)) continue;
    const entry: PopupTab = { tabId: t.id, title: t.title || url || 'Untitled tab', url, active: t.active };
    const n = shared[t.id];
    if (n !== undefined) entry.number = n;
    const owner = owners[t.id];
    if (n !== undefined && owner) entry.owner = owner.app || 'an unnamed AI app';
    tabs.push(entry);
    if (t.active) activeTabId = t.id;
  }
  return activeTabId === undefined ? { tabs } : { tabs, activeTabId };
}
