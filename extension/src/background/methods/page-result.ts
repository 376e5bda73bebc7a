// What every PageResult shares: the tab's snapshot with its cross-origin
// frames stitched in, the size cap, and the dialogs since the previous result.
import type { DialogEvent, PageResult } from '../../protocol.gen';
import { capSnapshot } from '../../shared/cap';
import { TetherError } from '../../shared/errors';
import { FRAME_MARK } from '../../shared/frame-mark';
import type { PageSnapshot, SnapshotShape } from '../../shared/messages';
import { callContent } from '../content-bridge';
import { documentsIssued } from '../documents';
import { takeDialogs } from '../page-records';
import { readState } from '../state';
import { pageReady } from '../tab-hooks';
import { frameResolver } from './route';

/** How deep cross-origin frames are followed. */
export const MAX_FRAME_DEPTH = 5;

/**
 * The tab's PageResult: its snapshot (of frameId's document; frames stitched
 * in, capped by shape.maxChars) and the dialogs since the last result.
 */
export async function pageResult(tabId: number, deadline: number, shape: SnapshotShape = {}, frameId = 0): Promise<PageResult> {
  const number = (await readState()).shared[tabId];
  if (number === undefined) throw new TetherError('unknown_tab', 'The tab was closed. Call browser_tabs to list the shared tabs.');
  const tab = await chrome.tabs.get(tabId);
  const url = tab.url || tab.pendingUrl || '';
  if (url === 'about:blank' || url === '') return withDialogs<PageResult>({ tab: number, url, title: tab.title ?? '', snapshot: '' }, tabId);
  await pageReady(tabId);
  const { page, doc } = await snapshotFrameDoc(tabId, frameId, shape, deadline);
  return finishPage(tabId, number, page, shape, deadline, frameId === 0 ? doc : undefined);
}

async function snapshotFrame(tabId: number, frameId: number, shape: SnapshotShape, deadline: number): Promise<PageSnapshot> {
  return (await snapshotFrameDoc(tabId, frameId, shape, deadline)).page;
}

/** A frame's snapshot and the number of the document that answered it. */
async function snapshotFrameDoc(tabId: number, frameId: number, shape: SnapshotShape, deadline: number): Promise<{ page: PageSnapshot; doc?: number }> {
  const reply = await callContent(tabId, { target: 'content', kind: 'snapshot', docsIssued: await documentsIssued(), snap: shape }, deadline, frameId);
  if (!reply.ok) throw new TetherError(reply.error.code, reply.error.message);
  if (!('page' in reply)) throw new Error('the content script answered without a page');
  return { page: reply.page, doc: reply.doc };
}

/**
 * Completes a content script's page into a PageResult: cross-origin frames
 * stitched in, the cap applied (with its note line), dialogs added. doc is
 * the number of the top frame's document that answered, when known: the
 * daemon tells a new document at the same URL (a reload) by it.
 */
export async function finishPage(tabId: number, number: number, page: PageSnapshot, shape: SnapshotShape, deadline: number, doc?: number): Promise<PageResult> {
  const stitched = await stitchFrames(tabId, 0, page, shape, deadline, 0);
  const capped = capSnapshot(stitched.text, shape.maxChars ?? 0, stitched.omitted, stitched.more);
  const out: PageResult = { tab: number, url: page.url, title: page.title, snapshot: capped.text };
  // Packed only when nothing was cut or is to be stitched in (see pack.ts): it goes on as it came.
  if (page.snapshotGzip !== undefined) out.snapshotGzip = page.snapshotGzip;
  if (doc !== undefined) out.doc = doc;
  if (capped.omitted > 0) out.omitted = capped.omitted;
  if (capped.omitted > 0 && stitched.more) out.omittedMore = true;
  if (stitched.partial) out.partial = true;
  if (page.scrolled) out.scrolled = page.scrolled;
  return withDialogs(out, tabId);
}

interface Stitched {
  text: string;
  omitted: number;
  /** Some document's walk stopped at its budget: omitted is a lower bound. */
  more: boolean;
  /** Some document's read ran into the deadline. */
  partial: boolean;
}

async function stitchFrames(tabId: number, parentFrameId: number, page: PageSnapshot, shape: SnapshotShape, deadline: number, depth: number): Promise<Stitched> {
  let omitted = page.omitted ?? 0;
  let more = page.omittedMore === true;
  let partial = page.partial === true;
  if (!page.frames?.length) return { text: page.snapshot, omitted, more, partial };
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
      more ||= sub.more;
      partial ||= sub.partial;
    } catch (err) {
      if (err instanceof TetherError && err.code === 'timeout') partial = true;
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
  return { text: lines.join('\n'), omitted, more, partial };
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

/** Adds the tab's dialogs since the previous result to result. */
export async function withDialogs<T extends { dialogs?: DialogEvent[] }>(result: T, tabId: number): Promise<T> {
  const dialogs = await takeDialogs(tabId);
  if (dialogs.length > 0) result.dialogs = dialogs;
  return result;
}
