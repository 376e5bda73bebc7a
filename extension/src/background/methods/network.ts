// The network family: a shared tab's requests (webRequest's view) and the
// downloads attributed to it. Both only read.
import type { DownloadsResult, NetworkResult } from '../../protocol.gen';
import { downloadsOf } from '../downloads';
import { requestsOf } from '../network';
import { requireTab } from '../shared-tabs';
import { optString, tabParams, type P } from './params';

export async function networkMethod(p: P): Promise<NetworkResult> {
  const t = await requireTab(tabParams(p).tab);
  return requestsOf(t.tabId, t.number, optString(p, 'id'));
}

export async function downloadsMethod(p: P): Promise<DownloadsResult> {
  const t = await requireTab(tabParams(p).tab);
  return { tab: t.number, downloads: await downloadsOf(t.tabId, t.number) };
}
