// Watches top-frame navigations of tabs through chrome.webNavigation, so a
// request can wait for the page it started (or that a click started) to load.
import { TetherError } from '../shared/errors';

export type NavEvent =
  | { kind: 'start'; tabId: number; url: string }
  | { kind: 'commit'; tabId: number; url: string }
  | { kind: 'done'; tabId: number; url: string }
  | { kind: 'error'; tabId: number; url: string; error: string };

/**
 * Records every top-frame navigation event from creation on, so events that
 * fire before the caller knows the tab id (a new tab) are not missed.
 * Call dispose() when done.
 */
export class NavigationWatcher {
  private readonly events: NavEvent[] = [];
  private wake?: () => void;

  private readonly onBefore = (d: chrome.webNavigation.WebNavigationBaseCallbackDetails) => {
    if (d.frameId === 0) this.push({ kind: 'start', tabId: d.tabId, url: d.url });
  };
  private readonly onCommitted = (d: chrome.webNavigation.WebNavigationTransitionCallbackDetails) => {
    if (d.frameId === 0) this.push({ kind: 'commit', tabId: d.tabId, url: d.url });
  };
  private readonly onCompleted = (d: chrome.webNavigation.WebNavigationFramedCallbackDetails) => {
    if (d.frameId === 0) this.push({ kind: 'done', tabId: d.tabId, url: d.url });
  };
  private readonly onFragment = (d: chrome.webNavigation.WebNavigationTransitionCallbackDetails) => {
    if (d.frameId === 0) this.push({ kind: 'done', tabId: d.tabId, url: d.url });
  };
  // A same-document history entry (pushState) reached by back/forward.
  private readonly onHistoryState = (d: chrome.webNavigation.WebNavigationTransitionCallbackDetails) => {
    if (d.frameId === 0) this.push({ kind: 'done', tabId: d.tabId, url: d.url });
  };
  private readonly onError = (d: chrome.webNavigation.WebNavigationFramedErrorCallbackDetails) => {
    if (d.frameId === 0) this.push({ kind: 'error', tabId: d.tabId, url: d.url, error: d.error });
  };

  constructor() {
    chrome.webNavigation.onBeforeNavigate.addListener(this.onBefore);
    chrome.webNavigation.onCommitted.addListener(this.onCommitted);
    chrome.webNavigation.onCompleted.addListener(this.onCompleted);
    chrome.webNavigation.onReferenceFragmentUpdated.addListener(this.onFragment);
    chrome.webNavigation.onHistoryStateUpdated.addListener(this.onHistoryState);
    chrome.webNavigation.onErrorOccurred.addListener(this.onError);
  }

  dispose(): void {
    chrome.webNavigation.onBeforeNavigate.removeListener(this.onBefore);
    chrome.webNavigation.onCommitted.removeListener(this.onCommitted);
    chrome.webNavigation.onCompleted.removeListener(this.onCompleted);
    chrome.webNavigation.onReferenceFragmentUpdated.removeListener(this.onFragment);
    chrome.webNavigation.onHistoryStateUpdated.removeListener(this.onHistoryState);
    chrome.webNavigation.onErrorOccurred.removeListener(this.onError);
    this.wake?.();
  }

  private push(e: NavEvent): void {
    this.events.push(e);
    this.wake?.();
  }

  /** True once a top-frame navigation of tabId has started since creation. */
  started(tabId: number): boolean {
    return this.events.some((e) => e.tabId === tabId);
  }

  /** The URL of the last navigation event of tabId, if any. */
  lastUrl(tabId: number): string | undefined {
    const mine = this.events.filter((e) => e.tabId === tabId);
    return mine[mine.length - 1]?.url;
  }

  /** True when the last navigation of tabId has committed (its new document exists). */
  committed(tabId: number): boolean {
    const mine = this.events.filter((e) => e.tabId === tabId);
    const last = mine[mine.length - 1];
    return last === undefined || last.kind === 'commit' || last.kind === 'done';
  }

  /**
   * Waits until the last navigation of tabId completes. Resolves false when
   * deadline passes first (the page is still loading). Throws
   * navigation_failed when it fails with a network error.
   */
  async waitForLoad(tabId: number, deadline: number, startBy = deadline): Promise<boolean> {
    for (;;) {
      const mine = relevant(this.events.filter((e) => e.tabId === tabId));
      const last = mine[mine.length - 1];
      // No navigation began in time: the page stays as it is.
      if (!last && Date.now() >= startBy) return true;
      if (last?.kind === 'done') return true;
      if (last?.kind === 'error') {
        // ERR_ABORTED: replaced by another navigation, a download or a 204; the tab keeps its page.
        if (last.error === 'net::ERR_ABORTED') return true;
        throw new TetherError('navigation_failed', `Loading ${last.url} failed with ${last.error}. Check the URL (spelling, scheme, host) and that the site is reachable, then call browser_navigate again.`);
      }
      const left = (last ? deadline : Math.min(deadline, startBy)) - Date.now();
      if (left <= 0) return !last;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }
}

/**
 * Drops the late events of a navigation that a newer one replaced: after the
 * last start, an ERR_ABORTED or a completion for another URL (before the new
 * navigation commits) belongs to the page that was still loading before.
 */
export function relevant(events: NavEvent[]): NavEvent[] {
  let start = -1;
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.kind === 'start') {
      start = i;
      break;
    }
  }
  if (start < 0) return events;
  const url = events[start]!.url;
  let committed = false;
  return events.filter((e, i) => {
    if (i <= start) return true;
    if (e.kind === 'commit') committed = true;
    if (committed || e.url === url) return true;
    return !((e.kind === 'error' && e.error === 'net::ERR_ABORTED') || e.kind === 'done');
  });
}

/**
 * Records the tabs opened from one tab (target=_blank links, window.open,
 * OAuth popups) from creation on. Call dispose() when done.
 */
export class OpenedTabsWatcher {
  private readonly opened = new Set<number>();

  private readonly onCreated = (tab: chrome.tabs.Tab) => {
    if (tab.id !== undefined && tab.openerTabId === this.openerTabId) this.opened.add(tab.id);
  };
  private readonly onTarget = (d: chrome.webNavigation.WebNavigationSourceCallbackDetails) => {
    if (d.sourceTabId === this.openerTabId) this.opened.add(d.tabId);
  };
  private readonly onRemoved = (tabId: number) => {
    this.opened.delete(tabId);
  };

  constructor(private readonly openerTabId: number) {
    chrome.tabs.onCreated.addListener(this.onCreated);
    chrome.tabs.onRemoved.addListener(this.onRemoved);
    chrome.webNavigation.onCreatedNavigationTarget.addListener(this.onTarget);
  }

  /** The tab ids opened so far, in opening order. */
  get tabIds(): number[] {
    return [...this.opened];
  }

  dispose(): void {
    chrome.tabs.onCreated.removeListener(this.onCreated);
    chrome.tabs.onRemoved.removeListener(this.onRemoved);
    chrome.webNavigation.onCreatedNavigationTarget.removeListener(this.onTarget);
  }
}
