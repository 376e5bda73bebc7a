// Shared tabs: the only tabs the daemon can see or act on. Tabs the agent
// opens are shared, and so are tabs opened from a shared tab.
import { TetherError, noSharedTab } from '../shared/errors';
import type { TabInfo } from '../protocol.gen';
import { readState, updateState } from './state';

/** A shared tab resolved from a request. */
export interface SharedTab {
  tabId: number;
  number: number;
}

/** Shares tabId (idempotent) and returns its number. mostRecent also makes it the current tab. */
export function share(tabId: number, mostRecent: boolean): Promise<number> {
  return updateState((s) => {
    let n = s.shared[tabId];
    if (n === undefined) {
      n = s.nextNumber++;
      s.shared[tabId] = n;
    }
    s.recent = s.recent.filter((id) => id !== tabId);
    if (mostRecent) s.recent.unshift(tabId);
    else s.recent.push(tabId);
    return n;
  });
}

/** Shares a tab opened from a shared tab. */
export async function shareIfOpenedFromShared(tabId: number, openerTabId: number | undefined): Promise<void> {
  if (openerTabId === undefined) return;
  const s = await readState();
  if (s.shared[openerTabId] !== undefined && s.shared[tabId] === undefined) await share(tabId, false);
}

/** Forgets a closed tab. */
export function forgetTab(tabId: number): Promise<void> {
  return updateState((s) => {
    delete s.shared[tabId];
    delete s.docs[tabId];
    s.recent = s.recent.filter((id) => id !== tabId);
  });
}

/** Moves a tab's share and documents to the tab that replaced it (prerender swap). */
export function replaceTab(addedTabId: number, removedTabId: number): Promise<void> {
  return updateState((s) => {
    const n = s.shared[removedTabId];
    if (n !== undefined) {
      s.shared[addedTabId] = n;
      delete s.shared[removedTabId];
      s.recent = s.recent.map((id) => (id === removedTabId ? addedTabId : id));
    }
    if (s.docs[removedTabId] !== undefined) {
      s.docs[addedTabId] = s.docs[removedTabId]!;
      delete s.docs[removedTabId];
    }
  });
}

/** Marks a shared tab as the one used last. */
export function touch(tabId: number): Promise<void> {
  return updateState((s) => {
    if (s.shared[tabId] === undefined) return;
    s.recent = [tabId, ...s.recent.filter((id) => id !== tabId)];
  });
}

/** Numbers the next document of a tab (1 for its first) and returns it. */
export function nextDocument(tabId: number): Promise<number> {
  return updateState((s) => (s.docs[tabId] = (s.docs[tabId] ?? 0) + 1));
}

/** How many documents the tab has numbered so far. */
export async function documentsIssued(tabId: number): Promise<number> {
  return (await readState()).docs[tabId] ?? 0;
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

/** Lists the shared tabs in number order. */
export async function listTabs(): Promise<TabInfo[]> {
  await pruneClosed();
  const s = await readState();
  const current = await currentTabId(s.recent, s.shared);
  const out: TabInfo[] = [];
  for (const [id, n] of Object.entries(s.shared)) {
    const t = await chrome.tabs.get(Number(id)).catch(() => undefined);
    if (!t) continue;
    out.push({ tab: n, url: t.url ?? t.pendingUrl ?? '', title: t.title ?? '', active: t.active, current: t.id === current });
  }
  return out.sort((a, b) => a.tab - b.tab);
}
