// Mouse buttons, click counts, modifier keys and points: the event sequences
// Chrome dispatches for a real mouse (UI Events and Pointer Events specs),
// and what lies under a point of the viewport, through open and closed
// shadow roots and same-origin frames.
import { TetherError } from '../shared/errors';
import type { MouseButton, ViewportPoint } from '../shared/messages';
import { shadowRootOf } from './shadow';

/** How a click is made: which button, how many presses, which keys are held. */
export interface ClickOptions {
  button?: MouseButton;
  /** 1 (default) or 2: a double-click. */
  count?: number;
  /** Held keys: Alt, Control, Meta, Shift. */
  modifiers?: string[];
}

/** MouseEvent.button, and the MouseEvent.buttons bit, of each button. */
const BUTTONS: Record<MouseButton, { button: number; buttons: number }> = {
  left: { button: 0, buttons: 1 },
  middle: { button: 1, buttons: 4 },
  right: { button: 2, buttons: 2 },
};

/** The modifier flags of a MouseEvent init for the held keys. */
export function modifierFlags(modifiers: string[] = []): { altKey: boolean; ctrlKey: boolean; metaKey: boolean; shiftKey: boolean } {
  return {
    altKey: modifiers.includes('Alt'),
    ctrlKey: modifiers.includes('Control'),
    metaKey: modifiers.includes('Meta'),
    shiftKey: modifiers.includes('Shift'),
  };
}

/**
 * Dispatches what Chrome dispatches when a person moves the mouse to (x, y)
 * on target and presses and releases a button count times:
 *
 *   pointerover, mouseover, pointermove, mousemove, then for each press n:
 *   pointerdown, mousedown (detail n), [right: contextmenu], pointerup,
 *   mouseup (detail n), then click (left), auxclick (middle; right when the
 *   page cancelled contextmenu, as no native menu then takes the release),
 *   all with detail n; after the second left press, dblclick (detail 2).
 *
 * A cancelled pointerdown suppresses mousedown and mouseup, not the click
 * (Pointer Events, compatibility mouse events). A mousedown the page does
 * not cancel moves the focus (onMouseDown). contextmenu fires after
 * mousedown, as on Linux and macOS. Clicks run the activation behaviour of
 * links, buttons and checkboxes, as today's clicks do.
 */
export function pressAt(target: Element, x: number, y: number, opts: ClickOptions = {}, onMouseDown?: () => void): void {
  const doc = target.ownerDocument;
  const view = doc.defaultView!;
  const { button, buttons } = BUTTONS[opts.button ?? 'left'];
  const count = Math.max(1, Math.min(opts.count ?? 1, 3));
  const base = { bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, screenX: x, screenY: y, view, ...modifierFlags(opts.modifiers) };
  const pointer = { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true, width: 1, height: 1 };
  const PointerEv = view.PointerEvent ?? view.MouseEvent;
  target.dispatchEvent(new PointerEv('pointerover', { ...pointer, button: -1, buttons: 0 }));
  target.dispatchEvent(new view.MouseEvent('mouseover', { ...base, button: 0, buttons: 0 }));
  target.dispatchEvent(new PointerEv('pointermove', { ...pointer, button: -1, buttons: 0 }));
  target.dispatchEvent(new view.MouseEvent('mousemove', { ...base, button: 0, buttons: 0 }));
  for (let n = 1; n <= count; n++) {
    if (!target.isConnected) break; // the page removed it: a person's next press would land elsewhere
    const compat = target.dispatchEvent(new PointerEv('pointerdown', { ...pointer, button, buttons, pressure: 0.5 }));
    if (compat) {
      const down = target.dispatchEvent(new view.MouseEvent('mousedown', { ...base, button, buttons, detail: n }));
      if (down) onMouseDown?.();
    }
    let menuCancelled = false;
    if (button === 2) menuCancelled = !target.dispatchEvent(new PointerEv('contextmenu', { ...pointer, button, buttons, pressure: 0.5 }));
    target.dispatchEvent(new PointerEv('pointerup', { ...pointer, button, buttons: 0 }));
    if (compat) target.dispatchEvent(new view.MouseEvent('mouseup', { ...base, button, buttons: 0, detail: n }));
    if (button === 0) target.dispatchEvent(new PointerEv('click', { ...pointer, button, buttons: 0, detail: n }));
    else if (button === 1 || menuCancelled) target.dispatchEvent(new PointerEv('auxclick', { ...pointer, button, buttons: 0, detail: n }));
    if (button === 0 && n === 2) target.dispatchEvent(new view.MouseEvent('dblclick', { ...base, button, buttons: 0, detail: 2 }));
  }
}

/** What lies under a point: an element of this document or a same-origin frame's, or a cross-origin frame to hand the point to. */
export type PointHit =
  | { kind: 'element'; el: Element; x: number; y: number }
  | { kind: 'frame'; frame: HTMLIFrameElement | HTMLFrameElement; x: number; y: number };

/**
 * The element at (x, y) of doc's viewport, looking into open and closed
 * shadow roots and same-origin frames (x and y then become the frame's);
 * a cross-origin frame is returned with the point in its own viewport.
 * Throws bad_request for a point outside the viewport or on nothing.
 */
export function elementAtPoint(doc: Document, x: number, y: number): PointHit {
  const view = doc.defaultView!;
  if (x < 0 || y < 0 || x >= view.innerWidth || y >= view.innerHeight) {
    throw new TetherError(
      'bad_request',
      `The point (${round(x)}, ${round(y)}) is outside the viewport (${view.innerWidth}×${view.innerHeight} CSS px). Take a new browser_take_screenshot and use its coordinates; for a point of a full-page screenshot pass full_page: true.`,
    );
  }
  let el = doc.elementFromPoint(x, y);
  if (!el) throw new TetherError('bad_request', `Nothing is at (${round(x)}, ${round(y)}) in the viewport. Take a new screenshot and pick a point on the page.`);
  for (let depth = 0; depth < 32; depth++) {
    const root = shadowRootOf(el);
    const inner = root?.elementFromPoint(x, y);
    if (!inner || inner === el) break;
    el = inner;
  }
  if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') {
    const frame = el as HTMLIFrameElement;
    const r = frame.getBoundingClientRect();
    const style = view.getComputedStyle(frame);
    const fx = x - r.left - frame.clientLeft - (parseFloat(style.paddingLeft) || 0);
    const fy = y - r.top - frame.clientTop - (parseFloat(style.paddingTop) || 0);
    let inner: Document | null = null;
    try {
      inner = frame.contentDocument;
    } catch {
      inner = null;
    }
    if (inner?.defaultView && inner.documentElement) return elementAtPoint(inner, fx, fy);
    return { kind: 'frame', frame, x: fx, y: fy };
  }
  return { kind: 'element', el, x, y };
}

/** The element at a point of doc's viewport; a cross-origin frame there is refused (the service worker forwards points to those frames first). */
export function elementAt(doc: Document, p: ViewportPoint): { el: Element; x: number; y: number } {
  const hit = elementAtPoint(doc, p.x, p.y);
  if (hit.kind === 'frame') {
    throw new TetherError('not_interactable', `The point (${round(p.x)}, ${round(p.y)}) is on a frame whose page this frame cannot reach. Take a new browser_snapshot and retry.`);
  }
  return hit;
}

function round(n: number): number {
  return Math.round(n * 10) / 10;
}
