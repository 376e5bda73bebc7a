// The network family: a shared tab's requests (webRequest's view) and the
// downloads attributed to it. Both only read.
import type { Download, DownloadsResult, NetworkResult } from '../../protocol.gen';
import { TetherError } from '../../shared/errors';
import { decideDownload, downloadsOf } from '../downloads';
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

export async function downloadDecideMethod(p: P): Promise<Download> {
  const id = p['id'];
  const action = p['action'];
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) throw new TetherError('bad_request', 'download_decide needs an integer id');
  if (action !== 'resume' && action !== 'cancel') throw new TetherError('bad_request', 'download_decide action must be resume or cancel');
  return decideDownload(id, action);
}
