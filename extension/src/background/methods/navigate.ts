// Loading pages in a tab: navigate (and tab_new's page, see tabs.ts) and
// history (back, forward, reload).
import type { NavigateParams, PageResult } from '../../protocol.gen';
import { TetherError, restrictedPage } from '../../shared/errors';
import type { SnapshotShape } from '../../shared/messages';
import { setActingUntil } from '../acting';
import { isRestrictedUrl } from '../content-bridge';
import { NavigationWatcher } from '../navigation';
import { requireTab, resolveTab, share, touch, type SharedTab } from '../shared-tabs';
import { actOn, loadOrBlocked } from '../tab-hooks';
import { loadDeadline, waitForPage } from './act';
import { pageResult } from './page-result';
import { bool, ownerParam, snapShape, str, tabParams, type P } from './params';

export function navigateMethod(p: P, d: number): Promise<PageResult> {
  return navigate(navigateParams(p), d, snapShape(p));
}

// How long a navigation to about:blank may take to start before the tab is
// taken to show it already (Chrome reports one within milliseconds).
const BLANK_START_MS = 2000;

/** Opens p.url in the addressed tab (or, newTab, in a new shared tab) and answers with its page. */
export async function navigate(p: NavigateParams, deadline: number, shape: SnapshotShape = {}): Promise<PageResult> {
  const url = checkUrl(p.url);
  const watcher = new NavigationWatcher();
  try {
    const target = p.newTab ? undefined : await resolveTab(p.tab);
    let tabId: number;
    if (target) {
      tabId = target.tabId;
      await touch(tabId);
    } else {
      // An agent's tab opens in the background: the user's tab in front
      // stays in front (browser_tabs select brings it forward).
      const tab = await chrome.tabs.create({ url, active: false });
      tabId = tab.id!;
      setActingUntil(tabId, deadline); // before its first document gets the hooks
      await share(tabId, true, 'opened', p.owner);
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
      { loads: true, opened: !target },
    );
  } finally {
    watcher.dispose();
  }
}

export async function historyMethod(p: P, d: number): Promise<PageResult> {
  const action = p.action;
  if (action !== 'back' && action !== 'forward' && action !== 'reload') throw new TetherError('bad_request', 'action must be "back", "forward" or "reload".');
  const t = await requireTab(tabParams(p).tab);
  await touch(t.tabId);
  return actOn(t.tabId, d, () => historyIn(t, action, p, d), { loads: true });
}

async function historyIn(t: SharedTab, action: 'back' | 'forward' | 'reload', p: P, d: number): Promise<PageResult> {
  const watcher = new NavigationWatcher();
  try {
    const before = await chrome.tabs.get(t.tabId);
    const none = () =>
      new TetherError('navigation_failed', `Tab ${t.number} has no ${action === 'back' ? 'previous' : 'next'} page in its history. Call browser_navigate with a URL instead.`);
    let viaPage = false;
    try {
      if (action === 'back') await chrome.tabs.goBack(t.tabId);
      else if (action === 'forward') await chrome.tabs.goForward(t.tabId);
      else await chrome.tabs.reload(t.tabId);
    } catch (err) {
      const text = String(err instanceof Error ? err.message : err);
      if (!/Cannot find a (next|previous) page in history/i.test(text)) throw err;
      // Chrome's tabs API skips entries the user never interacted with (its
      // back-button intervention); the page's own history still has them.
      const url = before.url || '';
      if (isRestrictedUrl(url)) throw none();
      await chrome.scripting.executeScript({
        target: { tabId: t.tabId, frameIds: [0] },
        func: (back: boolean) => (back ? history.back() : history.forward()),
        args: [action === 'back'],
      }).catch(() => {
        throw none();
      });
      viaPage = true;
    }
    // A history step starts at once; nothing within a short while means it stayed.
    const startBy = Date.now() + 1500;
    const loaded = await loadOrBlocked(watcher, t.tabId, loadDeadline(d), `The ${action === 'reload' ? 'reload' : 'history step'} was sent to the tab. `, startBy);
    if (viaPage && !watcher.started(t.tabId)) throw none();
    if (!loaded && !watcher.committed(t.tabId)) {
      const url = watcher.lastUrl(t.tabId) || before.url || 'the page';
      throw new TetherError('timeout', `${action === 'reload' ? 'Reloading' : `Going ${action} to`} ${url} did not get a response in time; the tab is still loading it. Call browser_snapshot in a few seconds to see whether it arrived.`);
    }
    return await pageResult(t.tabId, d, snapShape(p));
  } finally {
    watcher.dispose();
  }
}

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

function navigateParams(p: P): NavigateParams {
  const owner = ownerParam(p);
  return { ...tabParams(p), url: str(p, 'url'), newTab: bool(p, 'newTab'), ...(owner ? { owner } : {}) };
}
