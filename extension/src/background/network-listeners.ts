// Which tabs chrome.webRequest reports to the service worker: the shared
// ones, and no other. Chrome matches a listener's RequestFilter.tabId in the
// browser process (https://developer.chrome.com/docs/extensions/reference/api/webRequest#type-RequestFilter),
// so each shared tab gets its own set of the five listeners, filtered by
// {urls: ['<all_urls>'], tabId}, registered when it is shared (or when the
// worker starts and reads which tabs are) and removed when it stops being
// shared or closes. With nothing shared, no webRequest listener is
// registered at all: Chrome dispatches nothing for an unshared tab.
//
// Service worker restarts (checked in Chromium's source:
// extensions/browser/api/web_request/extension_web_request_event_router.cc,
// extensions/renderer/resources/web_request_event.js, event_router.cc):
//  - Each addListener registers a sub-event named by a counter of the worker
//    run ("webRequest.onCompleted/s7"). When the worker stops, Chrome keeps
//    its listeners, filters included, as inactive ones: a request matching
//    one wakes the worker, which gets the event only if its top level
//    registered that same sub-event synchronously
//    (EventRouter::DispatchPendingEvent checks it for webRequest). The
//    per-tab sets are registered after storage.session is read, so the
//    request that wakes a stopped worker (and those made before the worker
//    has read the state) are not recorded.
//  - So, while a tab is shared, the worker keeps itself running: an
//    extension API call every KEEP_RUNNING_MS resets Chrome's 30-second idle
//    timer (Chrome 110+, https://developer.chrome.com/docs/extensions/develop/concepts/service-workers/lifecycle).
//    Only a forced stop (a crash, DevTools) loses those first requests.
//  - A new run's per-tab sets reuse the first names of the previous run
//    (which reactivates those inactive listeners with the new filters); the
//    previous run's later names would stay inactive with their old tab
//    filters, waking the worker for a tab perhaps no longer shared, so the
//    new run registers and removes each of them (removing a sub-event's
//    listener removes Chrome's active or inactive listener of that name).
//    The number of the last name in use is kept in storage.session for that.

/** What the listeners call (network.ts's ring, and the console's entries for failures). */
export interface Handlers {
  onBeforeRequest(d: chrome.webRequest.OnBeforeRequestDetails): void;
  onSendHeaders(d: chrome.webRequest.OnSendHeadersDetails): void;
  onHeadersReceived(d: chrome.webRequest.OnHeadersReceivedDetails): void;
  onCompleted(d: chrome.webRequest.OnCompletedDetails): void;
  onErrorOccurred(d: chrome.webRequest.OnErrorOccurredDetails): void;
}

/** The listeners of one set, in this order (a name's event is fixed by its number). */
const EVENTS = 5;
/** How often a worker with a shared tab calls an extension API to stay running, in ms (Chrome stops it after 30 s idle). */
export const KEEP_RUNNING_MS = 20_000;
/** storage.session key: the number of the last webRequest sub-event name a stopped worker would leave registered. */
const NAMES_KEY = 'webRequestNames';
/** A filter no request matches (.invalid never resolves, RFC 2606), for the names swept. */
const NOTHING: chrome.webRequest.RequestFilter = { urls: ['*://tether-sweep.invalid/*'] };

/** At most this many names are swept (a bound on a corrupt count). */
const MAX_SWEPT = 5_000;

let handlers: Handlers | undefined;
/** Shared tab id → its set: what removes it, and the number of its last name. */
const sets = new Map<number, { remove: () => void; last: number }>();
/** Sub-event names this worker run used (EVENTS per set, swept ones included). */
let named = 0;
/** The last name the previous run left registered (its sets', or unswept ones); undefined until read from storage.session. */
let previous: number | undefined;
/** Whether the shared tabs were known once (the sets of this run are registered). */
let known = false;
let keepRunning: ReturnType<typeof setInterval> | undefined;

/**
 * Registers one set of listeners with filter; returns what removes it. Each
 * set has its own functions: removeListener(fn) removes every listener of
 * fn (web_request_event.js).
 */
function addSet(filter: chrome.webRequest.RequestFilter, h: Handlers): () => void {
  const before = (d: chrome.webRequest.OnBeforeRequestDetails): undefined => void h.onBeforeRequest(d);
  const send = (d: chrome.webRequest.OnSendHeadersDetails): void => h.onSendHeaders(d);
  const received = (d: chrome.webRequest.OnHeadersReceivedDetails): undefined => void h.onHeadersReceived(d);
  const completed = (d: chrome.webRequest.OnCompletedDetails): void => h.onCompleted(d);
  const failed = (d: chrome.webRequest.OnErrorOccurredDetails): void => h.onErrorOccurred(d);
  const wr = chrome.webRequest;
  // extraHeaders: Chrome hides Cookie and Set-Cookie otherwise (kept only as "<redacted>").
  wr.onBeforeRequest.addListener(before, filter);
  wr.onSendHeaders.addListener(send, filter, ['requestHeaders', 'extraHeaders']);
  wr.onHeadersReceived.addListener(received, filter, ['responseHeaders', 'extraHeaders']);
  wr.onCompleted.addListener(completed, filter, ['responseHeaders', 'extraHeaders']);
  wr.onErrorOccurred.addListener(failed, filter);
  named += EVENTS;
  return () => {
    wr.onBeforeRequest.removeListener(before);
    wr.onSendHeaders.removeListener(send);
    wr.onHeadersReceived.removeListener(received);
    wr.onCompleted.removeListener(completed);
    wr.onErrorOccurred.removeListener(failed);
  };
}

/** Removes the inactive listeners the previous run left under names this run has not reused. */
function sweep(h: Handlers): void {
  if (!known || previous === undefined) return;
  while (named < previous) addSet(NOTHING, h)();
}

function saveNames(): void {
  if (previous === undefined) return; // startListening saves once it has read the previous count
  // The names a stopped worker would leave inactive: its sets' (and, until
  // they are swept, the previous run's).
  let n = known ? 0 : previous;
  for (const s of sets.values()) n = Math.max(n, s.last);
  chrome.storage.session.set({ [NAMES_KEY]: n }).catch((err: unknown) => console.error('tether: save webRequest names', err));
}

/**
 * Starts the per-tab listeners with these handlers (network.ts): call once,
 * at the worker's top level; listenTo then follows the shared tabs.
 */
export function startListening(h: Handlers): void {
  handlers = h;
  chrome.storage.session.get(NAMES_KEY).then(
    (got) => {
      const n = got[NAMES_KEY];
      previous = typeof n === 'number' && Number.isInteger(n) && n >= 0 ? Math.min(n, MAX_SWEPT) : 0;
      sweep(h);
      saveNames();
    },
    (err: unknown) => console.error('tether: read webRequest names', err),
  );
}

/**
 * Makes the registered sets those of ids, the shared tab ids (state.ts's
 * watchShared calls it whenever the state is loaded or saved), and keeps
 * the worker running while any tab is shared.
 */
export function listenTo(ids: ReadonlySet<number>): void {
  const h = handlers;
  if (!h) return;
  let changed = false;
  for (const [tab, s] of sets) {
    if (ids.has(tab)) continue;
    s.remove();
    sets.delete(tab);
    changed = true;
  }
  for (const tab of [...ids].sort((a, b) => a - b)) {
    if (tab < 0 || sets.has(tab)) continue;
    sets.set(tab, { remove: addSet({ urls: ['<all_urls>'], tabId: tab }, h), last: named }); // addSet has counted its names
    changed = true;
  }
  if (!known) {
    known = true;
    sweep(h);
    changed = true;
  }
  if (changed) saveNames();
  if (ids.size > 0 && keepRunning === undefined) {
    keepRunning = setInterval(() => void chrome.runtime.getPlatformInfo().catch(() => undefined), KEEP_RUNNING_MS);
  } else if (ids.size === 0 && keepRunning !== undefined) {
    clearInterval(keepRunning);
    keepRunning = undefined;
  }
}

/** The tab ids with a set of listeners (tests). */
export function listenedTabs(): number[] {
  return [...sets.keys()].sort((a, b) => a - b);
}
