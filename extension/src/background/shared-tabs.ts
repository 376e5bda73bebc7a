// Shared tabs: the only tabs the daemon can see or act on. The user shares
// tabs from the popup, the context menu or the keyboard command; tabs the
// agent opens are shared, and so are tabs opened from a shared tab. Every
// change is marked on the tab (action badge) and pushed to the daemon as
// tabs_changed.
import { TetherError, noSharedTab } from '../shared/errors';
import type { OffscreenMessage } from '../shared/messages';
import type { TabInfo, TabOwner, TabsChanged } from '../protocol.gen';
import { joinAppGroup, leaveAppGroup } from './tab-groups';
import { forgetConsole } from './page-records';
import { readState, updateState } from './state';
import { hookTab, unhookTab } from './tab-hooks';
import { TabsChangedCoalescer, type TabChange } from './tab-events';

/** A shared tab resolved from a request. */
export interface SharedTab {
  tabId: number;
  number: number;
}

/** The badge colour of shared tabs. */
export const BADGE_COLOR = '#6d28d9';
const DEFAULT_TITLE = 'Tether';
export const MENU_ID = 'tether-share';

let coalescer: TabsChangedCoalescer | undefined;

function sendToOffscreen(frame: TabsChanged): Promise<void> {
  const msg: OffscreenMessage = { target: 'offscreen', kind: 'tabs-changed', frame };
  // No offscreen document (yet): the next hello carries the tabs anyway.
  return chrome.runtime.sendMessage(msg).then(
    () => undefined,
    () => undefined,
  );
}

/** The tabs_changed coalescer (replaceable in tests). */
export function tabsChanged(): TabsChangedCoalescer {
  coalescer ??= new TabsChangedCoalescer({ listTabs, send: sendToOffscreen });
  return coalescer;
}

export function setTabsChangedCoalescer(c: TabsChangedCoalescer | undefined): void {
  coalescer = c;
}

function announce(change: TabChange, number: number): void {
  tabsChanged().add(change, number);
}

/**
 * Shares tabId (idempotent) and returns its number. mostRecent also makes it
 * the current tab. how names the change announced when the tab was not shared
 * yet: "opened" for tabs Tether or a shared tab opened, "shared" for the user's.
 * owner, for a tab not shared yet, is the AI app (and session) it belongs to:
 * the one that opened it, or whose tab it was opened from; the tab then joins
 * that app's tab group.
 */
export async function share(tabId: number, mostRecent: boolean, how: 'opened' | 'shared' = 'opened', owner?: TabOwner): Promise<number> {
  const { n, added } = await updateState((s) => {
    let n = s.shared[tabId];
    const added = n === undefined;
    if (n === undefined) {
      n = s.numbers[tabId] ?? s.nextNumber++;
      s.shared[tabId] = n;
      s.numbers[tabId] = n;
      if (owner) s.owners[tabId] = { app: owner.app, ...(owner.session ? { session: owner.session } : {}) };
    }
    s.recent = s.recent.filter((id) => id !== tabId);
    if (mostRecent) s.recent.unshift(tabId);
    else s.recent.push(tabId);
    return { n, added };
  });
  if (added) {
    announce(how, n);
    // Nothing from before sharing reaches the AI.
    await forgetConsole(tabId);
    await hookTab(tabId).catch(() => undefined);
    await markTab(tabId, n);
    void refreshMenu();
    if (owner) await joinAppGroup(tabId, owner.app);
  }
  return n;
}

/**
 * Gives shared tabId to owner's app, or back to the user (owner undefined):
 * the user's choice, in the window (tab_owner) or the popup. A tab given to
 * an app joins no group; one taken from an app leaves that app's group.
 * Returns the tab as it is now.
 */
export async function setTabOwner(tabId: number, owner: TabOwner | undefined): Promise<TabInfo | undefined> {
  const { n, was } = await updateState((s) => {
    const n = s.shared[tabId];
    const was = s.owners[tabId];
    if (n === undefined) return { n, was };
    if (owner) s.owners[tabId] = { app: owner.app };
    else delete s.owners[tabId];
    return { n, was };
  });
  if (n === undefined) return undefined;
  if (was && was.app !== owner?.app) await leaveAppGroup(tabId, was.app);
  if (was?.app !== owner?.app) announce('owner', n);
  return tabInfo(tabId);
}

/**
 * Stops sharing tabId (the user's choice): its hooks come out, and its
 * dialogs, armed answers and console are forgotten. Its number stays reserved
 * while it lives.
 */
export async function unshare(tabId: number): Promise<void> {
  const gone = await updateState((s) => {
    const n = s.shared[tabId];
    delete s.shared[tabId];
    delete s.dialogs[tabId];
    delete s.armed[tabId];
    delete s.open[tabId];
    s.recent = s.recent.filter((id) => id !== tabId);
    const owner = s.owners[tabId];
    delete s.owners[tabId];
    return n === undefined ? undefined : { n, owner };
  });
  if (gone === undefined) return;
  const { n, owner } = gone;
  if (owner) await leaveAppGroup(tabId, owner.app);
  unhookTab(tabId);
  await forgetConsole(tabId);
  announce('unshared', n);
  await markTab(tabId, undefined);
  void refreshMenu();
}

/** Shares or unshares tabId; returns whether it is shared now. */
export async function toggleShare(tabId: number): Promise<boolean> {
  if ((await readState()).shared[tabId] !== undefined) {
    await unshare(tabId);
    return false;
  }
  await share(tabId, false, 'shared');
  return true;
}

/** Shares a tab opened from a shared tab; it belongs to the opener's owner. */
export async function shareIfOpenedFromShared(tabId: number, openerTabId: number | undefined): Promise<void> {
  if (openerTabId === undefined) return;
  const s = await readState();
  if (s.shared[openerTabId] !== undefined && s.shared[tabId] === undefined) await share(tabId, false, 'opened', s.owners[openerTabId]);
}

/** The owner of shared tabId (undefined: the user's). */
export async function ownerOf(tabId: number): Promise<TabOwner | undefined> {
  return (await readState()).owners[tabId];
}

/** Forgets a closed tab. */
export async function forgetTab(tabId: number): Promise<void> {
  const n = await updateState((s) => {
    const n = s.shared[tabId];
    delete s.shared[tabId];
    delete s.numbers[tabId];
    delete s.docs[tabId];
    delete s.issued[tabId];
    delete s.dialogs[tabId];
    delete s.armed[tabId];
    delete s.open[tabId];
    delete s.owners[tabId];
    s.recent = s.recent.filter((id) => id !== tabId);
    return n;
  });
  await forgetConsole(tabId);
  if (n !== undefined) announce('closed', n);
}

/** Moves a tab's share and documents to the tab that replaced it (prerender swap). */
export async function replaceTab(addedTabId: number, removedTabId: number): Promise<void> {
  const n = await updateState((s) => {
    const n = s.shared[removedTabId];
    if (n !== undefined) {
      s.shared[addedTabId] = n;
      delete s.shared[removedTabId];
      s.recent = s.recent.map((id) => (id === removedTabId ? addedTabId : id));
    }
    if (s.numbers[removedTabId] !== undefined) {
      s.numbers[addedTabId] = s.numbers[removedTabId]!;
      delete s.numbers[removedTabId];
    }
    for (const key of ['docs', 'issued', 'dialogs', 'armed', 'open', 'owners'] as const) {
      if (s[key][removedTabId] !== undefined) {
        (s[key] as Record<string, unknown>)[addedTabId] = s[key][removedTabId];
        delete s[key][removedTabId];
      }
    }
    return n;
  });
  if (n !== undefined) {
    announce('navigated', n);
    await markTab(addedTabId, n);
  }
}

/**
 * tabs.onUpdated: announces a shared tab's completed load or same-document
 * URL change as navigated, and a new title of a loaded page as title. Chrome
 * may drop per-tab badges on navigation, so the mark is set again.
 */
export async function onTabUpdated(tabId: number, info: chrome.tabs.OnUpdatedInfo, tab: chrome.tabs.Tab): Promise<void> {
  const n = (await readState()).shared[tabId];
  if (n === undefined) return;
  if (info.status === 'complete' || (info.url !== undefined && tab.status === 'complete')) announce('navigated', n);
  else if (info.title !== undefined && tab.status === 'complete') announce('title', n);
  if (info.status !== undefined || info.url !== undefined) await markTab(tabId, n);
}

/** tabs.onActivated: announces a shared tab coming to the front, and fixes the menu's check. */
export async function onTabActivated(tabId: number): Promise<void> {
  const n = (await readState()).shared[tabId];
  if (n !== undefined) announce('activated', n);
  await refreshMenu(tabId);
}

/** Marks a shared tab with its number on the action badge, or clears the mark (n undefined). */
export async function markTab(tabId: number, n: number | undefined): Promise<void> {
  try {
    if (n === undefined) {
      await chrome.action.setBadgeText({ tabId, text: '' });
      await chrome.action.setTitle({ tabId, title: DEFAULT_TITLE });
      return;
    }
    await chrome.action.setBadgeText({ tabId, text: String(n) });
    await chrome.action.setBadgeBackgroundColor({ tabId, color: BADGE_COLOR });
    await chrome.action.setBadgeTextColor?.({ tabId, color: '#ffffff' });
    await chrome.action.setTitle({ tabId, title: `Shared with Tether as tab ${n}` });
  } catch {
    // The tab closed meanwhile.
  }
}

/** Sets the context menu's check to whether the active tab (or tabId) is shared. */
export async function refreshMenu(tabId?: number): Promise<void> {
  try {
    if (tabId === undefined) {
      const [active] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
      tabId = active?.id;
    }
    if (tabId === undefined) return;
    const checked = (await readState()).shared[tabId] !== undefined;
    await chrome.contextMenus.update(MENU_ID, { checked });
  } catch {
    // The menu is created on install; a missing one is recreated then.
  }
}

/** Marks a shared tab as the one used last. */
export function touch(tabId: number): Promise<void> {
  return updateState((s) => {
    if (s.shared[tabId] === undefined) return;
    s.recent = [tabId, ...s.recent.filter((id) => id !== tabId)];
  });
}

/**
 * Finds the tab a request addresses: number tab, or (0/absent) the current
 * tab. Throws no_shared_tab or unknown_tab. Drops shared tabs that no longer
 * exist on the way.
 */
export async function resolveTab(tab: number | undefined): Promise<SharedTab | undefined> {
  await pruneClosed();
  const s = await readState();
  const entries = Object.entries(s.shared).map(([id, n]) => ({ tabId: Number(id), number: n }));
  if (entries.length === 0) return undefined;
  if (tab) {
    const hit = entries.find((e) => e.number === tab);
    if (!hit) {
      const valid = entries.map((e) => e.number).sort((a, b) => a - b).join(', ');
      throw new TetherError('unknown_tab', `No shared tab has number ${tab}. The shared tabs are: ${valid}. Call browser_tabs to list them, or pass one of those numbers.`);
    }
    return hit;
  }
  const current = await currentTabId(s.recent, s.shared);
  return entries.find((e) => e.tabId === current) ?? entries[0];
}

/** Like resolveTab, but a missing shared tab is an error. */
export async function requireTab(tab: number | undefined): Promise<SharedTab> {
  const t = await resolveTab(tab);
  if (!t) throw noSharedTab();
  return t;
}

async function currentTabId(recent: number[], shared: Record<string, number>): Promise<number | undefined> {
  if (recent.length > 0) return recent[0];
  const [active] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  return active?.id !== undefined && shared[active.id] !== undefined ? active.id : undefined;
}

async function pruneClosed(): Promise<void> {
  const s = await readState();
  const ids = Object.keys(s.shared).map(Number);
  if (ids.length === 0) return;
  const open = new Set((await chrome.tabs.query({})).map((t) => t.id));
  for (const id of ids) if (!open.has(id)) await forgetTab(id);
}

/** Describes one shared tab. */
export async function tabInfo(tabId: number): Promise<TabInfo | undefined> {
  const s = await readState();
  const n = s.shared[tabId];
  if (n === undefined) return undefined;
  const t = await chrome.tabs.get(tabId).catch(() => undefined);
  if (!t) return undefined;
  const current = await currentTabId(s.recent, s.shared);
  return withOwner({ tab: n, url: t.url || t.pendingUrl || '', title: t.title ?? '', active: t.active, current: t.id === current }, s.owners[tabId]);
}

/** Lists the shared tabs in number order. */
export async function listTabs(): Promise<TabInfo[]> {
  await pruneClosed();
  const s = await readState();
  const current = await currentTabId(s.recent, s.shared);
  const out: TabInfo[] = [];
  for (const [id, n] of Object.entries(s.shared)) {
    const t = await chrome.tabs.get(Number(id)).catch(() => undefined);
    if (!t) continue;
    out.push(withOwner({ tab: n, url: t.url || t.pendingUrl || '', title: t.title ?? '', active: t.active, current: t.id === current }, s.owners[id]));
  }
  return out.sort((a, b) => a.tab - b.tab);
}

function withOwner(info: TabInfo, owner: TabOwner | undefined): TabInfo {
  return owner ? { ...info, owner } : info;
}
