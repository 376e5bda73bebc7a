// The action methods beyond click and type: select_option, press_key,
// file_upload, wait_for, scroll, history, screenshot, evaluate, and trusted
// press_key (click, hover and drag: methods-pointer.ts). Each page action
// replies with the common PageResult (methods.ts act / pageResult).
import type { EvaluateResult, PageResult, ScreenshotResult } from '../protocol.gen';
import { TetherError, restrictedPage } from '../shared/errors';
import type { UploadFileData } from '../shared/messages';
import { parseKey } from '../shared/keys';
import { callContent, isRestrictedUrl, withDeadline } from './content-bridge';
import { act, bool, loadDeadline, pageResult, str, tabParams } from './methods';
import { routeRef, snapShape } from './methods-read';
import { NavigationWatcher } from './navigation';
import { captureScreenshot } from './screenshot';
import { documentsIssued } from './documents';
import { requireTab, touch, type SharedTab } from './shared-tabs';
import { actOn, loadOrBlocked, pageReady } from './tab-hooks';
import { requireTrusted, trustedKey, withDebugger } from './trusted';

type P = Record<string, unknown>;

/** The longest wait_for (the daemon's documented limit). */
export const WAIT_FOR_MAX_MS = 60_000;
// Time kept back from a wait for the snapshot that follows it.
const SNAPSHOT_RESERVE_MS = 1500;

const content = 'content' as const;

export async function selectOptionAct(p: P, d: number): Promise<PageResult> {
  const values = p.values;
  if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string')) {
    throw new TetherError('bad_request', 'values must be a non-empty list of strings: option values or visible labels.');
  }
  return pageAct(p, { target: content, kind: 'select_option', ref: str(p, 'ref'), values: values as string[], docsIssued: 0, snap: snapShape(p) }, d);
}

export async function pressKeyAct(p: P, d: number): Promise<PageResult> {
  const key = str(p, 'key', true);
  const spec = parseKey(key); // bad_request before anything runs
  if (bool(p, 'trusted')) {
    await requireTrusted();
    const tab = tabParams(p).tab;
    await checkScriptable(tab);
    return act(tab, { target: content, kind: 'settle', docsIssued: 0, snap: snapShape(p) }, d, (tabId) => withDebugger(tabId, (send) => trustedKey(send, spec)));
  }
  return pageAct(p, { target: content, kind: 'press_key', key, docsIssued: 0, snap: snapShape(p) }, d);
}

export async function fileUploadAct(p: P, d: number): Promise<PageResult> {
  const files = p.files;
  if (!Array.isArray(files) || files.length === 0) throw new TetherError('bad_request', 'files must list at least one file ({name, mime, dataBase64}).');
  const checked: UploadFileData[] = files.map((f: unknown, i) => {
    const o = (typeof f === 'object' && f !== null ? f : {}) as P;
    if (typeof o.name !== 'string' || o.name === '' || typeof o.dataBase64 !== 'string' || (o.mime !== undefined && typeof o.mime !== 'string')) {
      throw new TetherError('bad_request', `files[${i}] must be {name: non-empty string, mime: string, dataBase64: string}.`);
    }
    return { name: o.name, mime: typeof o.mime === 'string' ? o.mime : '', dataBase64: o.dataBase64 };
  });
  return pageAct(p, { target: content, kind: 'file_upload', ref: str(p, 'ref'), files: checked, docsIssued: 0, snap: snapShape(p) }, d);
}

export async function waitForAct(p: P, d: number): Promise<PageResult> {
  const text = optString(p, 'text');
  const textGone = optString(p, 'textGone');
  const t = p.timeMs;
  if (t !== undefined && t !== null && (typeof t !== 'number' || !Number.isFinite(t) || t < 0)) {
    throw new TetherError('bad_request', 'timeMs must be a number of milliseconds (0 or more).');
  }
  const timeMs = typeof t === 'number' && t > 0 ? t : undefined;
  if (!text && !textGone && timeMs === undefined) throw new TetherError('bad_request', 'Pass text, textGone or timeMs (at least one).');
  if (timeMs !== undefined && timeMs > WAIT_FOR_MAX_MS) {
    throw new TetherError('bad_request', `timeMs is at most ${WAIT_FOR_MAX_MS} (60 s); wait in several calls for longer.`);
  }
  const budget = d - Date.now() - SNAPSHOT_RESERVE_MS;
  const limitMs = Math.max(0, Math.min(budget, WAIT_FOR_MAX_MS, text || textGone ? (timeMs ?? WAIT_FOR_MAX_MS) : timeMs!));
  return pageAct(p, { target: content, kind: 'wait_for', text, textGone, timeMs, limitMs, docsIssued: 0, snap: snapShape(p) }, d);
}

const SCROLL_TO = ['top', 'bottom', 'left', 'right', 'view'] as const;
type ScrollTo = (typeof SCROLL_TO)[number];
/** The farthest one scroll may move, in CSS pixels (Chrome's own limit on layout sizes is about 33 million). */
const SCROLL_MAX_PX = 10_000_000;

/**
 * Scrolls the page or a container (ref) by dx/dy pixels or to an edge, or
 * brings ref into view. It never brings a background tab to the front:
 * the result says when the tab was hidden (and so did not render).
 */
export async function scrollAct(p: P, d: number): Promise<PageResult> {
  const to = p.to === undefined || p.to === null || p.to === '' ? undefined : p.to;
  if (to !== undefined && !SCROLL_TO.includes(to as ScrollTo)) throw new TetherError('bad_request', 'to must be "top", "bottom", "left", "right" or "view".');
  const px = (key: string): number => {
    const v = p[key] ?? 0;
    if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) > SCROLL_MAX_PX) throw new TetherError('bad_request', `${key} must be a whole number of pixels (negative: up or left).`);
    return v;
  };
  const dx = px('dx');
  const dy = px('dy');
  const ref = p.ref === undefined || p.ref === null || p.ref === '' ? undefined : str(p, 'ref');
  if (to === 'view' && !ref) throw new TetherError('bad_request', 'to "view" needs ref: the element to bring into view.');
  if (to === undefined && dx === 0 && dy === 0) throw new TetherError('bad_request', 'Pass dy or dx (pixels; negative scrolls up or left), or to: top, bottom, left, right or view.');
  const tab = tabParams(p).tab;
  await checkScriptable(tab);
  return act(tab, { target: content, kind: 'scroll', ref, to: to as ScrollTo | undefined, dx, dy, docsIssued: 0, snap: snapShape(p) }, d);
}

export async function historyAct(p: P, d: number): Promise<PageResult> {
  const action = p.action;
  if (action !== 'back' && action !== 'forward' && action !== 'reload') throw new TetherError('bad_request', 'action must be "back", "forward" or "reload".');
  const t = await requireTab(tabParams(p).tab);
  await touch(t.tabId);
  return actOn(t.tabId, d, () => historyIn(t, action, p, d), false);
}

async function historyIn(t: SharedTab, action: 'back' | 'forward' | 'reload', p: P, d: number): Promise<PageResult> {
  const watcher = new NavigationWatcher();
  try {
    const before = await chrome.tabs.get(t.tabId);
    const none = () =>
      new TetherError('navigation_failed', `Tab ${t.number} has no ${action === 'back' ? 'previous' : 'next'} page in its history. Call browser_navigate with a URL instead.`);
    let viaPage = false;
    try {
      if (action === 'back') await chrome.tabs.goBack(t.tabId);
      else if (action === 'forward') await chrome.tabs.goForward(t.tabId);
      else await chrome.tabs.reload(t.tabId);
    } catch (err) {
      const text = String(err instanceof Error ? err.message : err);
      if (!/Cannot find a (next|previous) page in history/i.test(text)) throw err;
      // Chrome's tabs API skips entries the user never interacted with (its
      // back-button intervention); the page's own history still has them.
      const url = before.url || '';
      if (isRestrictedUrl(url)) throw none();
      await chrome.scripting.executeScript({
        target: { tabId: t.tabId, frameIds: [0] },
        func: (back: boolean) => (back ? history.back() : history.forward()),
        args: [action === 'back'],
      }).catch(() => {
        throw none();
      });
      viaPage = true;
    }
    // A history step starts at once; nothing within a short while means it stayed.
    const startBy = Date.now() + 1500;
    const loaded = await loadOrBlocked(watcher, t.tabId, loadDeadline(d), `The ${action === 'reload' ? 'reload' : 'history step'} was sent to the tab. `, startBy);
    if (viaPage && !watcher.started(t.tabId)) throw none();
    if (!loaded && !watcher.committed(t.tabId)) {
      const url = watcher.lastUrl(t.tabId) || before.url || 'the page';
      throw new TetherError('timeout', `${action === 'reload' ? 'Reloading' : `Going ${action} to`} ${url} did not get a response in time; the tab is still loading it. Call browser_snapshot in a few seconds to see whether it arrived.`);
    }
    return await pageResult(t.tabId, d, snapShape(p));
  } finally {
    watcher.dispose();
  }
}

export async function screenshotAct(p: P, d: number): Promise<ScreenshotResult> {
  const format = p.format === undefined || p.format === null || p.format === '' ? 'png' : p.format;
  if (format !== 'png' && format !== 'jpeg') throw new TetherError('bad_request', 'format must be "png" or "jpeg".');
  const maxBytes = p.maxBytes ?? 0;
  if (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes < 0) throw new TetherError('bad_request', 'maxBytes must be a whole number of bytes (0: no cap).');
  const ref = p.ref === undefined || p.ref === null || p.ref === '' ? undefined : str(p, 'ref');
  const tab = tabParams(p).tab;
  await checkScriptable(tab);
  let t = await requireTab(tab);
  if (ref) {
    const routed = await routeRef(ref, tab);
    if (routed.frameId !== 0) throw new TetherError('not_interactable', `Element ref ${ref} is in a cross-origin frame; capture the page (no ref) instead.`);
    t = routed.t;
  }
  await pageReady(t.tabId);
  return captureScreenshot(t, { fullPage: bool(p, 'fullPage'), ref, format, bringToFront: bool(p, 'bringToFront'), maxBytes }, d);
}

export async function evaluateAct(p: P, d: number): Promise<EvaluateResult> {
  const expression = str(p, 'expression');
  const t = await requireTab(tabParams(p).tab);
  await touch(t.tabId);
  const tab = await chrome.tabs.get(t.tabId);
  const url = tab.url || tab.pendingUrl || '';
  if (isRestrictedUrl(url)) throw restrictedPage(url);
  return actOn(t.tabId, d, () => evaluateIn(t, expression, url, d));
}

async function evaluateIn(t: SharedTab, expression: string, url: string, d: number): Promise<EvaluateResult> {
  let results: chrome.scripting.InjectionResult<unknown>[];
  try {
    results = await withDeadline(
      chrome.scripting.executeScript({ target: { tabId: t.tabId, frameIds: [0] }, world: 'MAIN', func: evaluateInPage, args: [expression] }),
      d - 500,
    );
  } catch (err) {
    if (err instanceof TetherError && err.code === 'timeout') {
      throw new TetherError('timeout', 'The expression did not finish in time (a promise that never settles, or a long loop). Return sooner, or await less.');
    }
    const text = String(err instanceof Error ? err.message : err);
    if (/cannot be scripted|Cannot access|must request permission|error page/i.test(text)) throw restrictedPage(url);
    throw err;
  }
  return { tab: t.number, valueJson: evaluationResult(results[0]?.result) };
}

/** What evaluateInPage answers. */
export type PageEvaluation = { ok: true; json: string } | { ok: false; kind: 'csp' | 'threw' | 'too_large'; message: string };

/** Turns evaluateInPage's answer into valueJson, or the error the agent can act on. */
export function evaluationResult(r: unknown): string {
  const res = r as PageEvaluation | undefined;
  if (!res || typeof res !== 'object') throw new TetherError('internal', 'The page gave no evaluation result (it may have navigated while the expression ran). Call browser_snapshot, then retry.');
  if (res.ok) return res.json;
  if (res.kind === 'csp') {
    throw new TetherError(
      'restricted_page',
      `This page's Content-Security-Policy forbids evaluating code from strings (no 'unsafe-eval'), so browser_evaluate cannot run here (${res.message}). Read the page with browser_snapshot or browser_read instead.`,
    );
  }
  if (res.kind === 'too_large') throw new TetherError('bad_request', res.message);
  throw new TetherError('bad_request', `The expression threw: ${res.message}. Fix the expression and retry.`);
}

/**
 * Runs in the page's main world (serialized by chrome.scripting, so it must
 * be self-contained): evaluates the expression globally, calls it if it is a
 * function, awaits a promise, and encodes the value as JSON.
 */
export async function evaluateInPage(expression: string): Promise<PageEvaluation> {
  const MAX = 1_000_000;
  const describeError = (e: unknown): string => {
    if (e instanceof Error) return `${e.name}: ${e.message}`;
    try {
      return `${typeof e === 'string' ? e : JSON.stringify(e)}`;
    } catch {
      return String(e);
    }
  };
  let value: unknown;
  try {
    value = (0, eval)(expression);
  } catch (e) {
    const msg = describeError(e);
    if (e instanceof EvalError || /unsafe-eval|Content Security Policy|TrustedScript/i.test(msg)) return { ok: false, kind: 'csp', message: msg };
    return { ok: false, kind: 'threw', message: msg };
  }
  try {
    if (typeof value === 'function') value = (value as () => unknown)();
    value = await value;
  } catch (e) {
    return { ok: false, kind: 'threw', message: describeError(e) };
  }
  if (value === undefined) return { ok: true, json: 'undefined' };
  const seen = new WeakSet<object>();
  const replacer = (_key: string, v: unknown): unknown => {
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'symbol') return v.toString();
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    if (typeof v !== 'object' || v === null) return v;
    if (typeof Node !== 'undefined' && v instanceof Node) {
      if (v instanceof Element) return `<${v.tagName.toLowerCase()}${v.id ? `#${v.id}` : ''}>`;
      return v.nodeName;
    }
    if (v instanceof Error) return { name: v.name, message: v.message };
    if (v instanceof Map) return Object.fromEntries([...v.entries()].map(([k, x]) => [String(k), x]));
    if (v instanceof Set) return [...v];
    if (seen.has(v)) return '[Circular]';
    seen.add(v);
    return v;
  };
  let json: string | undefined;
  try {
    json = JSON.stringify(value, replacer);
  } catch (e) {
    return { ok: false, kind: 'threw', message: `the value could not be turned into JSON (${describeError(e)})` };
  }
  if (json === undefined) return { ok: true, json: 'undefined' };
  if (json.length > MAX) return { ok: false, kind: 'too_large', message: `The value's JSON is ${json.length} characters, over the ${MAX} limit. Return a smaller part of it.` };
  return { ok: true, json };
}

function optString(p: P, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new TetherError('bad_request', `${key} must be a string.`);
  return v;
}

/** Runs an existing action (click, type) after refusing a restricted addressed tab. */
export async function scriptableFirst<T>(p: P, run: () => Promise<T>): Promise<T> {
  await checkScriptable(tabParams(p).tab);
  return run();
}

/** Runs a content action on the addressed tab (or the ref's), refusing restricted pages first. */
async function pageAct(p: P, msg: Parameters<typeof act>[1], d: number): Promise<PageResult> {
  const tab = tabParams(p).tab;
  await checkScriptable(tab);
  return act(tab, msg, d);
}

export async function checkScriptable(tab: number | undefined): Promise<void> {
  const t = await requireTab(tab);
  const info = await chrome.tabs.get(t.tabId);
  const url = info.url || info.pendingUrl || '';
  if (isRestrictedUrl(url)) throw restrictedPage(url);
}

