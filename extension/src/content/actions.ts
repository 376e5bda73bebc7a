// DOM actions on one element: click, type, select, hover; then wait for the page to settle.
import { TetherError } from '../shared/errors';
import type { ViewportPoint } from '../shared/messages';
import { elementAt, pressAt, type ClickOptions } from './pointer';
import { deepActiveElement, implicitSubmit, insertText, setRangeValue } from './keys';
import { describe, isDisabledEl, isEditableHost, roleOf } from './snapshot';

/** Input types whose value is text that `type` may replace. */
const TEXT_INPUT_TYPES = new Set([
  'text', 'search', 'email', 'url', 'tel', 'password', 'number',
  'date', 'datetime-local', 'month', 'week', 'time', 'color',
]);

export interface SettleOptions {
  /** How long the DOM must stay unchanged. */
  quietMs: number;
  /** The longest wait. */
  maxMs: number;
}

export const DEFAULT_SETTLE: SettleOptions = { quietMs: 100, maxMs: 1500 };

/** What an action observed while the page settled. */
export interface SettleResult {
  /** A cross-document navigation started: the page is being replaced. */
  navigating: boolean;
  /** The wait ended before the browser drew the action's change (a page that redraws slowly): it draws it next. */
  redrawing?: boolean;
}

/**
 * Clicks el like a user: scrolls it to the middle of the viewport, checks that
 * nothing covers it, then sends pointer and mouse events at a visible point of
 * it (pressAt: the button, count and held keys of opts). A plain click on an
 * <option> of a native select selects it.
 */
export function click(el: Element, opts: ClickOptions = {}): void {
  if (isDisabledEl(el)) {
    throw new TetherError(
      'not_interactable',
      `The ${describe(el)} is disabled, so it cannot be clicked. Call browser_snapshot to see when it becomes enabled, or pick another element.`,
    );
  }
  const select = el.tagName === 'OPTION' ? el.closest('select') : null;
  if (select && (opts.button ?? 'left') === 'left') {
    // Options of a drop-down live in a native popup that page events cannot open.
    const option = el as HTMLOptionElement;
    selectOption(select, [option.value], [option]);
    return;
  }
  const { x, y, target } = clickablePoint(el);
  pressAt(target, x, y, opts, () => focusFor(el));
}

/** Clicks whatever is at a point of doc's viewport (elementAt), as click does. */
export function clickAt(doc: Document, at: ViewportPoint, opts: ClickOptions = {}): void {
  const { el, x, y } = elementAt(doc, at);
  pressAt(el, x, y, opts, () => focusFor(el));
}

/** True when hit is el, inside el (shadow trees included), or a label of el. */
function reaches(el: Element, hit: Element): boolean {
  for (let n: Node | null = hit; n; n = n instanceof ShadowRootLike ? (n as ShadowRoot).host : n.parentNode) {
    if (n === el) return true;
  }
  const labels = (el as HTMLInputElement).labels;
  if (labels) for (const l of Array.from(labels)) if (l.contains(hit)) return true;
  return false;
}
// ShadowRoot may be missing in some DOMs; DocumentFragment with a host is one.
const ShadowRootLike = (globalThis as { ShadowRoot?: typeof ShadowRoot }).ShadowRoot ?? class {};

/** A short description of an element that covers another: role, name and tag. */
function describeCover(el: Element): string {
  const tag = el.tagName.toLowerCase();
  const id = el.id ? `#${el.id}` : '';
  const cls = typeof el.className === 'string' && el.className.trim() ? `.${el.className.trim().split(/\s+/).slice(0, 2).join('.')}` : '';
  return `${describe(el)} (<${tag}${id}${cls}>)`;
}

/**
 * Scrolls el to the middle of the viewport and returns a point of el that is
 * not covered by another element (its centre when possible) and the element
 * there. Throws not_interactable naming the element on top otherwise.
 */
export function clickablePoint(el: Element, what = 'clicked'): { x: number; y: number; target: Element } {
  el.scrollIntoView?.({ block: 'center', inline: 'center', behavior: 'instant' });
  const rect = el.getBoundingClientRect();
  const cx = rect.left + rect.width / 2;
  const cy = rect.top + rect.height / 2;
  const root = el.getRootNode() as Document | ShadowRoot;
  if (rect.width === 0 || rect.height === 0 || typeof root.elementFromPoint !== 'function') return { x: cx, y: cy, target: el };
  const view = el.ownerDocument.defaultView!;
  // The part of el inside the viewport.
  const left = Math.max(rect.left, 0);
  const top = Math.max(rect.top, 0);
  const right = Math.min(rect.right, view.innerWidth || rect.right);
  const bottom = Math.min(rect.bottom, view.innerHeight || rect.bottom);
  const points: [number, number][] = [[cx, cy]];
  if (right > left && bottom > top) {
    points.push([(left + right) / 2, (top + bottom) / 2]);
    for (const [fx, fy] of [[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75], [0.5, 0.15], [0.5, 0.85], [0.1, 0.5], [0.9, 0.5]] as const) {
      points.push([left + (right - left) * fx, top + (bottom - top) * fy]);
    }
  }
  let cover: Element | null = null;
  for (const [x, y] of points) {
    const hit = root.elementFromPoint(x, y);
    if (!hit) continue;
    if (reaches(el, hit)) return { x, y, target: el.contains(hit) ? hit : el };
    cover ??= hit;
  }
  if (!cover) {
    // Nothing reported under any point (outside the viewport or an unrendered DOM).
    return { x: cx, y: cy, target: el };
  }
  if (cover.contains(el) && !visibleToPointer(el)) {
    // el is hidden until its container is hovered (snapshot's [hidden until
    // hover]): the point falls through to the container, and a person's
    // pointer there would reveal el. It gets the events.
    return { x: cx, y: cy, target: el };
  }
  throw new TetherError(
    'not_interactable',
    `The ${describe(el)} cannot be ${what}: another element, ${describeCover(cover)}, is on top of it and would receive the click. Close or move what covers it (often a cookie banner, dialog, overlay or sticky header), or act on the covering element if that is what you meant; then call browser_snapshot and retry.`,
  );
}

/** False when el, or an ancestor, is visibility:hidden (hit testing passes through it). */
function visibleToPointer(el: Element): boolean {
  const style = el.ownerDocument.defaultView?.getComputedStyle(el);
  return !style || (style.visibility !== 'hidden' && style.visibility !== 'collapse');
}

/**
 * The centre of el in the top document's viewport, for trusted input: el is
 * scrolled into view and checked for covering elements first.
 */
export function viewportPoint(el: Element): { x: number; y: number } {
  let { x, y } = clickablePoint(el);
  // Add the offsets of same-origin frames up to the top document.
  for (let view: Window | null = el.ownerDocument.defaultView; view && view.frameElement; view = view.parent) {
    const frame = view.frameElement as HTMLElement;
    const r = frame.getBoundingClientRect();
    x += r.left + frame.clientLeft;
    y += r.top + frame.clientTop;
  }
  return { x, y };
}

/**
 * Selects options of a native <select> by value or visible label and fires
 * input and change. Custom ARIA comboboxes and listboxes are refused with the
 * instruction to click them.
 */
export function selectOption(el: Element, values: string[], exact?: HTMLOptionElement[]): HTMLOptionElement[] {
  const select = (el.tagName === 'OPTION' ? el.closest('select') : el) as HTMLSelectElement | null;
  if (!select || select.tagName !== 'SELECT') {
    const role = roleOf(el);
    const custom = role === 'combobox' || role === 'listbox' || role === 'option' || role === 'menu' || role === 'menuitem';
    throw new TetherError(
      'not_interactable',
      `The ${describe(el)} is not a native <select>${custom ? ` but a custom ARIA ${role}` : ''}, so browser_select_option cannot set it. Operate it by clicking: browser_click it to open the list, call browser_snapshot, then browser_click the option you want.`,
    );
  }
  if (isDisabledEl(select)) {
    throw new TetherError('not_interactable', `The ${describe(select)} is disabled, so no option can be selected. Call browser_snapshot to see when it becomes enabled.`);
  }
  if (values.length === 0) throw new TetherError('bad_request', 'values must name at least one option (its value or visible label).');
  const options = Array.from(select.options);
  const label = (o: HTMLOptionElement) => (o.label || o.text || '').replace(/\s+/g, ' ').trim();
  const chosen = exact ?? values.map((v) => {
    const want = v.replace(/\s+/g, ' ').trim();
    const found =
      options.find((o) => o.value === v) ??
      options.find((o) => label(o) === want) ??
      options.find((o) => label(o).toLowerCase() === want.toLowerCase()) ??
      options.find((o) => o.value.toLowerCase() === want.toLowerCase());
    if (!found) {
      const list = options.slice(0, 30).map((o) => JSON.stringify(label(o))).join(', ');
      throw new TetherError('bad_request', `The ${describe(select)} has no option with the value or label ${JSON.stringify(v)}. Its options: ${list}${options.length > 30 ? ', …' : ''}. Pass one of those labels exactly.`);
    }
    return found;
  });
  if (!select.multiple && chosen.length > 1) {
    throw new TetherError('bad_request', `The ${describe(select)} allows only one selected option, but ${chosen.length} values were given. Pass one value.`);
  }
  const disabled = chosen.find((o) => o.disabled || (o.parentElement?.tagName === 'OPTGROUP' && (o.parentElement as HTMLOptGroupElement).disabled));
  if (disabled) {
    throw new TetherError('not_interactable', `The option ${JSON.stringify(label(disabled))} of the ${describe(select)} is disabled and cannot be selected. Pick another option.`);
  }
  select.scrollIntoView?.({ block: 'center', inline: 'center', behavior: 'instant' });
  select.focus?.({ preventScroll: true });
  if (select.multiple) {
    for (const o of options) o.selected = chosen.includes(o);
  } else {
    chosen[0]!.selected = true;
  }
  const view = select.ownerDocument.defaultView!;
  select.dispatchEvent(new view.Event('input', { bubbles: true, composed: true }));
  select.dispatchEvent(new view.Event('change', { bubbles: true }));
  return chosen;
}

let lastHovered: WeakRef<Element> | undefined;

/**
 * Moves the (untrusted) pointer onto el: leave events on the element hovered
 * before, then over/enter/move at el's centre. CSS :hover needs trusted input.
 */
export function hover(el: Element): void {
  const { x, y, target } = clickablePoint(el, 'hovered');
  moveOnto(target, x, y, el);
}

/** Moves the (untrusted) pointer to a point of doc's viewport (elementAt), as hover does. */
export function hoverAt(doc: Document, at: ViewportPoint): void {
  const { el, x, y } = elementAt(doc, at);
  moveOnto(el, x, y, el.ownerDocument.documentElement);
}

/** Leave events on the element hovered before, then over, enter (from top down to target) and move on target at (x, y). */
function moveOnto(target: Element, x: number, y: number, top: Element): void {
  const view = target.ownerDocument.defaultView!;
  const base = { bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, screenX: x, screenY: y, view, button: 0, buttons: 0 };
  const pointer = { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true, width: 1, height: 1 };
  const PointerEv = view.PointerEvent ?? view.MouseEvent;
  const prev = lastHovered?.deref();
  if (prev && prev.isConnected && prev !== target && !prev.contains(target)) {
    const pv = prev.ownerDocument.defaultView!;
    const PEv = pv.PointerEvent ?? pv.MouseEvent;
    prev.dispatchEvent(new PEv('pointerout', { ...pointer, relatedTarget: target }));
    prev.dispatchEvent(new PEv('pointerleave', { ...pointer, bubbles: false, relatedTarget: target }));
    prev.dispatchEvent(new pv.MouseEvent('mouseout', { ...base, relatedTarget: target }));
    prev.dispatchEvent(new pv.MouseEvent('mouseleave', { ...base, bubbles: false, relatedTarget: target }));
  }
  // Enter events go to every element from top down to the one under the pointer.
  const entered: Element[] = [];
  for (let n: Element | null = target; n; n = n === top ? null : n.parentElement) entered.unshift(n);
  target.dispatchEvent(new PointerEv('pointerover', pointer));
  for (const n of entered) n.dispatchEvent(new PointerEv('pointerenter', { ...pointer, bubbles: false }));
  target.dispatchEvent(new view.MouseEvent('mouseover', base));
  for (const n of entered) n.dispatchEvent(new view.MouseEvent('mouseenter', { ...base, bubbles: false }));
  target.dispatchEvent(new PointerEv('pointermove', pointer));
  target.dispatchEvent(new view.MouseEvent('mousemove', base));
  lastHovered = new WeakRef(target);
}

/** Moves focus the way a mousedown would: to el or its nearest focusable ancestor. */
function focusFor(el: Element): void {
  const focusable = el.closest('a[href],button,input,select,textarea,summary,[tabindex],[contenteditable=""],[contenteditable="true"]');
  (focusable as HTMLElement | null)?.focus?.({ preventScroll: true });
}

/**
 * Replaces the value of an editable element with text in a way that
 * framework-controlled inputs (React, Vue…) notice: the native value setter,
 * then input and change events. With submit, presses Enter and submits the form.
 */
export function typeText(el: Element, text: string, submit: boolean): void {
  const view = el.ownerDocument.defaultView!;
  if (isDisabledEl(el)) {
    throw new TetherError('not_interactable', `The ${describe(el)} is disabled, so it cannot be typed into. Call browser_snapshot to see when it becomes enabled, or pick another field.`);
  }
  if (el instanceof view.HTMLInputElement && el.type === 'range') {
    setRange(el, text);
  } else if (el instanceof view.HTMLInputElement || el instanceof view.HTMLTextAreaElement) {
    if (el instanceof view.HTMLInputElement && !TEXT_INPUT_TYPES.has(el.type)) {
      throw new TetherError('not_interactable', `The ${describe(el)} is an input of type "${el.type}", which takes no typed text. Use browser_click on it instead, or type into a text field.`);
    }
    if (el.readOnly) {
      throw new TetherError('not_interactable', `The ${describe(el)} is read-only, so it cannot be typed into. Pick another field from browser_snapshot.`);
    }
    el.scrollIntoView?.({ block: 'center', inline: 'center', behavior: 'instant' });
    el.focus({ preventScroll: true });
    const proto = el instanceof view.HTMLTextAreaElement ? view.HTMLTextAreaElement.prototype : view.HTMLInputElement.prototype;
    // The prototype's setter, not el.value: frameworks wrap the instance's
    // value property to track what they set themselves.
    const native = Object.getOwnPropertyDescriptor(proto, 'value')!;
    native.set!.call(el, text);
    if (text !== '' && native.get!.call(el) === '') {
      throw new TetherError('not_interactable', `The ${describe(el)} did not accept ${el.type === 'password' ? 'the text' : JSON.stringify(text)} (an input of type "${el.type}" takes ${FORMATS[el.type] ?? 'its own format'}). Retry with a value in that format.`);
    }
    el.dispatchEvent(new view.InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data: text }));
    el.dispatchEvent(new view.Event('change', { bubbles: true }));
  } else if (el instanceof view.HTMLElement && el.isContentEditable) {
    const host = editableHostOf(el);
    host.scrollIntoView?.({ block: 'center', inline: 'center', behavior: 'instant' });
    host.focus({ preventScroll: true });
    const selection = view.getSelection();
    const range = el.ownerDocument.createRange();
    range.selectNodeContents(host);
    selection?.removeAllRanges();
    selection?.addRange(range);
    const doc = el.ownerDocument;
    const done = text === '' ? safeExec(doc, 'delete') : safeExec(doc, 'insertText', text);
    if (!done) {
      // No editing commands (e.g. a DOM without them): set the text directly.
      host.textContent = text;
      host.dispatchEvent(new view.InputEvent('input', { bubbles: true, composed: true, inputType: 'insertText', data: text }));
    }
  } else {
    throw new TetherError('not_interactable', `The ${describe(el)} is not an editable field. Type into a textbox, searchbox or combobox ref from browser_snapshot, or click this element instead.`);
  }
  if (submit) pressEnter(el);
}

/**
 * Sets a range input to the number text, as the browser does when the user
 * moves the thumb there: the value is clamped to min/max and snapped to the
 * step (the value setter's sanitization), and input and change fire when it
 * changed.
 */
function setRange(el: HTMLInputElement, text: string): void {
  const n = Number(text.trim());
  if (text.trim() === '' || !Number.isFinite(n)) {
    // min and max are the page's text: only a number of theirs is said (the browser's defaults otherwise).
    const bound = (v: string, d: number) => (v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : d);
    throw new TetherError('not_interactable', `The ${describe(el)} is a slider: type a number from ${bound(el.min, 0)} to ${bound(el.max, 100)}, not ${JSON.stringify(text)}.`);
  }
  if (el.readOnly) throw new TetherError('not_interactable', `The ${describe(el)} is read-only, so its value cannot be set.`);
  el.scrollIntoView?.({ block: 'center', inline: 'center', behavior: 'instant' });
  el.focus({ preventScroll: true });
  setRangeValue(el, n);
}

function editableHostOf(el: HTMLElement): HTMLElement {
  let host = el;
  while (host.parentElement && (host.parentElement as HTMLElement).isContentEditable) host = host.parentElement as HTMLElement;
  return isEditableHost(host) ? host : el;
}

function safeExec(doc: Document, command: string, value?: string): boolean {
  try {
    return typeof doc.execCommand === 'function' && doc.execCommand(command, false, value);
  } catch {
    return false;
  }
}

/** Sends Enter; if no handler cancels it, submits the input's form (implicit submission). */
function pressEnter(el: Element): void {
  const view = el.ownerDocument.defaultView!;
  const init = { key: 'Enter', code: 'Enter', keyCode: 13, which: 13, charCode: 0, bubbles: true, cancelable: true, composed: true, view };
  let allowed = el.dispatchEvent(new view.KeyboardEvent('keydown', init));
  if (allowed) allowed = el.dispatchEvent(new view.KeyboardEvent('keypress', { ...init, charCode: 13 }));
  if (allowed && el instanceof view.HTMLInputElement) implicitSubmit(el);
  if (el.isConnected) el.dispatchEvent(new view.KeyboardEvent('keyup', init));
}

/**
 * Types text into the focused element at its caret, replacing its selection,
 * the way keyboard typing does (no clearing first). With submit, presses Enter.
 */
export function typeFocused(doc: Document, text: string, submit: boolean): void {
  const el = deepActiveElement(doc);
  const editable =
    ((el.tagName === 'INPUT' && TEXT_INPUT_TYPES.has((el as HTMLInputElement).type)) || el.tagName === 'TEXTAREA') && !(el as HTMLInputElement).readOnly && !isDisabledEl(el);
  if (!editable && !(el as HTMLElement).isContentEditable) {
    throw new TetherError('not_interactable', `No editable field has the focus (the focus is on the ${describe(el)}). Pass the ref of the field to browser_type, or browser_click the field first.`);
  }
  if (text !== '') insertText(el, text);
  if (submit) pressEnter(el);
}

/** Example values for input types with a fixed format. */
const FORMATS: Record<string, string> = {
  number: 'a number such as 12 or 3.5',
  date: 'YYYY-MM-DD, e.g. 2024-05-31',
  'datetime-local': 'YYYY-MM-DDThh:mm, e.g. 2024-05-31T14:30',
  month: 'YYYY-MM, e.g. 2024-05',
  week: 'YYYY-Www, e.g. 2024-W22',
  time: 'hh:mm or hh:mm:ss (24-hour), e.g. 14:30',
  color: '#rrggbb, e.g. #ff8800',
};

/**
 * Runs action, then waits until the DOM has not changed for quietMs (at most
 * maxMs), or until a cross-document navigation starts.
 *
 * On a page that redraws slowly (its last long animation frame, within the
 * last minute, spent at least quietMs rendering, as the Long Animation
 * Frames API reports it; Chrome 123+), waiting out quietMs means waiting for
 * a whole redraw: the browser draws the action's change before any timer
 * fires, and on a 100 000-element page that takes most of a second. There
 * the wait ends at the first animation frame after the action, before it is
 * drawn, when nothing changed after the action's own turn (its task, its
 * promises and the 0-ms timers it set); a change after that turn starts the
 * quiet window as everywhere else. Layout reads (the snapshot's) stay cheap
 * before the redraw; only hit tests and drawing pay it. Where rAF does not
 * run (a background tab), the quiet window applies.
 *
 * A hidden page (a background tab: Chrome draws nothing there) has its
 * timers aligned to whole seconds (https://developer.chrome.com/blog/timer-throttling-in-chrome-88),
 * which stretched a 100 ms quiet window to anywhere up to a second; there
 * the window is timed by more.delay (the service worker's timer). The action runs exactly
 * once either way; its errors are thrown after the watchers are removed.
 */
export function settle(doc: Document, action: () => void, opts: SettleOptions = DEFAULT_SETTLE, more: SettleMore = {}): Promise<SettleResult> {
  const view = doc.defaultView!;
  const now = () => view.performance.now();
  let resolveIt!: (r: SettleResult) => void;
  const done = new Promise<SettleResult>((resolve) => (resolveIt = resolve));
  let finished = false;
  const slow = slowRendering(view, opts.quietMs);
  const finish = (navigating: boolean, redrawing = false) => {
    if (finished) return;
    finished = true;
    if (frame !== undefined) view.cancelAnimationFrame(frame);
    observer.disconnect();
    slow.disconnect();
    nav?.removeEventListener('navigate', onNavigate);
    view.removeEventListener('pagehide', onPageHide);
    resolveIt(redrawing ? { navigating, redrawing } : { navigating });
  };
  const start = now();
  /** When the DOM last changed (the start until it does). */
  let last = start;
  /** The action's turn: its task, its microtasks and the 0-ms timers it set (they run before this one's marker). */
  let ownTurn = true;
  /** Changes seen after the action's turn. */
  let changedAfter = false;
  const observer = new view.MutationObserver(() => {
    if (!ownTurn) changedAfter = true;
    last = now();
  });
  observer.observe(doc, { subtree: true, childList: true, attributes: true, characterData: true });
  // The Navigation API (Chromium) reports navigations the page starts.
  const nav = (view as unknown as { navigation?: EventTarget }).navigation;
  const onNavigate = (e: Event) => {
    const ne = e as Event & { destination?: { sameDocument?: boolean }; hashChange?: boolean };
    if (ne.destination?.sameDocument === false) finish(true);
  };
  const onPageHide = () => finish(true);
  nav?.addEventListener('navigate', onNavigate);
  view.addEventListener('pagehide', onPageHide);
  let frame: number | undefined;
  try {
    action();
  } catch (err) {
    finish(false);
    throw err;
  }
  if (finished) return done;
  // The action's own changes, made in its task, restart the quiet window.
  if (observer.takeRecords().length > 0) last = now();
  setTimeout(() => {
    // Changes made up to now (records not yet delivered included) are the action's own.
    if (observer.takeRecords().length > 0) last = now();
    ownTurn = false;
  }, 0);
  if (typeof view.requestAnimationFrame === 'function') {
    frame = view.requestAnimationFrame(() => {
      frame = undefined;
      // Changes not yet delivered to the observer count as well.
      if (!ownTurn && observer.takeRecords().length > 0) changedAfter = true;
      if (!changedAfter && (more.slowHint || slow.slow())) finish(false, true);
    });
  }
  // A hidden page's timers fire on whole seconds (Chrome's background
  // throttling): there the quiet window is timed by more.delay.
  const timer = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  const delay = more.delay;
  const sleep = delay && doc.visibilityState === 'hidden' ? (ms: number) => delay(ms).catch(() => timer(ms)) : timer;
  void (async () => {
    while (!finished) {
      const t = now();
      if (t - last >= opts.quietMs || t - start >= opts.maxMs) return finish(false);
      await sleep(Math.max(1, Math.min(last + opts.quietMs, start + opts.maxMs) - t));
    }
  })();
  return done;
}

/** settle's other inputs. */
export interface SettleMore {
  /** The caller saw the page slow to bring its rendering up to date (the action's hit test took quietMs or more): a slow redraw too. */
  slowHint?: boolean;
  /**
   * Resolves after ms, timed where the page's throttling does not reach
   * (content.ts: by the service worker); used while the page is hidden.
   * A rejection falls back to the page's own timer.
   */
  delay?: (ms: number) => Promise<void>;
}

/**
 * How long a slow redraw is evidence that the page redraws slowly, in ms:
 * frames under 50 ms leave no entry, so a page that became fast again is
 * only known by the absence of slow ones.
 */
const SLOW_RENDER_MEMORY_MS = 60_000;

/** A Long Animation Frames API entry: the fields read here. */
interface LongFrame {
  startTime: number;
  duration: number;
  /** When the frame's rendering began (0: the frame did not render). */
  renderStart: number;
}

/**
 * Watches the page's long animation frames (those the browser has buffered
 * included; https://w3c.github.io/long-animation-frames/): slow() tells
 * whether the last one that rendered spent at least ms rendering (from its
 * renderStart to its end: style, layout, pre-paint and paint), less than
 * SLOW_RENDER_MEMORY_MS ago. False where the API is missing.
 */
function slowRendering(view: Window, ms: number): { slow(): boolean; disconnect(): void } {
  const PO = (view as unknown as { PerformanceObserver?: typeof PerformanceObserver }).PerformanceObserver;
  if (!PO || !PO.supportedEntryTypes?.includes('long-animation-frame')) return { slow: () => false, disconnect: () => undefined };
  let last: LongFrame | undefined;
  const note = (entries: PerformanceEntryList) => {
    for (const e of entries as unknown as LongFrame[]) if (e.renderStart > 0 && (!last || e.startTime >= last.startTime)) last = e;
  };
  const po = new PO((list) => note(list.getEntries()));
  po.observe({ type: 'long-animation-frame', buffered: true });
  return {
    slow: () => {
      note(po.takeRecords());
      if (!last) return false;
      const end = last.startTime + last.duration;
      return end - last.renderStart >= ms && view.performance.now() - end <= SLOW_RENDER_MEMORY_MS;
    },
    disconnect: () => po.disconnect(),
  };
}
