// The viewport, for trusted input and screenshots: where it is and how big
// the page is (viewport), scrolling it to a point (scroll_to), with the fixed
// and sticky elements hidden between the slices of a full-page screenshot.
import type { ViewportInfo } from '../shared/messages';

/**
 * The viewport, with el's box when given: el is scrolled into view first
 * (centred when it fits) unless it is in view already.
 */
export async function viewportOf(doc: Document, el?: Element): Promise<ViewportInfo> {
  if (el) {
    const r = el.getBoundingClientRect();
    const view = doc.defaultView!;
    const inView = r.top >= 0 && r.left >= 0 && r.bottom <= view.innerHeight && r.right <= view.innerWidth;
    if (!inView) el.scrollIntoView?.({ block: r.height <= view.innerHeight ? 'center' : 'start', inline: 'nearest', behavior: 'instant' });
    await frames(doc, 2);
  }
  return viewportInfo(doc, el);
}

/** Scrolls the page to (x, y) and answers the viewport; hideFixed true hides fixed and sticky elements, false shows them again. */
export async function scrollViewportTo(doc: Document, x: number, y: number, hide?: boolean): Promise<ViewportInfo> {
  if (hide === true) hideFixed(doc);
  else if (hide === false) restoreFixed();
  doc.defaultView!.scrollTo({ left: x, top: y, behavior: 'instant' });
  await frames(doc, 2);
  return viewportInfo(doc);
}

/** Waits n animation frames (or, when frames do not run, a short time). */
function frames(doc: Document, n: number): Promise<void> {
  const view = doc.defaultView!;
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, 100 * n);
    const step = (left: number) => {
      if (left === 0) {
        clearTimeout(timer);
        resolve();
      } else view.requestAnimationFrame(() => step(left - 1));
    };
    if (typeof view.requestAnimationFrame === 'function') step(n);
  });
}

/** Where the page's viewport is (and el's box in it, through frames), in CSS pixels. */
function viewportInfo(doc: Document, el?: Element): ViewportInfo {
  const view = doc.defaultView!;
  const root = doc.documentElement;
  const info: ViewportInfo = {
    width: view.innerWidth,
    height: view.innerHeight,
    scrollX: view.scrollX,
    scrollY: view.scrollY,
    scrollWidth: Math.max(root.scrollWidth, doc.body?.scrollWidth ?? 0),
    scrollHeight: Math.max(root.scrollHeight, doc.body?.scrollHeight ?? 0),
    dpr: view.devicePixelRatio || 1,
  };
  if (el) {
    const r = el.getBoundingClientRect();
    let x = r.left;
    let y = r.top;
    for (let v: Window | null = el.ownerDocument.defaultView; v && v.frameElement; v = v.parent) {
      const frame = v.frameElement as HTMLElement;
      const fr = frame.getBoundingClientRect();
      x += fr.left + frame.clientLeft;
      y += fr.top + frame.clientTop;
    }
    info.box = { x, y, width: r.width, height: r.height };
  }
  return info;
}

// Fixed and sticky elements repeat in every slice of a stitched screenshot;
// they are hidden after the first slice and restored at the end.
let hidden: { el: HTMLElement; visibility: string; priority: string }[] = [];

function hideFixed(doc: Document): void {
  if (hidden.length > 0) return;
  const view = doc.defaultView!;
  for (const el of Array.from(doc.querySelectorAll<HTMLElement>('body *'))) {
    const pos = view.getComputedStyle(el).position;
    if (pos === 'fixed' || pos === 'sticky') {
      hidden.push({ el, visibility: el.style.getPropertyValue('visibility'), priority: el.style.getPropertyPriority('visibility') });
      el.style.setProperty('visibility', 'hidden', 'important');
    }
  }
}

function restoreFixed(): void {
  for (const h of hidden) h.el.style.setProperty('visibility', h.visibility, h.priority);
  hidden = [];
}
