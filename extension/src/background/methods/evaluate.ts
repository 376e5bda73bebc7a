// evaluate: runs a JavaScript expression in the page's main world.
import type { EvaluateResult } from '../../protocol.gen';
import { TetherError, restrictedPage } from '../../shared/errors';
import { isRestrictedUrl, withDeadline } from '../content-bridge';
import { requireTab, touch, type SharedTab } from '../shared-tabs';
import { actOn } from '../tab-hooks';
import { str, tabParams, type P } from './params';

export async function evaluateMethod(p: P, d: number): Promise<EvaluateResult> {
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
export type PageEvaluation = { ok: true; json: string } | { ok: false; kind: 'csp' | 'threw'; message: string } | { ok: false; kind: 'too_large'; length: number };

/**
 * Turns evaluateInPage's answer into valueJson, or the error the agent can
 * act on. The answer is made in the page's world, where the page's script
 * may have changed any built-in: its messages (a thrown text, a CSP
 * directive) are the page's words, so an error quotes them as untrusted
 * page text (one JSON string: no line of it can pass for Tether's own), and
 * its numbers are taken as numbers only.
 */
export function evaluationResult(r: unknown): string {
  const res = r as PageEvaluation | undefined;
  if (!res || typeof res !== 'object') throw new TetherError('internal', 'The page gave no evaluation result (it may have navigated while the expression ran). Call browser_snapshot, then retry.');
  if (res.ok) return res.json;
  const quoted = (m: unknown) => JSON.stringify(String(m).slice(0, QUOTE_LIMIT));
  if (res.kind === 'csp') {
    throw new TetherError(
      'restricted_page',
      `This page's Content-Security-Policy forbids evaluating code from strings (no 'unsafe-eval'), so browser_evaluate cannot run here (the browser said, untrusted page text: ${quoted(res.message)}). Read the page with browser_snapshot or browser_read instead.`,
    );
  }
  if (res.kind === 'too_large') {
    const n = Number(res.length);
    const size = Number.isSafeInteger(n) && n > 0 ? `${n} characters` : 'too long';
    throw new TetherError('bad_request', `The value's JSON is ${size}, over the ${EVALUATE_MAX_CHARS} limit. Return a smaller part of it.`);
  }
  throw new TetherError('bad_request', `The expression threw (untrusted page text): ${quoted(res.message)}. Fix the expression and retry.`);
}

/** The longest JSON value browser_evaluate returns, in characters (evaluateInPage has its own copy: it runs in the page). */
export const EVALUATE_MAX_CHARS = 1_000_000;
/** The most of a page's message an error quotes, in characters. */
const QUOTE_LIMIT = 1000;

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
  if (json.length > MAX) return { ok: false, kind: 'too_large', length: json.length };
  return { ok: true, json };
}
