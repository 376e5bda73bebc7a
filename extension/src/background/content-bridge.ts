// Calls the content scripts of a shared tab's frames, and puts them in:
// content.js (isolated world) and the page-world hooks (shared/page-hooks.ts)
// are injected into shared tabs only, never declared for every page. Maps
// Chrome's refusals to script a page onto restricted_page.
import { TetherError, isWireError, restrictedPage } from '../shared/errors';
import type { ContentMessage, ContentReply } from '../shared/messages';
import { hookInit, installPageHooks } from '../shared/page-hooks';
import { actingUntil } from './acting';
import { claimDocument } from './documents';
import { readState } from './state';

const RESTRICTED_URL = /^(chrome|chrome-extension|chrome-search|chrome-untrusted|devtools|edge|view-source|about:(?!blank)|chrome-error|brave|opera)|^https:\/\/(chromewebstore\.google\.com|chrome\.google\.com\/webstore)/i;

/** True for pages Chrome never lets an extension script. */
export function isRestrictedUrl(url: string): boolean {
  return RESTRICTED_URL.test(url);
}

/**
 * Long reads (snapshot, find, read) of each tab's content scripts that have
 * not answered yet (tab id → count): one can keep a big page's main thread
 * busy for seconds, so the page not answering then is no sign of a dialog.
 * A read counts until the page answers it, even after its call gave up at
 * its deadline (the page is still busy with it: a huge page's first layout
 * cannot be cut short), but at most LONG_READ_GRACE_MS past that.
 */
const inFlight = new Map<number, number>();
const LONG_READS: ReadonlySet<string> = new Set(['snapshot', 'find', 'read']);
/** How long past its call's end an unanswered long read still counts as keeping the page busy, in ms. */
export const LONG_READ_GRACE_MS = 60_000;
/**
 * After a long read is answered, the page is still busy with its aftermath
 * for a while (collecting the read's garbage: on a 100 000-element page a
 * snapshot allocates hundreds of MB): a page that misses a ping sent within
 * the read's own duration after its answer, at most AFTERMATH_MAX_MS, is
 * busy with us. The same holds for an action's follow-up read (from the
 * content script's 'reading' to the action's answer). Per tab: that window's
 * end (a Date.now() value).
 */
const aftermath = new Map<number, number>();
export const AFTERMATH_MAX_MS = 10_000;

// Tabs whose action's follow-up read runs now (the content script said
// 'reading'), until the action's reply arrives, and when it started
// (Date.now()).
const reading = new Map<number, number>();

// Tabs whose content script does its own work before an action's dispatch
// (the hit test's layout), and when each such stretch last ended (Date.now()).
const preparing = new Set<number>();
const preparedAt = new Map<number, number>();

// Tabs whose action answered before the browser drew its change (a page
// that redraws slowly: content/actions.ts settle), and when it answered
// (Date.now()): the page may stay busy drawing it until it next answers.
const redrawing = new Map<number, number>();
/** How long after such an answer a page that does not answer counts as busy with our work, in ms. */
const REDRAW_GRACE_MS = 10_000;

/**
 * True while a long read of ours runs in the tab (or its aftermath: see
 * aftermath), or an action's own work before its dispatch (the page may be
 * busy with it), or for REDRAW_GRACE_MS after an action answered before the
 * page drew its change, until the page answers again; since: also when that
 * work ended at or after this Date.now() value (a ping sent then met a page
 * busy with us).
 */
export function busyWithUs(tabId: number, since?: number): boolean {
  if ((inFlight.get(tabId) ?? 0) > 0 || reading.has(tabId) || preparing.has(tabId)) return true;
  if (Date.now() - (redrawing.get(tabId) ?? -Infinity) < REDRAW_GRACE_MS) return true;
  if (since === undefined) return false;
  const after = aftermath.get(tabId);
  if (after !== undefined && after < Date.now()) aftermath.delete(tabId);
  return (preparedAt.get(tabId) ?? -Infinity) >= since || (after ?? -Infinity) >= since;
}

/**
 * Marks tabId's action as doing its own work before the dispatch (on), or
 * done with it; counts only while a content call is in flight there.
 */
export function markPreparing(tabId: number, on: boolean): void {
  if (on) {
    if (calls.has(tabId)) preparing.add(tabId);
  } else if (preparing.delete(tabId)) {
    preparedAt.set(tabId, Date.now());
  }
}

/** Marks tabId's page as drawing the change of an action that already answered (see busyWithUs). */
export function markRedrawing(tabId: number): void {
  redrawing.set(tabId, Date.now());
}

/** The tab's page answered: it is no longer busy drawing an action's change. */
export function answeredAgain(tabId: number): void {
  redrawing.delete(tabId);
}

/**
 * Marks tabId's action as past its dispatch and into its follow-up read
 * (the content script's 'reading'), until callContent gets the reply: a
 * page that does not answer meanwhile is busy with our snapshot (a large
 * page's styles and layout), not stopped by a dialog the action opened
 * (that one would have opened before).
 */
export function markReading(tabId: number): void {
  if (calls.has(tabId) && !reading.has(tabId)) reading.set(tabId, Date.now());
}

// Tabs with a content call in flight (reading marks only count during one).
const calls = new Map<number, number>();

/**
 * Sends msg to the content script of the tab's frame frameId (0: the top
 * frame); on "no receiver", injects the scripts into that frame and retries
 * once. A subframe that cannot be injected is gone: its refs are stale.
 * The document that answers counts as the one the frame shows from then on
 * (claimDocument): one restored from the back/forward cache answers with its
 * old number and refs, and those refs must reach it.
 */
export async function callContent(tabId: number, msg: ContentMessage, deadline: number, frameId = 0): Promise<ContentReply> {
  const tab = await chrome.tabs.get(tabId);
  const url = tab.url || tab.pendingUrl || '';
  if (isRestrictedUrl(url)) throw restrictedPage(url);
  const long = LONG_READS.has(msg.kind);
  if (long) inFlight.set(tabId, (inFlight.get(tabId) ?? 0) + 1);
  calls.set(tabId, (calls.get(tabId) ?? 0) + 1);
  // A read that would run past the deadline stops there and answers with what it has (partial).
  msg = { ...msg, until: readUntil(deadline) } as ContentMessage;
  // The message the page has not answered yet, if any (see inFlight).
  let unanswered: Promise<unknown> | undefined;
  const send = (): Promise<unknown> => {
    const sent = chrome.tabs.sendMessage(tabId, msg, { frameId }) as Promise<unknown>;
    unanswered = sent;
    const at = Date.now();
    const answered = () => {
      if (unanswered === sent) unanswered = undefined;
      // The read's start: the message's for a long read, 'reading' for an action's follow-up read.
      const readFrom = long ? at : reading.get(tabId);
      if (readFrom !== undefined) {
        const now = Date.now();
        aftermath.set(tabId, Math.max(aftermath.get(tabId) ?? 0, now + Math.min(now - Math.max(readFrom, at), AFTERMATH_MAX_MS)));
      }
    };
    sent.then(answered, answered);
    return sent;
  };
  try {
    let reply: ContentReply | undefined;
    try {
      reply = check(await withDeadline(send(), deadline));
    } catch (err) {
      if (!isNoReceiver(err)) throw err;
    }
    if (!reply) {
      if (frameId === 0) await injectTop(tabId, url);
      else {
        let failure: unknown;
        if (!(await injectScripts({ tabId, frameIds: [frameId] }, (err) => (failure = err)))) {
          const why = String(failure instanceof Error ? failure.message : failure);
          if (/No frame with id|frame.*(removed|not found)/i.test(why)) {
            throw new TetherError('stale_ref', 'The frame that element was in is gone (it navigated or was removed). Call browser_snapshot again and use a fresh ref.');
          }
          throw new Error(`the frame cannot be scripted: ${why}`);
        }
      }
      reply = check(await withDeadline(send(), deadline));
    }
    // A failure to record it fails no call: the ref is then stale, and a snapshot tries again.
    if (typeof reply.doc === 'number') await claimDocument(tabId, frameId, reply.doc).catch(() => false);
    return reply;
  } finally {
    const left = (calls.get(tabId) ?? 1) - 1;
    if (left > 0) calls.set(tabId, left);
    else {
      calls.delete(tabId);
      reading.delete(tabId);
      preparing.delete(tabId);
      preparedAt.delete(tabId);
    }
    if (long) {
      const release = () => {
        const n = (inFlight.get(tabId) ?? 1) - 1;
        if (n > 0) inFlight.set(tabId, n);
        else inFlight.delete(tabId);
      };
      if (unanswered) {
        // Cut short at its deadline, the read still runs in the page.
        let released = false;
        const once = () => {
          if (!released) {
            released = true;
            release();
          }
        };
        const grace = setTimeout(once, LONG_READ_GRACE_MS);
        unanswered.then(once, once).finally(() => clearTimeout(grace));
      } else {
        release();
      }
    }
  }
}

/**
 * Injects the page-world hooks (MAIN world) and content.js (isolated world)
 * into target's frames, as early as Chrome allows (injectImmediately).
 * Resolves false when Chrome refused (a frame gone, a page it protects); the
 * error goes to onError.
 */
export async function injectScripts(target: chrome.scripting.InjectionTarget, onError?: (err: unknown) => void): Promise<boolean> {
  const queue = (await readState()).armed[target.tabId] ?? [];
  const init = hookInit(queue, actingUntil(target.tabId));
  const hooks = chrome.scripting.executeScript({ target, world: 'MAIN', injectImmediately: true, func: installPageHooks, args: [init] });
  const content = chrome.scripting.executeScript({ target, files: ['content.js'], injectImmediately: true });
  const [h, c] = await Promise.allSettled([hooks, content]);
  const failed = c.status === 'rejected' ? c.reason : h.status === 'rejected' ? h.reason : undefined;
  if (failed === undefined) return true;
  onError?.(failed);
  return false;
}

/** Injects into every frame of a tab whose top frame shows url; throws what the agent should hear. */
export async function injectTop(tabId: number, url: string): Promise<void> {
  let failure: unknown;
  if (await injectScripts({ tabId, allFrames: true }, (err) => (failure = err))) return;
  const text = String(failure instanceof Error ? failure.message : failure);
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
  throw failure instanceof Error ? failure : new Error(text);
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

/** When a content script stops reading (ContentMessage until): before deadline, leaving room for the reply. */
export function readUntil(deadline: number, now = Date.now()): number {
  return deadline - Math.min(2000, Math.max(0, deadline - now) / 4);
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
