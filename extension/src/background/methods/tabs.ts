// The shared tabs: tabs_list, tab_new, tab_close and tab_select.
import type { PageResult, TabNewParams, TabsListResult } from '../../protocol.gen';
import { forgetTab, listTabs, requireTab, touch } from '../shared-tabs';
import { navigate } from './navigate';
import { str, tabParams, type P } from './params';

export async function tabsListMethod(): Promise<TabsListResult> {
  return { tabs: await listTabs() };
}

export function tabNewMethod(p: P, deadline: number): Promise<PageResult> {
  return navigate({ url: tabNewParams(p).url || 'about:blank', newTab: true }, deadline);
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

function tabNewParams(p: P): TabNewParams {
  const url = p.url;
  if (url === undefined || url === null || url === '') return {};
  return { url: str(p, 'url') };
}
