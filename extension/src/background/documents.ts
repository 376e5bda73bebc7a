// Document numbers, for refs: one counter for the whole profile, so no two
// documents of any tabs or frames share a number and a ref names its tab and
// frame. The service worker records which document each frame shows, to
// route a ref and to fail one of a document that is gone as stale.
import { readState, updateState } from './state';

/**
 * Numbers a document that asks for refs (1 for the profile's very first) and
 * records it as what frameId of tabId shows.
 */
export function nextDocument(tabId: number, frameId = 0): Promise<number> {
  return updateState((s) => {
    const doc = s.nextDoc++;
    (s.docs[tabId] ??= {})[frameId] = doc;
    return doc;
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
