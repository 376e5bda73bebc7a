// Scrolling the page or an inner container, by pixels or to an edge, or
// bringing an element into view. A content script cannot send a real wheel,
// and its End/PageDown keys have no default action, so scrolling sets the
// scroll position itself; the browser then fires `scroll` at the next
// rendering step, which is what virtualized lists and infinite scroll listen
// to. Chrome runs no rendering steps in a hidden tab (a background tab, a
// minimized window): there the scroll event would wait until the tab is
// shown, so it is dispatched here instead, and the report says the tab was
// hidden (what the page draws on an animation frame is not drawn there).
import type { ScrollReport } from '../protocol.gen';
import { TetherError } from '../shared/errors';

export type ScrollTo = 'top' | 'bottom' | 'left' | 'right' | 'view';

export interface ScrollRequest {
  /** The container (or an element inside it); the element to show with to "view"; none: the page. */
  el?: Element;
  to?: ScrollTo;
  dx: number;
  dy: number;
}

/** How long a visible tab may take to fire the scroll event (it fires on the next frame). */
const SCROLL_EVENT_MS = 250;

type Axis = 'x' | 'y' | 'any';

/** The element whose scroll position is the document's (the page). */
function pageScroller(doc: Document): Element {
  return doc.scrollingElement ?? doc.documentElement;
}

function isPage(el: Element): boolean {
  const doc = el.ownerDocument;
  return el === pageScroller(doc) || el === doc.documentElement || el === doc.body;
}

/** True when a user could scroll el on axis: it overflows and its overflow style lets it scroll. */
export function scrollable(el: Element, axis: Axis): boolean {
  if (isPage(el)) {
    const s = pageScroller(el.ownerDocument);
    const view = el.ownerDocument.defaultView!;
    const y = s.scrollHeight > view.innerHeight + 1;
    const x = s.scrollWidth > view.innerWidth + 1;
    return axis === 'y' ? y : axis === 'x' ? x : x || y;
  }
  const style = el.ownerDocument.defaultView!.getComputedStyle(el);
  const can = (overflow: string, size: number, client: number) => size > client + 1 && /auto|scroll|overlay/.test(overflow);
  const y = can(style.overflowY, el.scrollHeight, el.clientHeight);
  const x = can(style.overflowX, el.scrollWidth, el.clientWidth);
  return axis === 'y' ? y : axis === 'x' ? x : x || y;
}

/** el's parent, through shadow roots to their hosts. */
function parentOf(el: Element): Element | null {
  if (el.parentElement) return el.parentElement;
  const root = el.getRootNode();
  return (root as ShadowRoot).host ?? null;
}

/** The nearest scroll container of el (el included) on axis, or the page. */
export function scrollContainer(el: Element, axis: Axis): Element {
  for (let n: Element | null = el; n; n = parentOf(n)) {
    if (isPage(n)) break;
    if (scrollable(n, axis)) return n;
  }
  return pageScroller(el.ownerDocument);
}

/** The scroll containers an element sits in, nearest first, the page last. */
function containers(el: Element): Element[] {
  const out: Element[] = [];
  for (let n: Element | null = parentOf(el); n; n = parentOf(n)) {
    if (isPage(n)) break;
    if (scrollable(n, 'any')) out.push(n);
  }
  out.push(pageScroller(el.ownerDocument));
  return out;
}

interface Position {
  left: number;
  top: number;
}

function position(el: Element): Position {
  if (isPage(el)) {
    const view = el.ownerDocument.defaultView!;
    return { left: view.scrollX, top: view.scrollY };
  }
  return { left: el.scrollLeft, top: el.scrollTop };
}

/** Where scroll events for el's scrolling are fired: the document for the page. */
function eventTarget(el: Element): EventTarget {
  return isPage(el) ? el.ownerDocument : el;
}

/** A record of the content under a container: its elements, and the text of those without element children. */
function contentOf(root: Element): Map<Element, string> {
  const out = new Map<Element, string>();
  const base = isPage(root) ? (root.ownerDocument.body ?? root) : root;
  for (const el of Array.from(base.querySelectorAll('*'))) out.set(el, el.firstElementChild ? '' : (el.textContent ?? ''));
  return out;
}

/**
 * Scrolls as req asks, waits for the page to render what scrolled in, and
 * reports how far the container moved and what content came and went.
 */
export async function scroll(doc: Document, req: ScrollRequest): Promise<ScrollReport> {
  const { el, to, dx, dy } = req;
  if (to === 'view' && !el) throw new TetherError('bad_request', 'to "view" needs the ref of the element to bring into view.');
  if (!to && dx === 0 && dy === 0) throw new TetherError('bad_request', 'Pass dy or dx (pixels; negative scrolls up or left), or to: top, bottom, left, right or view.');
  const axis: Axis = to === 'top' || to === 'bottom' || (!to && dx === 0) ? 'y' : to === 'left' || to === 'right' || (!to && dy === 0) ? 'x' : 'any';
  const owner = el?.ownerDocument ?? doc;
  const container = to === 'view' ? containers(el!)[0]! : el ? scrollContainer(el, axis) : pageScroller(owner);
  const page = isPage(container);
  // Every container that may move (scrollIntoView moves all of them).
  const watched = to === 'view' ? containers(el!) : [container];
  const before = watched.map(position);
  const heightBefore = container.scrollHeight;
  const content = contentOf(container);
  const view = owner.defaultView!;
  const fired = new Set<Element>();
  const listeners = watched.map((c) => {
    const target = eventTarget(c);
    const on = () => fired.add(c);
    target.addEventListener('scroll', on, { capture: true, passive: true });
    return () => target.removeEventListener('scroll', on, { capture: true });
  });
  try {
    if (to === 'view') {
      el!.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
    } else if (to) {
      const left = to === 'left' ? 0 : to === 'right' ? container.scrollWidth : undefined;
      const top = to === 'top' ? 0 : to === 'bottom' ? container.scrollHeight : undefined;
      (page ? view : container).scrollTo({ left, top, behavior: 'instant' });
    } else {
      (page ? view : container).scrollBy({ left: dx, top: dy, behavior: 'instant' });
    }
    const moved = watched.filter((c, i) => {
      const p = position(c);
      return p.left !== before[i]!.left || p.top !== before[i]!.top;
    });
    const hidden = owner.visibilityState !== 'visible';
    if (moved.length > 0) {
      if (!hidden) await until(() => moved.every((c) => fired.has(c)), SCROLL_EVENT_MS);
      // Hidden, or the frame never came: the page still needs its scroll event.
      for (const c of moved) {
        if (!fired.has(c)) eventTarget(c).dispatchEvent(new view.Event('scroll', { bubbles: isPage(c) }));
      }
    }
    const rendered = await frames(view, 2);
    await quiet(owner);
    const after = position(container);
    const first = before[0]!;
    let added = 0;
    let removed = 0;
    const now = contentOf(container);
    for (const [n, text] of now) {
      const old = content.get(n);
      if (old === undefined || old !== text) added++;
    }
    for (const n of content.keys()) if (!now.has(n)) removed++;
    const report: ScrollReport = {
      page,
      dx: Math.round(after.left - first.left),
      dy: Math.round(after.top - first.top),
      left: Math.round(after.left),
      top: Math.round(after.top),
      width: container.scrollWidth,
      height: container.scrollHeight,
      viewWidth: page ? view.innerWidth : container.clientWidth,
      viewHeight: page ? view.innerHeight : container.clientHeight,
      added,
      removed,
      grew: Math.max(0, container.scrollHeight - heightBefore),
    };
    if (hidden || !rendered) report.hidden = true;
    return report;
  } finally {
    for (const off of listeners) off();
  }
}

/** Resolves when cond holds (checked every frame or 16 ms), or after ms. */
function until(cond: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  return new Promise((resolve) => {
    const check = () => {
      if (cond() || Date.now() >= end) resolve();
      else setTimeout(check, 16);
    };
    check();
  });
}

/** Waits n animation frames; false when they did not run within 100 ms each (a hidden tab). */
function frames(view: Window, n: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (typeof view.requestAnimationFrame !== 'function') {
      resolve(false);
      return;
    }
    const timer = setTimeout(() => resolve(false), 100 * n);
    const step = (left: number) => {
      if (left === 0) {
        clearTimeout(timer);
        resolve(true);
      } else view.requestAnimationFrame(() => step(left - 1));
    };
    step(n);
  });
}

/** Waits until the DOM has not changed for 100 ms (1.5 s at most): the page fetched or drew what scrolled in. */
function quiet(doc: Document): Promise<void> {
  const view = doc.defaultView!;
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout>;
    const done = () => {
      clearTimeout(timer);
      clearTimeout(cap);
      observer.disconnect();
      resolve();
    };
    const observer = new view.MutationObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(done, 100);
    });
    observer.observe(doc, { subtree: true, childList: true, characterData: true });
    timer = setTimeout(done, 100);
    const cap = setTimeout(done, 1500);
  });
}
