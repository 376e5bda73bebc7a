// Document numbers, for refs: one counter for the whole profile, so no two
// documents of any tabs or frames share a number and a ref names its tab and
// frame. The service worker records which document each frame shows (to
// route a ref, and to fail one of a document that is gone as stale) and
// which documents were numbered in each tab and frame: a document the
// back/forward cache brings back keeps its content script and its refs, and
// becomes its frame's current document again (claimDocument).
import { readState, updateState, type TabState } from './state';

/** Documents remembered per tab as numbered there (the newest): the back/forward cache keeps far fewer pages. */
export const DOCS_KEPT = 256;

/**
 * Numbers a document that asks for refs (1 for the profile's very first) and
 * records it as what frameId of tabId shows.
 */
export function nextDocument(tabId: number, frameId = 0): Promise<number> {
  return updateState((s) => {
    const doc = s.nextDoc++;
    (s.docs[tabId] ??= {})[frameId] = doc;
    const issued = (s.issued[tabId] ??= {});
    issued[doc] = frameId;
    trim(issued);
    return doc;
  });
}

/** Drops the oldest numbers beyond DOCS_KEPT (integer keys iterate in ascending order: oldest first). */
function trim(issued: Record<string, number>): void {
  const keys = Object.keys(issued);
  for (const k of keys.slice(0, Math.max(0, keys.length - DOCS_KEPT))) delete issued[k];
}

/**
 * A content script in frameId of tabId answered for document doc, so the
 * frame shows doc now: a page restored from the back/forward cache answers
 * with the number it had. Recorded only when doc was numbered in that very
 * tab and frame (a page cannot take over another document's refs). Says
 * whether the frame counts as showing doc now.
 */
export async function claimDocument(tabId: number, frameId: number, doc: number): Promise<boolean> {
  const shows = (s: TabState) => s.docs[tabId]?.[frameId] === doc;
  const known = (s: TabState) => s.issued[tabId]?.[doc] === frameId;
  const s = await readState();
  if (shows(s)) return true;
  if (!known(s)) return false;
  return updateState((st) => {
    if (!known(st)) return false;
    (st.docs[tabId] ??= {})[frameId] = doc;
    return true;
  });
}

/** How many documents the profile has numbered so far (the argument is ignored: numbers are per profile). */
export async function documentsIssued(_tabId?: number): Promise<number> {
  return (await readState()).nextDoc - 1;
}

/** The tab and frame that show document doc, if it is still the frame's current one. */
export async function documentOwner(doc: number): Promise<{ tabId: number; frameId: number } | undefined> {
  const s = await readState();
  for (const [tab, frames] of Object.entries(s.docs)) {
    for (const [frame, d] of Object.entries(frames)) if (d === doc) return { tabId: Number(tab), frameId: Number(frame) };
  }
  return undefined;
}
