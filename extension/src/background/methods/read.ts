// The reading methods: snapshot (with options), find, read, read_url and console.
import type { ConsoleResult, FindMatch, FindResult, PageResult, ReadResult } from '../../protocol.gen';
import { TetherError } from '../../shared/errors';
import type { ContentReply } from '../../shared/messages';
import { setActingUntil } from '../acting';
import { callContent, isRestrictedUrl } from '../content-bridge';
import { documentsIssued } from '../documents';
import { NavigationWatcher } from '../navigation';
import { consoleOf } from '../page-records';
import { forgetTab, requireTab, share, touch, type SharedTab } from '../shared-tabs';
import { actOn, loadOrBlocked, pageReady } from '../tab-hooks';
import { loadDeadline } from './act';
import { MAX_FRAME_DEPTH, pageResult } from './page-result';
import { bool, count, optString, ownerParam, snapShape, tabParams, type P } from './params';
import { frameResolver, routeRef } from './route';

const FIND_LIMIT_DEFAULT = 50;
const FIND_LIMIT_MAX = 1000;

export async function snapshotMethod(p: P, deadline: number): Promise<PageResult> {
  const shape = snapShape(p);
  const depth = count(p, 'depth', 1000);
  if (depth !== undefined) shape.depth = depth;
  const ref = optString(p, 'ref')?.trim();
  if (ref) shape.ref = ref;
  const { t, frameId } = ref ? await routeRef(ref, tabParams(p).tab) : { t: await requireTab(tabParams(p).tab), frameId: 0 };
  await touch(t.tabId);
  return pageResult(t.tabId, deadline, shape, frameId);
}

export async function findMethod(p: P, deadline: number): Promise<FindResult> {
  const text = optString(p, 'text')?.trim() || undefined;
  const role = optString(p, 'role')?.trim() || undefined;
  if (!text && !role) throw new TetherError('bad_request', 'Pass text, role or both to browser_find.');
  const limit = count(p, 'limit', FIND_LIMIT_MAX) ?? FIND_LIMIT_DEFAULT;
  const t = await requireTab(tabParams(p).tab);
  await touch(t.tabId);
  await pageReady(t.tabId);
  const docsIssued = await documentsIssued();
  const matches: FindMatch[] = [];
  let url = '';
  let title = '';
  let partial = false;
  let more = false;
  const search = async (frameId: number, depth: number): Promise<void> => {
    let reply: ContentReply;
    try {
      // A search by role alone stops in the page past the limit (there may be thousands of buttons).
      reply = await callContent(t.tabId, { target: 'content', kind: 'find', text, role, limit: text ? undefined : limit, docsIssued }, deadline, frameId);
    } catch (err) {
      if (frameId === 0) throw err;
      return; // A frame that went away.
    }
    if (!reply.ok) throw new TetherError(reply.error.code, reply.error.message);
    if (!('found' in reply)) throw new Error('the content script answered without matches');
    if (frameId === 0) ({ url, title } = reply);
    matches.push(...reply.found);
    if (reply.partial) partial = true;
    if (reply.more) more = true;
    if (depth >= MAX_FRAME_DEPTH) return;
    const resolve = frameResolver(t.tabId, frameId);
    for (const key of reply.frames) {
      const child = await resolve(key);
      if (child !== undefined) await search(child, depth + 1);
    }
  };
  await search(0, 0);
  const out: FindResult = { tab: t.number, url, title, matches: matches.slice(0, limit), total: matches.length };
  if (partial) out.partial = true;
  // Past the limit, a search by role counts no further: total is a floor.
  if (more) out.more = true;
  return out;
}

export async function readMethod(p: P, deadline: number): Promise<ReadResult> {
  const t = await requireTab(tabParams(p).tab);
  await touch(t.tabId);
  return readTab(t, deadline);
}

async function readTab(t: SharedTab, deadline: number): Promise<ReadResult> {
  const tab = await chrome.tabs.get(t.tabId);
  const url = tab.url || tab.pendingUrl || '';
  if (url === 'about:blank' || url === '') return { tab: t.number, url, title: tab.title ?? '', html: '' };
  await pageReady(t.tabId);
  const reply = await callContent(t.tabId, { target: 'content', kind: 'read' }, deadline);
  if (!reply.ok) throw new TetherError(reply.error.code, reply.error.message);
  if (!('html' in reply)) throw new Error('the content script answered without HTML');
  return { tab: t.number, url: reply.url, title: reply.title, html: reply.html };
}

export async function readUrlMethod(p: P, deadline: number): Promise<ReadResult> {
  const raw = typeof p.url === 'string' ? p.url.trim() : '';
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new TetherError('bad_request', `${JSON.stringify(p.url)} is not an absolute URL. Pass a full http(s) URL.`);
  }
  if (!['http:', 'https:', 'file:'].includes(parsed.protocol)) {
    if (isRestrictedUrl(raw)) throw new TetherError('restricted_page', `Chrome does not let extensions read ${raw}. Pass an http(s) URL.`);
    throw new TetherError('bad_request', `Cannot read ${JSON.stringify(raw)}: only http, https and file URLs can be read.`);
  }
  const closeAfter = bool(p, 'closeAfter');
  const watcher = new NavigationWatcher();
  let tabId: number | undefined;
  try {
    const tab = await chrome.tabs.create({ url: parsed.href, active: false });
    const id = (tabId = tab.id!);
    setActingUntil(id, deadline); // before its first document gets the hooks
    const number = await share(id, false, 'opened', ownerParam(p));
    return await actOn(
      id,
      deadline,
      async () => {
        const loaded = await loadOrBlocked(watcher, id, loadDeadline(deadline), `${parsed.href} was opened in tab ${number}. `);
        if (!loaded && !watcher.committed(id)) {
          throw new TetherError('timeout', `Loading ${parsed.href} did not get a response in time. Try again later, or call browser_navigate to open it in a tab you can watch.`);
        }
        return readTab({ tabId: id, number }, deadline);
      },
      { loads: true, opened: true },
    );
  } finally {
    watcher.dispose();
    if (closeAfter && tabId !== undefined) {
      await chrome.tabs.remove(tabId).catch(() => undefined);
      await forgetTab(tabId);
    }
  }
}

export async function consoleMethod(p: P): Promise<ConsoleResult> {
  const t = await requireTab(tabParams(p).tab);
  const clear = bool(p, 'clear');
  // Content scripts relay console records in batches every 50 ms.
  await new Promise((r) => setTimeout(r, 60));
  return consoleOf(t.tabId, t.number, clear);
}
