// The daemon's methods, one handler each. HANDLERS is the allow-list: a method
// not in it is refused before anything runs.
import type { NavigateParams, PageResult, Request, TabInfo, TabNewParams, TabParams, TabsListResult, TypeParams } from '../protocol.gen';
import { TetherError, restrictedPage, toWireError } from '../shared/errors';
import type { ContentMessage, ContentReply, Method, Outcome, SnapshotShape } from '../shared/messages';
import { READ_HANDLERS, finishPage, pageResultFor, routeRef, snapShape } from './methods-read';
import { callContent, isChannelClosed, isRestrictedUrl } from './content-bridge';
import { NavigationWatcher, OpenedTabsWatcher } from './navigation';
import { documentsIssued } from './documents';
import { forgetTab, listTabs, requireTab, resolveTab, share, tabInfo, touch, type SharedTab } from './shared-tabs';
import { setActingUntil } from './acting';
import { actOn, actionOrBlocked, loadOrBlocked } from './tab-hooks';
import { evaluateAct, fileUploadAct, historyAct, pressKeyAct, screenshotAct, scriptableFirst, scrollAct, selectOptionAct, waitForAct } from './methods-act';
import { clickAct, dragAct, hoverAct } from './methods-pointer';

type Handler = (params: Record<string, unknown>, deadline: number) => Promise<object>;

export const HANDLERS: Readonly<Record<Method, Handler>> = {
  navigate: (p, d) => navigate(navigateParams(p), d, snapShape(p)),
  snapshot: READ_HANDLERS.snapshot,
  click: (p, d) => clickAct(p, d),
  type: (p, d) => scriptableFirst(p, () => type(typeParams(p), d, snapShape(p))),
  tabs_list: () => tabsList(),
  tab_new: (p, d) => tabNew(tabNewParams(p), d),
  tab_close: (p) => tabClose(tabParams(p)),
  tab_select: (p) => tabSelect(tabParams(p)),
  select_option: (p, d) => selectOptionAct(p, d),
  hover: (p, d) => hoverAct(p, d),
  drag: (p, d) => dragAct(p, d),
  press_key: (p, d) => pressKeyAct(p, d),
  file_upload: (p, d) => fileUploadAct(p, d),
  wait_for: (p, d) => waitForAct(p, d),
  scroll: (p, d) => scrollAct(p, d),
  history: (p, d) => historyAct(p, d),
  screenshot: (p, d) => screenshotAct(p, d),
  evaluate: (p, d) => evaluateAct(p, d),
  find: READ_HANDLERS.find,
  read: READ_HANDLERS.read,
  read_url: READ_HANDLERS.read_url,
  console: READ_HANDLERS.console,
  handle_dialog: READ_HANDLERS.handle_dialog,
};

/** Runs one daemon request; never throws. deadline is a Date.now() value. */
export async function handleRequest(req: Request, deadline: number): Promise<Outcome> {
  try {
    const handler = Object.hasOwn(HANDLERS, req.method) ? HANDLERS[req.method] : undefined;
    if (!handler) throw new TetherError('bad_request', `Unknown method ${JSON.stringify(req.method)}.`);
    const params = (typeof req.params === 'object' && req.params !== null ? req.params : {}) as Record<string, unknown>;
    return { ok: true, value: await handler(params, deadline) };
  } catch (err) {
    return { ok: false, error: toWireError(err) };
  }
}

// How long a navigation to about:blank may take to start before the tab is
// taken to show it already (Chrome reports one within milliseconds).
const BLANK_START_MS = 2000;

// Time kept back from a load wait for the snapshot that follows it.
const SNAPSHOT_RESERVE_MS = 1500;

async function navigate(p: NavigateParams, deadline: number, shape: SnapshotShape = {}): Promise<PageResult> {
  const url = checkUrl(p.url);
  const watcher = new NavigationWatcher();
  try {
    const target = p.newTab ? undefined : await resolveTab(p.tab);
    let tabId: number;
    if (target) {
      tabId = target.tabId;
      await touch(tabId);
    } else {
      const tab = await chrome.tabs.create({ url, active: true });
      tabId = tab.id!;
      setActingUntil(tabId, deadline); // before its first document gets the hooks
      await share(tabId, true, 'opened');
    }
    const id = tabId;
    // A page blocked by a dialog is not left (that would discard the user's answer).
    return await actOn(
      id,
      deadline,
      async () => {
        if (target) await chrome.tabs.update(id, { url });
        // about:blank in a tab that shows a page is a navigation like any
        // other: until it commits, the tab still shows (and would snapshot)
        // the old page, which may be going into the back/forward cache. A
        // new tab's about:blank is its initial document: nothing to wait for.
        if (url !== 'about:blank') await waitForPage(watcher, id, url, deadline, 'The navigation was sent to the tab. ');
        else if (target) await waitForPage(watcher, id, url, deadline, 'The navigation was sent to the tab. ', Date.now() + BLANK_START_MS);
        return pageResult(id, deadline, shape);
      },
      false,
    );
  } finally {
    watcher.dispose();
  }
}

function type(p: TypeParams, deadline: number, snap: SnapshotShape): Promise<PageResult> {
  return act(p.tab, { target: 'content', kind: 'type', ref: p.ref, text: p.text, submit: p.submit === true, docsIssued: 0, snap }, deadline);
}

async function tabsList(): Promise<TabsListResult> {
  return { tabs: await listTabs() };
}

function tabNew(p: TabNewParams, deadline: number): Promise<PageResult> {
  return navigate({ url: p.url || 'about:blank', newTab: true }, deadline);
}

async function tabClose(p: TabParams): Promise<TabsListResult> {
  const t = await requireTab(p.tab);
  await chrome.tabs.remove(t.tabId).catch((err: unknown) => {
    // Already gone is fine: the goal is a closed tab.
    if (!/No tab with id/i.test(String(err instanceof Error ? err.message : err))) throw err;
  });
  await forgetTab(t.tabId);
  return { tabs: await listTabs() };
}

async function tabSelect(p: TabParams): Promise<TabsListResult> {
  const t = await requireTab(p.tab);
  const tab = await chrome.tabs.update(t.tabId, { active: true });
  const windowId = tab?.windowId ?? (await chrome.tabs.get(t.tabId)).windowId;
  await chrome.windows.update(windowId, { focused: true });
  await touch(t.tabId);
  return { tabs: await listTabs() };
}

// After an action, how long to wait for the tabs it opened to show up.
const OPENED_TABS_GRACE_MS = 50;

/** Shares the tabs an action opened and describes them. */
async function openedTabs(watcher: OpenedTabsWatcher): Promise<TabInfo[]> {
  await new Promise((r) => setTimeout(r, OPENED_TABS_GRACE_MS));
  const out: TabInfo[] = [];
  for (const id of watcher.tabIds) {
    await share(id, false, 'opened');
    const info = await tabInfo(id);
    if (info) out.push(info);
  }
  return out;
}

function withOpened(page: PageResult, opened: TabInfo[]): PageResult {
  return opened.length > 0 ? { ...page, openedTabs: opened } : page;
}

/**
 * Runs a click or type in the page; when it navigates, waits for the new page
 * and snapshots that. aim, for an action at a point, picks the frame once the
 * page is ready (and may rewrite msg's point into that frame's viewport).
 */
export async function act(
  tab: number | undefined,
  msg: ContentMessage & { docsIssued: number; snap?: SnapshotShape },
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
    const navigated = !reply || ('navigating' in reply && reply.navigating === true) || watcher.started(t.tabId);
    if (navigated) {
      // Wait for the new page; give up early when no navigation actually starts.
      await waitForPage(watcher, t.tabId, 'the new page', deadline, 'The action reached the page and started a navigation. ', Date.now() + 1000);
      return withOpened(await pageResult(t.tabId, deadline, shape), await openedTabs(opened));
    }
    // An action in a cross-origin frame answered with that frame only: the result shows the whole tab.
    if (reply && 'page' in reply && frameId !== 0) {
      const page = await pageResult(t.tabId, deadline, shape);
      if (reply.page.scrolled) page.scrolled = reply.page.scrolled;
      return withOpened(page, await openedTabs(opened));
    }
    if (reply && 'page' in reply) return withOpened(await finishPage(t.tabId, t.number, reply.page, shape, deadline), await openedTabs(opened));
    throw new Error('the content script answered without a page');
  } finally {
    watcher.dispose();
    opened.dispose();
  }
}

/** The tab's PageResult (frames stitched, capped by shape.maxChars, with the dialogs since the last result). */
export function pageResult(tabId: number, deadline: number, shape: SnapshotShape = {}): Promise<PageResult> {
  return pageResultFor(tabId, deadline, shape);
}

/**
 * Waits for the tab's navigation to load. A page that has committed but is
 * still loading subresources is snapshotted as it is; one that has not even
 * committed by then is a timeout; one blocked by a dialog is dialog_open,
 * which begins with after (what the call did that started the load).
 */
async function waitForPage(watcher: NavigationWatcher, tabId: number, what: string, deadline: number, after: string, startBy?: number): Promise<void> {
  if (await loadOrBlocked(watcher, tabId, loadDeadline(deadline), after, startBy)) return;
  if (watcher.committed(tabId)) return;
  throw new TetherError('timeout', `Loading ${what} did not get a response in time; the tab is still loading it. Call browser_snapshot in a few seconds to see whether it arrived, or try another URL.`);
}

export function loadDeadline(deadline: number): number {
  const budget = deadline - Date.now();
  return Date.now() + Math.max(budget - Math.min(SNAPSHOT_RESERVE_MS, budget / 4), 0);
}

// Params validation: the wire types say what is allowed; these check it.

function checkUrl(raw: string): string {
  const url = raw.trim();
  if (url === 'about:blank') return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new TetherError('bad_request', `${JSON.stringify(raw)} is not an absolute URL. Pass a full URL with its scheme, e.g. https://${url.replace(/^\/+/, '') || 'example.com'}.`);
  }
  if (parsed.protocol === 'http:' || parsed.protocol === 'https:' || parsed.protocol === 'file:') return parsed.href;
  if (isRestrictedUrl(url)) throw restrictedPage(url);
  throw new TetherError('bad_request', `Cannot open ${JSON.stringify(raw)}: only http, https, file and about:blank URLs can be opened. Pass an http(s) URL.`);
}

export function tabParams(p: Record<string, unknown>): TabParams {
  const tab = p.tab;
  if (tab === undefined || tab === null) return {};
  if (typeof tab !== 'number' || !Number.isInteger(tab) || tab < 0) {
    throw new TetherError('bad_request', `tab must be a tab number from browser_tabs (a positive integer), not ${JSON.stringify(tab)}.`);
  }
  return tab === 0 ? {} : { tab };
}

export function str(p: Record<string, unknown>, key: string, allowEmpty = false): string {
  const v = p[key];
  if (typeof v !== 'string' || (!allowEmpty && v.trim() === '')) {
    throw new TetherError('bad_request', `${key} must be a ${allowEmpty ? '' : 'non-empty '}string.`);
  }
  return v;
}

export function bool(p: Record<string, unknown>, key: string): boolean {
  const v = p[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new TetherError('bad_request', `${key} must be true or false.`);
  return v;
}

function navigateParams(p: Record<string, unknown>): NavigateParams {
  return { ...tabParams(p), url: str(p, 'url'), newTab: bool(p, 'newTab') };
}

function tabNewParams(p: Record<string, unknown>): TabNewParams {
  const url = p.url;
  if (url === undefined || url === null || url === '') return {};
  return { url: str(p, 'url') };
}

function typeParams(p: Record<string, unknown>): TypeParams {
  // No ref (or ""): the focused element.
  const ref = p.ref === undefined || p.ref === null ? '' : str(p, 'ref', true).trim();
  return { ...tabParams(p), ref, text: str(p, 'text', true), submit: bool(p, 'submit') };
}
