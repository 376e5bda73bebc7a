// Drag and drop from one element onto another. Draggable sources get the
// HTML5 sequence with one shared DataTransfer (dragstart, drag, dragenter,
// dragover, drop, dragend); other sources get a pointer drag (pointerdown,
// moves, pointerup), which pointer-based sortable libraries listen for.
import { TetherError } from '../shared/errors';
import type { ViewportPoint } from '../shared/messages';
import { elementAt, elementAtPoint } from './pointer';
import { describe } from './snapshot';

interface Point { x: number; y: number }

function center(el: Element): Point {
  el.scrollIntoView?.({ block: 'nearest', inline: 'nearest', behavior: 'instant' });
  const r = el.getBoundingClientRect();
  return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
}

/** The element under p when it is inside el, else el. */
function targetAt(el: Element, p: Point): Element {
  const root = el.getRootNode() as Document | ShadowRoot;
  const hit = typeof root.elementFromPoint === 'function' ? root.elementFromPoint(p.x, p.y) : null;
  return hit && el.contains(hit) ? hit : el;
}

/** True when el (or an ancestor) starts an HTML5 drag. */
export function isHtml5Draggable(el: Element): boolean {
  const d = el.closest('[draggable]');
  if (d && d.getAttribute('draggable') === 'true') return true;
  if (d && d.getAttribute('draggable') === 'false') return false;
  // Links and images are draggable by default.
  return !!el.closest('a[href],img');
}

export function drag(from: Element, to: Element): void {
  if (from === to || from.contains(to)) {
    throw new TetherError('bad_request', `Cannot drag the ${describe(from)} onto ${from === to ? 'itself' : 'an element inside it'}. Pass a different toRef.`);
  }
  if (isHtml5Draggable(from)) html5Drag(from, to);
  else pointerDrag(from, to);
}

function html5Drag(from: Element, to: Element): void {
  const view = from.ownerDocument.defaultView!;
  const source = from.closest('[draggable="true"]') ?? from;
  const start = center(from);
  const mouse = (type: string, p: Point, target: Element, extra: MouseEventInit = {}) =>
    target.dispatchEvent(new view.MouseEvent(type, { bubbles: true, cancelable: true, composed: true, view, clientX: p.x, clientY: p.y, screenX: p.x, screenY: p.y, button: 0, ...extra }));
  const PointerEv = view.PointerEvent ?? view.MouseEvent;
  const pointer = (type: string, p: Point, target: Element, buttons: number) =>
    target.dispatchEvent(new PointerEv(type, { bubbles: true, cancelable: true, composed: true, view, clientX: p.x, clientY: p.y, pointerId: 1, pointerType: 'mouse', isPrimary: true, button: 0, buttons }));
  const fromTarget = targetAt(from, start);
  pointer('pointerdown', start, fromTarget, 1);
  mouse('mousedown', start, fromTarget, { buttons: 1 });

  const dt = new view.DataTransfer();
  const dragEvent = (type: string, p: Point, target: Element): boolean => {
    const init = { bubbles: true, cancelable: true, composed: true, view, clientX: p.x, clientY: p.y, screenX: p.x, screenY: p.y, button: 0, buttons: 1, dataTransfer: dt };
    let ev: Event;
    try {
      ev = new view.DragEvent(type, init);
    } catch {
      ev = new view.MouseEvent(type, init);
    }
    // Some DOMs ignore dataTransfer in the init dictionary.
    if ((ev as DragEvent).dataTransfer !== dt) Object.defineProperty(ev, 'dataTransfer', { value: dt });
    return target.dispatchEvent(ev);
  };

  if (!dragEvent('dragstart', start, source)) {
    pointer('pointerup', start, fromTarget, 0);
    mouse('mouseup', start, fromTarget);
    throw new TetherError('not_interactable', `The page cancelled dragging the ${describe(from)} (its dragstart handler called preventDefault). Call browser_snapshot to see whether something else must be done first.`);
  }
  dragEvent('drag', start, source);
  const end = center(to);
  const toTarget = targetAt(to, end);
  dragEvent('dragenter', end, toTarget);
  dragEvent('drag', end, source);
  // A drop target accepts only when its dragover handler cancels the event.
  const accepted = !dragEvent('dragover', end, toTarget);
  if (accepted) {
    if (dt.dropEffect === 'none') dt.dropEffect = dt.effectAllowed === 'copy' || dt.effectAllowed === 'link' ? (dt.effectAllowed as DataTransfer['dropEffect']) : 'move';
    dragEvent('drop', end, toTarget);
  } else {
    dragEvent('dragleave', end, toTarget);
    dt.dropEffect = 'none';
  }
  dragEvent('dragend', end, source);
  if (!accepted) {
    throw new TetherError('not_interactable', `The ${describe(to)} did not accept the drop (no dragover handler called preventDefault), so nothing was dropped. Drag onto the drop zone itself: call browser_snapshot and pick the element that accepts drops.`);
  }
}

function pointerDrag(from: Element, to: Element): void {
  const view = from.ownerDocument.defaultView!;
  const PointerEv = view.PointerEvent ?? view.MouseEvent;
  const start = center(from);
  const fromTarget = targetAt(from, start);
  const send = (type: string, p: Point, target: Element, buttons: number) => {
    const base = { bubbles: true, cancelable: true, composed: true, view, clientX: p.x, clientY: p.y, screenX: p.x, screenY: p.y, button: 0, buttons };
    target.dispatchEvent(new PointerEv(`pointer${type}`, { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true }));
    target.dispatchEvent(new view.MouseEvent(`mouse${type}`, base));
  };
  send('over', start, fromTarget, 0);
  send('move', start, fromTarget, 0);
  send('down', start, fromTarget, 1);
  const end = center(to);
  // Several moves: sortable libraries start dragging only after a few pixels.
  const steps = 8;
  for (let i = 1; i <= steps; i++) {
    const p = { x: start.x + ((end.x - start.x) * i) / steps, y: start.y + ((end.y - start.y) * i) / steps };
    const root = from.getRootNode() as Document | ShadowRoot;
    const under = (typeof root.elementFromPoint === 'function' ? root.elementFromPoint(p.x, p.y) : null) ?? (i === steps ? to : fromTarget);
    send('move', p, under, 1);
  }
  send('up', end, targetAt(to, end), 0);
}

/**
 * A pointer drag between two points of doc's viewport (maps, sliders,
 * signature pads): over, move and down at from, moves about every 10 CSS
 * pixels (8 to 30 of them) to the element under each point, up at to.
 * Both points must be in doc (the service worker routes them to one frame).
 */
export function dragPoints(doc: Document, from: ViewportPoint, to: ViewportPoint): void {
  const start = elementAt(doc, from);
  const end = elementAt(doc, to);
  if (start.el.ownerDocument !== end.el.ownerDocument) {
    throw new TetherError('bad_request', 'The start and end points of the drag are in different frames, and a drag cannot leave its frame. Pick two points in the same frame.');
  }
  const view = start.el.ownerDocument.defaultView!;
  const PointerEv = view.PointerEvent ?? view.MouseEvent;
  const send = (type: string, p: Point, target: Element, buttons: number) => {
    const base = { bubbles: true, cancelable: true, composed: true, view, clientX: p.x, clientY: p.y, screenX: p.x, screenY: p.y, button: type === 'move' || type === 'over' ? -1 : 0, buttons };
    target.dispatchEvent(new PointerEv(`pointer${type}`, { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true, pressure: buttons ? 0.5 : 0 }));
    target.dispatchEvent(new view.MouseEvent(`mouse${type}`, { ...base, button: Math.max(0, base.button) }));
  };
  const a = { x: start.x, y: start.y };
  const b = { x: end.x, y: end.y };
  send('over', a, start.el, 0);
  send('move', a, start.el, 0);
  send('down', a, start.el, 1);
  const steps = Math.max(8, Math.min(30, Math.ceil(Math.hypot(b.x - a.x, b.y - a.y) / 10)));
  let last = start.el;
  for (let i = 1; i <= steps; i++) {
    const p = { x: a.x + ((b.x - a.x) * i) / steps, y: a.y + ((b.y - a.y) * i) / steps };
    const hit = i === steps ? end : safeHit(start.el.ownerDocument, p);
    if (hit) last = hit.el;
    send('move', p, last, 1);
  }
  send('up', b, end.el, 0);
}

/** The element at a point of the drag's document, or undefined (a frame, or outside). */
function safeHit(doc: Document, p: Point): { el: Element } | undefined {
  try {
    const hit = elementAtPoint(doc, p.x, p.y);
    return hit.kind === 'element' ? hit : undefined;
  } catch {
    return undefined;
  }
}
