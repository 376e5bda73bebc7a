// The reading methods (snapshot with options, find, read, read_url, console)
// and dialogs (handle_dialog), plus what every PageResult shares: frames
// stitched in, the size cap, and the dialogs since the previous result.
//
// Refs are numbered per profile (see shared/refs.ts), so a ref alone says
// which tab and frame it belongs to: routeRef sends an action there.
import type {
  ConsoleResult,
  DialogArmResult,
  DialogEvent,
  FindMatch,
  FindResult,
  PageResult,
  ReadResult,
} from '../protocol.gen';
import type { ArmedAnswer } from '../shared/page-hooks';
import { parseRef } from '../shared/refs';
import { capSnapshot } from '../shared/cap';
import { TetherError, staleRef, unknownRef } from '../shared/errors';
import type { ContentReply, PageSnapshot, SnapshotShape } from '../shared/messages';
import { callContent, isRestrictedUrl } from './content-bridge';
import { NavigationWatcher } from './navigation';
import { consoleOf, pushArmed, takeDialogs } from './page-records';
import { documentOwner, documentsIssued } from './documents';
import { forgetTab, requireTab, share, touch, type SharedTab } from './shared-tabs';
import { readState, updateState } from './state';
import { actOn, loadOrBlocked, pageReady } from './tab-hooks';

/** FRAME_MARK of content/snapshot.ts (kept here so the worker does not bundle the DOM code). */
const FRAME_MARK = '\u0001frame=';
/** How deep cross-origin frames are followed. */
const MAX_FRAME_DEPTH = 5;
const FIND_LIMIT_DEFAULT = 50;
const FIND_LIMIT_MAX = 1000;
const TIMES_MAX = 100;
const SNAPSHOT_RESERVE_MS = 1500;

type P = Record<string, unknown>;

export const READ_HANDLERS = {
  snapshot: (p: P, d: number) => snapshotMethod(p, d),
  find: (p: P, d: number) => findMethod(p, d),
  read: (p: P, d: number) => readMethod(p, d),
  read_url: (p: P, d: number) => readUrlMethod(p, d),
  console: (p: P) => consoleMethod(p),
  handle_dialog: (p: P) => handleDialogMethod(p),
} as const;

// ---- params ----

function tabOf(p: P): number | undefined {
  const tab = p.tab;
  if (tab === undefined || tab === null || tab === 0) return undefined;
  if (typeof tab !== 'number' || !Number.isInteger(tab) || tab < 0) {
    throw new TetherError('bad_request', `tab must be a tab number from browser_tabs (a positive integer), not ${JSON.stringify(tab)}.`);
  }
  return tab;
}

function count(p: P, key: string, max: number): number | undefined {
  const v = p[key];
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) {
    throw new TetherError('bad_request', `${key} must be a whole number from 0 to ${max}, not ${JSON.stringify(v)}.`);
  }
  return v;
}

function optString(p: P, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new TetherError('bad_request', `${key} must be a string.`);
  return v;
}

function flag(p: P, key: string): boolean {
  const v = p[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new TetherError('bad_request', `${key} must be true or false.`);
  return v;
}

/** The snapshot options of any method's params (maxChars; snapshot also ref and depth). */
export function snapShape(p: P): SnapshotShape {
  const shape: SnapshotShape = {};
  const maxChars = count(p, 'maxChars', 10_000_000);
  if (maxChars !== undefined) shape.maxChars = maxChars;
  if (p['urls'] === true) shape.urls = true;
  return shape;
}

// ---- refs → tab and frame ----

/**
 * The shared tab and frame a ref belongs to. Refs are unique per profile, so
 * the ref wins over tab: a ref of another shared tab acts there. A ref of a
 * tab that is not shared (any more) fails; a malformed one goes to the
 * addressed tab, whose content script names the problem.
 */
export async function routeRef(ref: string, tab: number | undefined): Promise<{ t: SharedTab; frameId: number }> {
  const parsed = parseRef(ref);
  if (!parsed) return { t: await requireTab(tab), frameId: 0 };
  if (parsed.doc > (await documentsIssued())) throw unknownRef(ref);
  const owner = await documentOwner(parsed.doc);
  if (!owner) throw staleRef(ref);
  if (owner.frameId !== parsed.frame) throw unknownRef(ref);
  const number = (await readState()).shared[owner.tabId];
  if (number === undefined) {
    throw new TetherError('unknown_tab', `Element ref ${ref} belongs to a tab that is not shared with Tether (any more). Call browser_tabs to list the shared tabs and browser_snapshot to get refs there.`);
  }
  return { t: { tabId: owner.tabId, number }, frameId: owner.frameId };
}

// ---- page results ----

/** The tab's PageResult: its snapshot (frames stitched in, capped) and the dialogs since the last result. */
export async function pageResultFor(tabId: number, deadline: number, shape: SnapshotShape = {}, frameId = 0): Promise<PageResult> {
  const number = (await readState()).shared[tabId];
  if (number === undefined) throw new TetherError('unknown_tab', 'The tab was closed. Call browser_tabs to list the shared tabs.');
  const tab = await chrome.tabs.get(tabId);
  const url = tab.url || tab.pendingUrl || '';
  if (url === 'about:blank' || url === '') return withDialogs<PageResult>({ tab: number, url, title: tab.title ?? '', snapshot: '' }, tabId);
  await pageReady(tabId);
  const page = await snapshotFrame(tabId, frameId, shape, deadline);
  return finishPage(tabId, number, page, shape, deadline);
}

async function snapshotFrame(tabId: number, frameId: number, shape: SnapshotShape, deadline: number): Promise<PageSnapshot> {
  const reply = await callContent(tabId, { target: 'content', kind: 'snapshot', docsIssued: await documentsIssued(), snap: shape }, deadline, frameId);
  if (!reply.ok) throw new TetherError(reply.error.code, reply.error.message);
  if (!('page' in reply)) throw new Error('the content script answered without a page');
  return reply.page;
}

/**
 * Completes a content script's page into a PageResult: cross-origin frames
 * stitched in, the cap applied (with its note line), dialogs added.
 */
export async function finishPage(tabId: number, number: number, page: PageSnapshot, shape: SnapshotShape, deadline: number): Promise<PageResult> {
  const stitched = await stitchFrames(tabId, 0, page, shape, deadline, 0);
  const capped = capSnapshot(stitched.text, shape.maxChars ?? 0, stitched.omitted);
  const out: PageResult = { tab: number, url: page.url, title: page.title, snapshot: capped.text };
  if (capped.omitted > 0) out.omitted = capped.omitted;
  if (page.scrolled) out.scrolled = page.scrolled;
  return withDialogs(out, tabId);
}

async function stitchFrames(tabId: number, parentFrameId: number, page: PageSnapshot, shape: SnapshotShape, deadline: number, depth: number): Promise<{ text: string; omitted: number }> {
  let omitted = page.omitted ?? 0;
  if (!page.frames?.length) return { text: page.snapshot, omitted };
  const inner = new Map<string, string>();
  const unreadable = new Map<string, string>();
  const resolve = frameResolver(tabId, parentFrameId);
  for (const key of page.frames) {
    if (depth >= MAX_FRAME_DEPTH) {
      unreadable.set(String(key), `frames nested deeper than ${MAX_FRAME_DEPTH} are not read`);
      continue;
    }
    try {
      const frameId = await resolve(key);
      if (frameId === undefined) {
        unreadable.set(String(key), 'Chrome lists no frame for it (it has not loaded yet, or was removed)');
        continue;
      }
      const child = await snapshotFrame(tabId, frameId, shape.urls ? { maxChars: shape.maxChars, urls: true } : { maxChars: shape.maxChars }, deadline);
      const sub = await stitchFrames(tabId, frameId, child, shape, deadline, depth + 1);
      inner.set(String(key), sub.text);
      omitted += sub.omitted;
    } catch (err) {
      unreadable.set(String(key), frameFailure(err));
    }
  }
  const lines: string[] = [];
  for (const line of page.snapshot.split('\n')) {
    const t = line.trimStart();
    if (!t.startsWith(FRAME_MARK)) {
      lines.push(line);
      continue;
    }
    const key = t.slice(FRAME_MARK.length);
    const text = inner.get(key);
    if (text === undefined || text === '') {
      // Never silently missing: the frame's own line says it is empty, or why it could not be read.
      const mark = text === '' ? '[empty]' : `[not readable: ${unreadable.get(key) ?? 'it did not answer'}]`;
      const last = lines.length - 1;
      if (last >= 0 && lines[last]!.endsWith(':')) lines[last] = `${lines[last]!.slice(0, -1)} ${mark}`;
      continue;
    }
    const indent = line.slice(0, line.length - t.length);
    for (const l of text.split('\n')) lines.push(indent + l);
  }
  return { text: lines.join('\n'), omitted };
}

/** Why a frame's snapshot failed, in words for the snapshot line. */
export function frameFailure(err: unknown): string {
  const text = String(err instanceof Error ? err.message : err);
  if (/error page/i.test(text)) return "it shows Chrome's error page (it did not load)";
  if (/cannot be scripted|Cannot access|must request permission/i.test(text)) return 'Chrome does not let extensions read it';
  if (err instanceof TetherError && err.code === 'timeout') return 'it did not answer in time';
  if (err instanceof TetherError && err.code === 'stale_ref') return 'it navigated or was removed while being read';
  return text.replace(/\s+/g, ' ').slice(0, 120);
}

/** How long the frames webNavigation does not list get to say their URL, in ms. */
const UNLISTED_MS = 1000;

/**
 * Turns a frame placeholder into a frameId: a number is one already;
 * "u<url>" is the next child frame of parentFrameId showing that URL, and
 * "u<n> <url>" the n-th (from 0, in creation order: by frameId) of the child
 * frames showing it, counting those the parent's script read in place (a
 * same-origin srcdoc frame beside a sandboxed one are both about:srcdoc).
 * The frames of a page restored from the back/forward cache are missing from
 * webNavigation.getAllFrames (only the top frame is listed, and
 * runtime.getFrameId knows none of them: seen on Chromium 156), though
 * their content scripts answer: those frames are asked for their URLs
 * instead (scripting, in the isolated world of a shared tab), and one
 * showing the URL is taken (its parent is not known then).
 */
export function frameResolver(tabId: number, parentFrameId: number): (key: number | string) => Promise<number | undefined> {
  let all: Promise<chrome.webNavigation.GetAllFrameResultDetails[]> | undefined;
  let unlisted: Promise<Array<{ frameId: number; url: string }>> | undefined;
  const used = new Set<number>();
  const matches = (u: string, url: string) => u === url || stripHash(u) === stripHash(url);
  const pick = (frames: Array<{ frameId: number }>, nth: number | undefined) => {
    const sorted = [...frames].sort((a, b) => a.frameId - b.frameId);
    const at = nth === undefined ? undefined : sorted[nth];
    return at && !used.has(at.frameId) ? at : sorted.find((f) => !used.has(f.frameId));
  };
  return async (key) => {
    if (typeof key === 'number') return key;
    if (!key.startsWith('u')) return undefined;
    const m = /^u(\d+) (.*)$/s.exec(key);
    const nth = m ? Number(m[1]) : undefined;
    const url = m ? m[2]! : key.slice(1);
    all ??= chrome.webNavigation.getAllFrames({ tabId }).then((frames) => frames ?? [], () => []);
    const listed = await all;
    let hit: { frameId: number } | undefined = pick(listed.filter((f) => f.parentFrameId === parentFrameId && matches(f.url, url)), nth);
    if (!hit) {
      unlisted ??= unlistedFrames(tabId, new Set(listed.map((f) => f.frameId)));
      hit = pick((await unlisted).filter((f) => matches(f.url, url)), nth);
    }
    if (!hit) return undefined;
    used.add(hit.frameId);
    return hit.frameId;
  };
}

/** The frames of the tab that webNavigation does not list, with their URLs (those that answer within UNLISTED_MS). */
async function unlistedFrames(tabId: number, listed: ReadonlySet<number>): Promise<Array<{ frameId: number; url: string }>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<chrome.scripting.InjectionResult<string>[]>((resolve) => (timer = setTimeout(() => resolve([]), UNLISTED_MS)));
  const asked = chrome.scripting.executeScript({ target: { tabId, allFrames: true }, injectImmediately: true, func: () => location.href }).catch(() => []);
  try {
    const results = await Promise.race([asked, late]);
    return results.filter((r) => !listed.has(r.frameId) && typeof r.result === 'string').map((r) => ({ frameId: r.frameId, url: r.result as string }));
  } finally {
    clearTimeout(timer);
  }
}

function stripHash(url: string): string {
  const i = url.indexOf('#');
  return i < 0 ? url : url.slice(0, i);
}

async function withDialogs<T extends { dialogs?: DialogEvent[] }>(result: T, tabId: number): Promise<T> {
  const dialogs = await takeDialogs(tabId);
  if (dialogs.length > 0) result.dialogs = dialogs;
  return result;
}

// ---- methods ----

async function snapshotMethod(p: P, deadline: number): Promise<PageResult> {
  const shape = snapShape(p);
  const depth = count(p, 'depth', 1000);
  if (depth !== undefined) shape.depth = depth;
  const ref = optString(p, 'ref')?.trim();
  if (ref) shape.ref = ref;
  const { t, frameId } = ref ? await routeRef(ref, tabOf(p)) : { t: await requireTab(tabOf(p)), frameId: 0 };
  await touch(t.tabId);
  return pageResultFor(t.tabId, deadline, shape, frameId);
}

async function findMethod(p: P, deadline: number): Promise<FindResult> {
  const text = optString(p, 'text')?.trim() || undefined;
  const role = optString(p, 'role')?.trim() || undefined;
  if (!text && !role) throw new TetherError('bad_request', 'Pass text, role or both to browser_find.');
  const limit = count(p, 'limit', FIND_LIMIT_MAX) ?? FIND_LIMIT_DEFAULT;
  const t = await requireTab(tabOf(p));
  await touch(t.tabId);
  await pageReady(t.tabId);
  const docsIssued = await documentsIssued();
  const matches: FindMatch[] = [];
  let url = '';
  let title = '';
  const search = async (frameId: number, depth: number): Promise<void> => {
    let reply: ContentReply;
    try {
      reply = await callContent(t.tabId, { target: 'content', kind: 'find', text, role, docsIssued }, deadline, frameId);
    } catch (err) {
      if (frameId === 0) throw err;
      return; // A frame that went away.
    }
    if (!reply.ok) throw new TetherError(reply.error.code, reply.error.message);
    if (!('found' in reply)) throw new Error('the content script answered without matches');
    if (frameId === 0) ({ url, title } = reply);
    matches.push(...reply.found);
    if (depth >= MAX_FRAME_DEPTH) return;
    const resolve = frameResolver(t.tabId, frameId);
    for (const key of reply.frames) {
      const child = await resolve(key);
      if (child !== undefined) await search(child, depth + 1);
    }
  };
  await search(0, 0);
  return { tab: t.number, url, title, matches: matches.slice(0, limit), total: matches.length };
}

async function readMethod(p: P, deadline: number): Promise<ReadResult> {
  const t = await requireTab(tabOf(p));
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

async function readUrlMethod(p: P, deadline: number): Promise<ReadResult> {
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
  const closeAfter = flag(p, 'closeAfter');
  const watcher = new NavigationWatcher();
  let tabId: number | undefined;
  try {
    const tab = await chrome.tabs.create({ url: parsed.href, active: false });
    const id = (tabId = tab.id!);
    const number = await share(id, false, 'opened');
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
      false,
    );
  } finally {
    watcher.dispose();
    if (closeAfter && tabId !== undefined) {
      await chrome.tabs.remove(tabId).catch(() => undefined);
      await forgetTab(tabId);
    }
  }
}

function loadDeadline(deadline: number): number {
  const budget = deadline - Date.now();
  return Date.now() + Math.max(budget - Math.min(SNAPSHOT_RESERVE_MS, budget / 4), 0);
}

async function consoleMethod(p: P): Promise<ConsoleResult> {
  const t = await requireTab(tabOf(p));
  const clear = flag(p, 'clear');
  // Content scripts relay console records in batches every 50 ms.
  await new Promise((r) => setTimeout(r, 60));
  return consoleOf(t.tabId, t.number, clear);
}

async function handleDialogMethod(p: P): Promise<DialogArmResult> {
  if (typeof p.accept !== 'boolean') throw new TetherError('bad_request', 'accept must be true (OK) or false (Cancel).');
  const accept = p.accept;
  const promptText = optString(p, 'promptText');
  const times = count(p, 'times', TIMES_MAX) ?? 1;
  const t = await requireTab(tabOf(p));
  // A dialog already open is the user's: it cannot be answered from here (the error says so).
  await pageReady(t.tabId, {}, false);
  const answer: ArmedAnswer = promptText !== undefined ? { accept, promptText } : { accept };
  const armed = await updateState((s) => {
    const q = (s.armed[t.tabId] ??= []);
    for (let i = 0; i < times; i++) q.push({ ...answer });
    return q.length;
  });
  await pushArmed(t.tabId);
  const out: DialogArmResult = { tab: t.number, armed };
  const dialogs = await takeDialogs(t.tabId);
  if (dialogs.length > 0) out.dialogs = dialogs;
  return out;
}
