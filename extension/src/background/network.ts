// The requests of shared tabs, as chrome.webRequest observes them (never
// blocking, no bodies): one bounded ring per shared tab, from the moment it is
// shared. Chrome reports only shared tabs' requests (network-listeners.ts
// registers the listeners per shared tab); the handlers still drop any event
// of a tab not shared now first thing, synchronously, keeping nothing (so
// for the page's own service worker, tab -1). A tab's ring goes when it
// stops being shared. Secret headers are redacted as they arrive, so their
// values are never held.
import type { Header, NetRequest, NetworkResult } from '../protocol.gen';
import { sharedNow } from './state';

/** Requests kept per shared tab; older ones are dropped (and counted). */
export const NETWORK_LIMIT = 500;
/** Headers kept per request and side. */
const HEADERS_LIMIT = 100;
/** Characters kept of a method and a header name (a page's fetch may set a 100 kB one of either), of a value and of a URL. */
const METHOD_LIMIT = 100;
const NAME_LIMIT = 200;
const VALUE_LIMIT = 2000;
export const URL_LIMIT = 4000;

/** Headers whose values are never kept. */
const SECRET = new Set(['cookie', 'set-cookie', 'authorization', 'proxy-authorization']);

interface Ring {
  list: NetRequest[];
  byId: Map<string, NetRequest>;
  dropped: number;
}

const rings = new Map<number, Ring>();

/** The ring of tabId when the tab is shared now; undefined (drop the event) otherwise. */
function ringOf(tabId: number): Ring | undefined {
  if (tabId < 0) return undefined;
  const shared = sharedNow();
  if (!shared?.has(tabId)) return undefined;
  let r = rings.get(tabId);
  if (!r) rings.set(tabId, (r = { list: [], byId: new Map(), dropped: 0 }));
  return r;
}

/** A request kept in a shared tab's ring, if any (tabId < 0 or unshared: none). */
function kept(tabId: number, requestId: string): NetRequest | undefined {
  if (tabId < 0 || !sharedNow()?.has(tabId)) return undefined;
  return rings.get(tabId)?.byId.get(requestId);
}

/** Headers as kept: secrets redacted, bounded. */
export function redactHeaders(hs: chrome.webRequest.HttpHeader[] | undefined): Header[] {
  return (hs ?? []).slice(0, HEADERS_LIMIT).map((h) => ({
    name: h.name.slice(0, NAME_LIMIT),
    value: SECRET.has(h.name.toLowerCase()) ? '<redacted>' : valueOf(h),
  }));
}

/** A header's value, bounded; Chrome gives one that is not UTF-8 as binaryValue only: said so, not shown as empty. */
function valueOf(h: chrome.webRequest.HttpHeader): string {
  if (h.value !== undefined) return h.value.slice(0, VALUE_LIMIT);
  return h.binaryValue ? `<${h.binaryValue.length} bytes, not UTF-8>` : '';
}

function contentLength(hs: chrome.webRequest.HttpHeader[] | undefined): number {
  const v = hs?.find((h) => h.name.toLowerCase() === 'content-length')?.value;
  const n = v === undefined ? NaN : Number(v);
  return Number.isInteger(n) && n >= 0 ? n : -1;
}

export function onBeforeRequest(d: chrome.webRequest.OnBeforeRequestDetails): undefined {
  const r = ringOf(d.tabId);
  if (!r) return;
  const req: NetRequest = {
    id: d.requestId,
    method: d.method.slice(0, METHOD_LIMIT),
    url: d.url.slice(0, URL_LIMIT),
    type: d.type,
    start: Math.round(d.timeStamp),
    pending: true,
    size: -1,
  };
  if (d.initiator) req.initiator = d.initiator;
  // A redirect keeps the request id: the new hop replaces the old one's entry.
  const old = r.byId.get(d.requestId);
  if (old) r.list.splice(r.list.indexOf(old), 1);
  r.byId.set(d.requestId, req);
  r.list.push(req);
  while (r.list.length > NETWORK_LIMIT) {
    const gone = r.list.shift();
    if (gone) r.byId.delete(gone.id);
    r.dropped++;
  }
}

export function onSendHeaders(d: chrome.webRequest.OnSendHeadersDetails): void {
  const req = kept(d.tabId, d.requestId);
  if (req) req.requestHeaders = redactHeaders(d.requestHeaders);
}

export function onHeadersReceived(d: chrome.webRequest.OnHeadersReceivedDetails): undefined {
  const req = kept(d.tabId, d.requestId);
  if (!req) return;
  req.status = d.statusCode;
  req.responseHeaders = redactHeaders(d.responseHeaders);
  req.size = contentLength(d.responseHeaders);
}

function finish(req: NetRequest, timeStamp: number): void {
  delete req.pending;
  req.duration = Math.max(0, Math.round(timeStamp - req.start));
}

export function onCompleted(d: chrome.webRequest.OnCompletedDetails): void {
  const req = kept(d.tabId, d.requestId);
  if (!req) return;
  req.status = d.statusCode;
  if (d.fromCache) req.fromCache = true;
  if (d.responseHeaders) {
    req.responseHeaders = redactHeaders(d.responseHeaders);
    req.size = contentLength(d.responseHeaders);
  }
  finish(req, d.timeStamp);
}

/** A failed request; returns it (for the console's browser entries) when kept. */
export function onErrorOccurred(d: chrome.webRequest.OnErrorOccurredDetails): NetRequest | undefined {
  const req = kept(d.tabId, d.requestId);
  if (!req) return undefined;
  req.error = d.error;
  finish(req, d.timeStamp);
  return req;
}

/** The tab's requests, oldest first, without headers; or the one named id, with them. */
export function requestsOf(tabId: number, number: number, id?: string): NetworkResult {
  const r = rings.get(tabId);
  if (id !== undefined) {
    const req = r?.byId.get(id);
    return { tab: number, requests: req ? [structuredClone(req)] : [], dropped: 0 };
  }
  const requests = (r?.list ?? []).map(({ requestHeaders: _q, responseHeaders: _s, ...rest }) => rest);
  return { tab: number, requests, dropped: r?.dropped ?? 0 };
}

/**
 * Request types that can turn into a download: a navigation of the tab or
 * of a frame, and an <a download> link's request ("other"; <object>'s too).
 * A fetch, an image or a script never does: a page fetching a URL says
 * nothing about who downloads it.
 */
const DOWNLOAD_TYPES = new Set(['main_frame', 'sub_frame', 'other', 'object']);
/** Requests that already attributed a download: one request, one download. */
const claimed = new WeakSet<NetRequest>();

/**
 * Download attribution: the shared tab (one of shared) whose newest request
 * of url since `since` could have been that download, or undefined. The
 * request is claimed: a later download of the same URL (the user's, in
 * another tab) is not attributed by it again.
 */
export function claimRequest(url: string, since: number, shared: ReadonlySet<number>): number | undefined {
  let best: { tab: number; req: NetRequest } | undefined;
  for (const [tab, r] of rings) {
    if (!shared.has(tab)) continue;
    for (let i = r.list.length - 1; i >= 0; i--) {
      const q = r.list[i];
      if (!q || q.start < since) break;
      if (q.url !== url || !DOWNLOAD_TYPES.has(q.type) || claimed.has(q)) continue;
      if (!best || q.start > best.req.start) best = { tab, req: q };
      break;
    }
  }
  if (!best) return undefined;
  claimed.add(best.req);
  return best.tab;
}

/** Drops the rings of tabs no longer shared (state.ts's watchShared). */
export function keepRingsOf(shared: ReadonlySet<number>): void {
  for (const tab of rings.keys()) if (!shared.has(tab)) rings.delete(tab);
}
