// The shared tabs: tabs_list, tab_new, tab_close, tab_select and tab_owner.
import type { PageResult, TabInfo, TabNewParams, TabsListResult } from '../../protocol.gen';
import { TetherError } from '../../shared/errors';
import { forgetTab, listTabs, requireTab, setTabOwner, touch } from '../shared-tabs';
import { navigate } from './navigate';
import { ownerParam, str, tabParams, type P } from './params';

export async function tabsListMethod(): Promise<TabsListResult> {
  return { tabs: await listTabs() };
}

export function tabNewMethod(p: P, deadline: number): Promise<PageResult> {
  const np = tabNewParams(p);
  return navigate({ url: np.url || 'about:blank', newTab: true, ...(np.owner ? { owner: np.owner } : {}) }, deadline);
}

export async function tabCloseMethod(p: P): Promise<TabsListResult> {
  const t = await requireTab(tabParams(p).tab);
  await chrome.tabs.remove(t.tabId).catch((err: unknown) => {
    // Already gone is fine: the goal is a closed tab.
    if (!/No tab with id/i.test(String(err instanceof Error ? err.message : err))) throw err;
  });
  await forgetTab(t.tabId);
  return { tabs: await listTabs() };
}

export async function tabSelectMethod(p: P): Promise<TabsListResult> {
  const t = await requireTab(tabParams(p).tab);
  const tab = await chrome.tabs.update(t.tabId, { active: true });
  const windowId = tab?.windowId ?? (await chrome.tabs.get(t.tabId)).windowId;
  await chrome.windows.update(windowId, { focused: true });
  await touch(t.tabId);
  return { tabs: await listTabs() };
}

/** tab_owner: gives the tab to an app ({app}), or back to the user (no owner). */
export async function tabOwnerMethod(p: P): Promise<TabInfo> {
  const t = await requireTab(tabParams(p).tab);
  const owner = ownerParam(p);
  const info = await setTabOwner(t.tabId, owner && { app: owner.app });
  if (!info) throw new TetherError('unknown_tab', `Tab ${t.number} is no longer shared. Reload the list of tabs.`);
  return info;
}

function tabNewParams(p: P): TabNewParams {
  const url = p.url;
  const owner = ownerParam(p);
  const out: TabNewParams = owner ? { owner } : {};
  if (url === undefined || url === null || url === '') return out;
  return { ...out, url: str(p, 'url') };
}
