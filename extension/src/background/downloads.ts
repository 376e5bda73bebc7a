// Downloads of shared tabs. chrome.downloads items carry no tab, so a
// download is attributed to a shared tab only
//  - when webRequest saw its request in that tab (network.ts: a navigation
//    or an <a download> link's request, each attributing one download), or
//  - for blob:, data: and <a download> links, when its URL's origin (a
//    data: URL's referrer's) matches a shared tab that had a tool action in
//    the last ATTRIBUTE_MS.
// Every other download is invisible to the AI: nothing of it is kept.
// A download attributed to a tab while, or within ATTRIBUTE_MS after, the
// AI acted there is paused and reported to the daemon (a download frame),
// whose policy (class download) resumes or cancels it: download_decide.
import type { Download, DownloadEvent } from '../protocol.gen';
import { TetherError } from '../shared/errors';
import type { OffscreenMessage } from '../shared/messages';
import { actedWithin } from './acting';
import { claimRequest, URL_LIMIT } from './network';
import { readState } from './state';

/** How recent a tool action must be for a blob:/data:/<a download> download to count as its tab's. */
export const ATTRIBUTE_MS = 10_000;
/** How far back a request seen by webRequest attributes a download, in ms. */
const REQUEST_LOOKBACK_MS = 60_000;
/** Attributed downloads remembered (the oldest go first). */
const KEPT = 200;
const KEY = 'downloads';

/** Download id → the Chrome tab id it is attributed to. */
type Attributed = Record<string, number>;

let attributed: Promise<Attributed> | undefined;

function load(): Promise<Attributed> {
  attributed ??= chrome.storage.session.get(KEY).then(
    (got) => ({ ...((got[KEY] as Attributed | undefined) ?? {}) }),
    () => ({}),
  );
  return attributed;
}

/** The origin a download's URL names: a blob: URL's inner origin; a data: URL's referrer's. */
export function downloadOrigin(url: string, referrer?: string): string | undefined {
  try {
    if (url.startsWith('data:')) return referrer ? new URL(referrer).origin : undefined;
    const u = new URL(url.startsWith('blob:') ? url.slice(5) : url);
    return u.origin === 'null' ? undefined : u.origin;
  } catch {
    return undefined;
  }
}

/** The shared tab a new download belongs to, by the rules above; undefined: none (invisible). */
export async function attribute(item: chrome.downloads.DownloadItem, now = Date.now()): Promise<number | undefined> {
  const s = await readState();
  const shared = new Set(Object.keys(s.shared).map(Number));
  for (const url of new Set([item.url, item.finalUrl])) {
    const tab = claimRequest(url, now - REQUEST_LOOKBACK_MS, shared);
    if (tab !== undefined) return tab;
  }
  const origin = downloadOrigin(item.url, item.referrer);
  const acted = [...shared].filter((t) => actedWithin(t, ATTRIBUTE_MS));
  for (const t of acted) {
    const tab = await chrome.tabs.get(t).catch(() => undefined);
    if (origin !== undefined && tab?.url && downloadOrigin(tab.url) === origin) return t;
  }
  // A data: URL without a referrer: the one tab the AI just acted on.
  if (origin === undefined && item.url.startsWith('data:') && acted.length === 1) return acted[0];
  return undefined;
}

/** chrome.downloads.onCreated: attributes the download, or forgets it at once. */
export async function onDownloadCreated(item: chrome.downloads.DownloadItem): Promise<number | undefined> {
  const tab = await attribute(item);
  if (tab === undefined) return undefined;
  const all = await load();
  all[item.id] = tab;
  const ids = Object.keys(all).map(Number).sort((a, b) => a - b);
  for (const id of ids.slice(0, Math.max(0, ids.length - KEPT))) delete all[id];
  await chrome.storage.session.set({ [KEY]: all }).catch(() => undefined);
  return tab;
}

/** Danger types for which Chrome asks the user whether to keep the file. */
const ASKS_USER = new Set(['file', 'url', 'content', 'uncommon', 'host', 'unwanted', 'promptForScanning', 'promptForLocalPasswordScanning', 'accountCompromise', 'sensitiveContentWarning']);

/** A download item as the protocol states it, for tab number. */
export function downloadOf(item: chrome.downloads.DownloadItem, number: number): Download {
  const total = item.totalBytes > 0 ? item.totalBytes : item.fileSize > 0 ? item.fileSize : -1;
  const d: Download = {
    id: item.id,
    tab: number,
    // Bounded as a request's URL is: a link's URL may be 2 MB long.
    url: (item.finalUrl || item.url).slice(0, URL_LIMIT),
    filename: item.filename,
    state: item.state,
    received: item.bytesReceived,
    total,
    start: Date.parse(item.startTime) || 0,
  };
  if (item.mime) d.mime = item.mime.slice(0, 200);
  if (item.error) d.error = item.error;
  if (item.paused) d.paused = true;
  if (item.state === 'in_progress' && (item.filename === '' || ASKS_USER.has(item.danger))) d.waitingForUser = true;
  return d;
}

/** The downloads attributed to tabId (numbered number), oldest first. */
export async function downloadsOf(tabId: number, number: number): Promise<Download[]> {
  const all = await load();
  const ids = Object.entries(all).filter(([, t]) => t === tabId).map(([id]) => Number(id));
  const items = await Promise.all(ids.map((id) => chrome.downloads.search({ id }).then((r) => r[0], () => undefined)));
  return items.filter((i): i is chrome.downloads.DownloadItem => i !== undefined).map((i) => downloadOf(i, number)).sort((a, b) => a.start - b.start || a.id - b.id);
}

/** Forgets the downloads of tabs no longer shared (their records go with the sharing). */
export async function keepDownloadsOf(shared: ReadonlySet<number>): Promise<void> {
  const all = await load();
  let changed = false;
  for (const [id, tab] of Object.entries(all)) {
    if (!shared.has(tab)) {
      delete all[id];
      changed = true;
    }
  }
  if (changed) await chrome.storage.session.set({ [KEY]: all }).catch(() => undefined);
}

/** Sends a download frame to the daemon; true only when it went out (connected). */
export type PushDownload = (frame: DownloadEvent) => Promise<boolean>;

export const pushToOffscreen: PushDownload = (frame) => {
  const msg: OffscreenMessage = { target: 'offscreen', kind: 'download', frame };
  return chrome.runtime.sendMessage(msg).then(
    (sent) => sent === true,
    () => false,
  );
};

/** How long a report waits for Chrome to settle a download's file name. */
const FILENAME_WAIT_MS = 2000;

/**
 * Resolves once download id has a file name (chrome.downloads.onChanged
 * with a filename), or after ms: a download whose name Chrome asks the user
 * for is reported without one (waitingForUser).
 */
function filenameSettled(id: number, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      chrome.downloads.onChanged.removeListener(onChanged);
      resolve();
    };
    const onChanged = (delta: chrome.downloads.DownloadDelta): void => {
      if (delta.id === id && delta.filename?.current) done();
    };
    const timer = setTimeout(done, ms);
    chrome.downloads.onChanged.addListener(onChanged);
    // Settled between onCreated and now: no event is coming.
    void itemOf(id).then((item) => {
      if (item?.filename) done();
    });
  });
}

/** Downloads reported to the daemon as started: download id → tab number (for their end). */
const reported = new Map<number, number>();

async function itemOf(id: number): Promise<chrome.downloads.DownloadItem | undefined> {
  return chrome.downloads.search({ id }).then((r) => r[0], () => undefined);
}

/**
 * A download attributed to tabId: when the AI acts there, or did within
 * ATTRIBUTE_MS, it is paused and reported to the daemon, which resumes or
 * cancels it by the user's policy. Without a daemon to ask (the frame did
 * not go out) it runs on. Returns whether it was reported.
 */
export async function reportDownload(item: chrome.downloads.DownloadItem, tabId: number, push: PushDownload = pushToOffscreen): Promise<boolean> {
  if (!actedWithin(tabId, ATTRIBUTE_MS)) return false;
  const number = (await readState()).shared[tabId];
  if (number === undefined) return false;
  const tab = await chrome.tabs.get(tabId).catch(() => undefined);
  const site = tab?.url ? (downloadOrigin(tab.url) ?? '') : '';
  const paused = item.state === 'in_progress' && (await chrome.downloads.pause(item.id).then(() => true, () => false));
  // The user is asked about the file by the name it is saved under: Chrome
  // settles it (Content-Disposition, conflicts) just after onCreated.
  if (item.filename === '') await filenameSettled(item.id, FILENAME_WAIT_MS);
  const frame: DownloadEvent = { type: 'download', event: 'started', download: downloadOf((await itemOf(item.id)) ?? item, number), site };
  if (paused) frame.paused = true;
  reported.set(item.id, number);
  if (await push(frame)) {
    // It ended before it was reported (a data: URL or a small file, done
    // before the pause): its onChanged came while it was not yet in
    // reported, so its end is sent now, after the start.
    const now = await itemOf(item.id);
    if (now && now.state !== 'in_progress' && reported.get(item.id) === number) {
      reported.delete(item.id);
      await push({ type: 'download', event: 'ended', download: downloadOf(now, number), site: '' });
    }
    return true;
  }
  reported.delete(item.id);
  if (paused) await chrome.downloads.resume(item.id).catch(() => undefined);
  return false;
}

/** chrome.downloads.onChanged: a reported download that completed or was interrupted is reported as ended. */
export async function onDownloadChanged(delta: chrome.downloads.DownloadDelta, push: PushDownload = pushToOffscreen): Promise<void> {
  const number = reported.get(delta.id);
  if (number === undefined || delta.state === undefined || delta.state.current === 'in_progress') return;
  reported.delete(delta.id);
  const item = await itemOf(delta.id);
  if (item) await push({ type: 'download', event: 'ended', download: downloadOf(item, number), site: '' });
}

/**
 * download_decide: resumes a download paused for the policy, or cancels it
 * and removes any file it already wrote. Only downloads attributed to a
 * shared tab can be decided.
 */
export async function decideDownload(id: number, action: 'resume' | 'cancel'): Promise<Download> {
  const tabId = (await load())[id];
  let item = tabId === undefined ? undefined : await itemOf(id);
  if (tabId === undefined || !item) throw new TetherError('bad_request', `download ${id} is not one of a shared tab's downloads`);
  const number = (await readState()).shared[tabId] ?? 0;
  if (action === 'resume') {
    if (item.state === 'in_progress' && item.paused) await chrome.downloads.resume(id);
  } else {
    if (item.state === 'in_progress') await chrome.downloads.cancel(id).catch(() => undefined);
    item = (await itemOf(id)) ?? item;
    if (item.state === 'complete' && item.exists) await chrome.downloads.removeFile(id).catch(() => undefined);
  }
  return downloadOf((await itemOf(id)) ?? item, number);
}
