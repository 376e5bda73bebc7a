// Calls the content script of a tab's top frame, injecting it first into tabs
// that were open before the extension loaded. Maps Chrome's refusals to
// script a page onto restricted_page.
import { TetherError, isWireError, restrictedPage } from '../shared/errors';
import type { ContentMessage, ContentReply } from '../shared/messages';

const RESTRICTED_URL = /^(chrome|chrome-extension|chrome-search|chrome-untrusted|devtools|edge|view-source|about:(?!blank)|chrome-error|brave|opera)|^https:\/\/(chromewebstore\.google\.com|chrome\.google\.com\/webstore)/i;

/** True for pages Chrome never lets an extension script. */
export function isRestrictedUrl(url: string): boolean {
  return RESTRICTED_URL.test(url);
}

/**
 * Sends msg to the content script of the tab's frame frameId (0: the top
 * frame); on "no receiver", injects content.js into the top frame and retries
 * once. A subframe without a receiver is gone: its refs are stale.
 */
export async function callContent(tabId: number, msg: ContentMessage, deadline: number, frameId = 0): Promise<ContentReply> {
  const tab = await chrome.tabs.get(tabId);
  const url = tab.url || tab.pendingUrl || '';
  if (isRestrictedUrl(url)) throw restrictedPage(url);
  try {
    return check(await withDeadline(chrome.tabs.sendMessage(tabId, msg, { frameId }), deadline));
  } catch (err) {
    if (!isNoReceiver(err)) throw err;
    if (frameId !== 0) {
      throw new TetherError('stale_ref', 'The frame that element was in is gone (it navigated or was removed). Call browser_snapshot again and use a fresh ref.');
    }
  }
  await inject(tabId, url);
  return check(await withDeadline(chrome.tabs.sendMessage(tabId, msg, { frameId: 0 }), deadline));
}

async function inject(tabId: number, url: string): Promise<void> {
  try {
    await chrome.scripting.executeScript({ target: { tabId, frameIds: [0] }, files: ['content.js'], injectImmediately: true });
  } catch (err) {
    const text = String(err instanceof Error ? err.message : err);
    if (/error page/i.test(text)) {
      // Chrome shows its own error page: the page did not load (a network error), it is not protected.
      throw new TetherError('navigation_failed', `${url || 'The page'} did not load: the tab shows Chrome's error page (a network or DNS error). Check the URL and that the site is reachable, then call browser_navigate again.`);
    }
    if (/cannot be scripted|Cannot access|cannot access|must request permission/i.test(text)) {
      if (url.startsWith('file:')) {
        throw new TetherError('restricted_page', `Chrome does not let Tether read ${url}: file pages need "Allow access to file URLs" turned on for Tether at chrome://extensions. Ask the user to turn it on, or use an http(s) URL.`);
      }
      throw restrictedPage(url);
    }
    throw err;
  }
}

function check(reply: unknown): ContentReply {
  if (typeof reply !== 'object' || reply === null || !('ok' in reply)) {
    throw new Error('the content script gave no answer');
  }
  const r = reply as ContentReply;
  if (!r.ok && !isWireError(r.error)) throw new Error('the content script gave a malformed error');
  return r;
}

export function isNoReceiver(err: unknown): boolean {
  return /Receiving end does not exist|Could not establish connection/i.test(String(err instanceof Error ? err.message : err));
}

/** True when the page went away while the content script was answering (a navigation). */
export function isChannelClosed(err: unknown): boolean {
  return /message channel closed|message port closed|page.*(unloaded|moved into back\/forward cache)|Receiving end does not exist/i.test(String(err instanceof Error ? err.message : err));
}

export function withDeadline<T>(p: Promise<T>, deadline: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(
      () => reject(new TetherError('timeout', 'The page did not answer in time (it may be busy or still loading). Call browser_snapshot to see its current state, then retry.')),
      Math.max(0, deadline - Date.now()),
    );
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}
