// Where a method's request goes: the tab and frame of a ref, and the frameId
// of a cross-origin frame a snapshot or a point names.
//
// Refs are numbered per profile (see shared/refs.ts), so a ref alone says
// which tab and frame it belongs to: routeRef sends an action there.
import { TetherError, staleRef, unknownRef } from '../../shared/errors';
import { parseRef } from '../../shared/refs';
import { documentOwner, documentsIssued } from '../documents';
import { requireTab, type SharedTab } from '../shared-tabs';
import { readState } from '../state';

/**
 * The shared tab and frame a ref belongs to. Refs are unique per profile, so
 * a ref names its tab: without tab it acts there. With tab (the daemon always
 * sends the tab it checked the caller may use: its owner, its lease) a ref of
 * another tab is refused, naming its tab: another AI app's ref must not act
 * in, or read, that app's tab. A ref of a tab that is not shared (any more)
 * fails; a malformed one goes to the addressed tab, whose content script
 * names the problem.
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
  if (tab !== undefined && tab !== number) {
    throw new TetherError('bad_request', `Element ref ${ref} belongs to tab ${number}, not to tab ${tab} that this call addresses. Nothing was done. Pass tab: ${number} with the ref (Tether checks that you may use that tab), or take a snapshot of tab ${tab} for its refs.`);
  }
  return { t: { tabId: owner.tabId, number }, frameId: owner.frameId };
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
