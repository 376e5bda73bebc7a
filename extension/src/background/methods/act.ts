// Acting on a page, for every method that acts: refusing restricted pages,
// running the content script's action in the right frame, following the
// navigation or new tabs it starts, and answering with the PageResult.
import type { PageResult, TabInfo } from '../../protocol.gen';
import { TetherError, restrictedPage } from '../../shared/errors';
import type { ContentMessage, ContentReply, SnapshotShape } from '../../shared/messages';
import { callContent, isChannelClosed, isRestrictedUrl, markRedrawing } from '../content-bridge';
import { documentsIssued } from '../documents';
import { NavigationWatcher, OpenedTabsWatcher } from '../navigation';
import { ownerOf, requireTab, share, tabInfo, touch, type SharedTab } from '../shared-tabs';
import { actOn, actionOrBlocked, loadOrBlocked } from '../tab-hooks';
import { tabParams, type P } from './params';
import { finishPage, pageResult } from './page-result';
import { routeRef } from './route';

/** Time kept back from a load or a wait for the snapshot that follows it. */
export const SNAPSHOT_RESERVE_MS = 1500;

/** A content action that answers with the page. */
export type ActMessage = ContentMessage & { docsIssued: number; snap?: SnapshotShape };

/**
 * Runs a click or type in the page; when it navigates, waits for the new page
 * and snapshots that. aim, for an action at a point, picks the frame once the
 * page is ready (and may rewrite msg's point into that frame's viewport).
 */
export async function act(
  tab: number | undefined,
  msg: ActMessage,
  deadline: number,
  before?: (tabId: number) => Promise<void>,
  aim?: (t: SharedTab) => Promise<number>,
): Promise<PageResult> {
  // A ref names its tab and frame (refs are unique per profile): act there.
  const ref = 'ref' in msg && typeof msg.ref === 'string' && msg.ref.trim() ? msg.ref : undefined;
  const { t, frameId } = ref ? await routeRef(ref, tab) : { t: await requireTab(tab), frameId: 0 };
  const shape = msg.snap ?? {};
  await touch(t.tabId);
  return actOn(t.tabId, deadline, async () => actIn(t, aim ? await aim(t) : frameId, msg, shape, deadline, before));
}

async function actIn(t: SharedTab, frameId: number, msg: ContentMessage & { docsIssued: number }, shape: SnapshotShape, deadline: number, before?: (tabId: number) => Promise<void>): Promise<PageResult> {
  const watcher = new NavigationWatcher();
  const opened = new OpenedTabsWatcher(t.tabId);
  try {
    msg.docsIssued = await documentsIssued(t.tabId);
    // Trusted input acts here, once the watchers see what it starts.
    await before?.(t.tabId);
    let reply: ContentReply | undefined;
    try {
      reply = await actionOrBlocked(t.tabId, callContent(t.tabId, msg, deadline, frameId));
    } catch (err) {
      // The page was replaced while answering: the action navigated.
      if (!(watcher.started(t.tabId) && isChannelClosed(err))) throw err;
    }
    if (reply && !reply.ok) throw new TetherError(reply.error.code, reply.error.message);
    // Answered before the page drew the change: the next call's checks take a page busy drawing it for no dialog.
    if (reply && 'page' in reply && reply.redrawing) markRedrawing(t.tabId);
    const navigated = !reply || ('navigating' in reply && reply.navigating === true) || watcher.started(t.tabId);
    if (navigated) {
      // Wait for the new page; give up early when no navigation actually starts.
      await waitForPage(watcher, t.tabId, 'the new page', deadline, 'The action reached the page and started a navigation. ', Date.now() + 1000);
      return withOpened(await pageResult(t.tabId, deadline, shape), await openedTabs(opened, t.tabId));
    }
    // An action in a cross-origin frame answered with that frame only: the result shows the whole tab.
    if (reply && 'page' in reply && frameId !== 0) {
      const page = await pageResult(t.tabId, deadline, shape);
      if (reply.page.scrolled) page.scrolled = reply.page.scrolled;
      return withOpened(page, await openedTabs(opened, t.tabId));
    }
    if (reply && 'page' in reply) return withOpened(await finishPage(t.tabId, t.number, reply.page, shape, deadline, reply.doc), await openedTabs(opened, t.tabId));
    throw new Error('the content script answered without a page');
  } finally {
    watcher.dispose();
    opened.dispose();
  }
}

// After an action, how long to wait for the tabs it opened to show up.
const OPENED_TABS_GRACE_MS = 50;

/** Shares the tabs an action in tab from opened (they belong to its owner) and describes them. */
async function openedTabs(watcher: OpenedTabsWatcher, from: number): Promise<TabInfo[]> {
  await new Promise((r) => setTimeout(r, OPENED_TABS_GRACE_MS));
  const out: TabInfo[] = [];
  const owner = watcher.tabIds.length > 0 ? await ownerOf(from) : undefined;
  for (const id of watcher.tabIds) {
    await share(id, false, 'opened', owner);
    const info = await tabInfo(id);
    if (info) out.push(info);
  }
  return out;
}

function withOpened(page: PageResult, opened: TabInfo[]): PageResult {
  return opened.length > 0 ? { ...page, openedTabs: opened } : page;
}

/**
 * Waits for the tab's navigation to load. A page that has committed but is
 * still loading subresources is snapshotted as it is; one that has not even
 * committed by then is a timeout; one blocked by a dialog is dialog_open,
 * which begins with after (what the call did that started the load).
 */
export async function waitForPage(watcher: NavigationWatcher, tabId: number, what: string, deadline: number, after: string, startBy?: number): Promise<void> {
  if (await loadOrBlocked(watcher, tabId, loadDeadline(deadline), after, startBy)) return;
  if (watcher.committed(tabId)) return;
  throw new TetherError('timeout', `Loading ${what} did not get a response in time; the tab is still loading it. Call browser_snapshot in a few seconds to see whether it arrived, or try another URL.`);
}

export function loadDeadline(deadline: number): number {
  const budget = deadline - Date.now();
  return Date.now() + Math.max(budget - Math.min(SNAPSHOT_RESERVE_MS, budget / 4), 0);
}

/** Runs an existing action (click, type) after refusing a restricted addressed tab. */
export async function scriptableFirst<T>(p: P, run: () => Promise<T>): Promise<T> {
  await checkScriptable(tabParams(p).tab);
  return run();
}

/** Runs a content action on the addressed tab (or the ref's), refusing restricted pages first. */
export async function pageAct(p: P, msg: ActMessage, d: number): Promise<PageResult> {
  const tab = tabParams(p).tab;
  await checkScriptable(tab);
  return act(tab, msg, d);
}

export async function checkScriptable(tab: number | undefined): Promise<void> {
  const t = await requireTab(tab);
  const info = await chrome.tabs.get(t.tabId);
  const url = info.url || info.pendingUrl || '';
  if (isRestrictedUrl(url)) throw restrictedPage(url);
}

