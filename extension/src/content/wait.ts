// wait_for: resolves when text appears in (or disappears from) the page's
// visible text, or after a time. A MutationObserver re-checks after changes
// (throttled), plus one check at the start.
import { TetherError } from '../shared/errors';

export interface WaitSpec {
  text?: string;
  textGone?: string;
  /** With text/textGone: the wait's limit is the caller's timeout. Alone: just wait. */
  timeMs?: number;
  /** How long to wait at most before failing with timeout, in ms. */
  limitMs: number;
}

const CHECK_EVERY_MS = 100;

function normalize(s: string): string {
  return s.replace(/\s+/g, ' ').trim().toLowerCase();
}

/** The document's visible text (innerText skips hidden content), same-origin iframes included. */
export function visibleText(doc: Document): string {
  const body = doc.body ?? doc.documentElement;
  if (!body) return '';
  let text = (body as HTMLElement).innerText ?? body.textContent ?? '';
  for (const frame of Array.from(doc.querySelectorAll('iframe,frame'))) {
    try {
      const sub = (frame as HTMLIFrameElement).contentDocument;
      if (sub) text += '\n' + visibleText(sub);
    } catch {
      // Cross-origin: not readable from here.
    }
  }
  return text;
}

export function waitFor(doc: Document, spec: WaitSpec): Promise<void> {
  const view = doc.defaultView!;
  const text = spec.text ? normalize(spec.text) : '';
  const gone = spec.textGone ? normalize(spec.textGone) : '';
  const met = () => {
    const page = normalize(visibleText(doc));
    return (!text || page.includes(text)) && (!gone || !page.includes(gone));
  };
  if (!text && !gone) {
    const ms = Math.min(spec.timeMs ?? 0, spec.limitMs);
    return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
  }
  return new Promise((resolve, reject) => {
    let last = 0;
    let pending: ReturnType<typeof setTimeout> | undefined;
    const done = (err?: Error) => {
      observer.disconnect();
      clearTimeout(pending);
      clearTimeout(limit);
      if (err) reject(err);
      else resolve();
    };
    const check = () => {
      pending = undefined;
      last = Date.now();
      if (met()) done();
    };
    const observer = new view.MutationObserver(() => {
      if (pending) return;
      pending = setTimeout(check, Math.max(0, last + CHECK_EVERY_MS - Date.now()));
    });
    const limit = setTimeout(() => {
      if (met()) return done();
      const what = [text && `the text ${JSON.stringify(spec.text)} to appear`, gone && `the text ${JSON.stringify(spec.textGone)} to disappear`].filter(Boolean).join(' and ');
      done(new TetherError('timeout', `Waited ${(spec.limitMs / 1000).toFixed(1)} s for ${what}; it did not happen. Call browser_snapshot to see the page as it is now.`));
    }, Math.max(0, spec.limitMs));
    observer.observe(doc, { subtree: true, childList: true, characterData: true, attributes: true });
    check();
  });
}
