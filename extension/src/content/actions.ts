// DOM actions on one element: click and type, then wait for the page to settle.
import { TetherError } from '../shared/errors';
import { describe, isDisabledEl, isEditableHost } from './snapshot';

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
}

/**
 * Clicks el like a user: scrolls it to the middle of the viewport, then sends
 * pointer and mouse events at its centre followed by a click.
 */
export function click(el: Element): void {
  if (isDisabledEl(el)) {
    throw new TetherError(
      'not_interactable',
      `The ${describe(el)} is disabled, so it cannot be clicked. Call browser_snapshot to see when it becomes enabled, or pick another element.`,
    );
  }
  el.scrollIntoView?.({ block: 'center', inline: 'center', behavior: 'instant' });
  const rect = el.getBoundingClientRect();
  const x = rect.left + rect.width / 2;
  const y = rect.top + rect.height / 2;
  const doc = el.ownerDocument;
  // Aim at what is actually under the pointer when that is inside el, so
  // handlers on inner elements see the events the way a real click sends them.
  const hit = rect.width > 0 && rect.height > 0 ? doc.elementFromPoint?.(x, y) : null;
  const target = hit && el.contains(hit) ? hit : el;
  const view = doc.defaultView!;
  const base = { bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, screenX: x, screenY: y, view, button: 0 };
  const pointer = { ...base, pointerId: 1, pointerType: 'mouse', isPrimary: true, width: 1, height: 1 };
  const PointerEv = view.PointerEvent ?? view.MouseEvent;
  target.dispatchEvent(new PointerEv('pointerover', pointer));
  target.dispatchEvent(new view.MouseEvent('mouseover', base));
  target.dispatchEvent(new PointerEv('pointermove', pointer));
  target.dispatchEvent(new view.MouseEvent('mousemove', base));
  target.dispatchEvent(new PointerEv('pointerdown', { ...pointer, buttons: 1, pressure: 0.5 }));
  const down = target.dispatchEvent(new view.MouseEvent('mousedown', { ...base, buttons: 1, detail: 1 }));
  if (down) focusFor(el);
  target.dispatchEvent(new PointerEv('pointerup', { ...pointer, buttons: 0 }));
  target.dispatchEvent(new view.MouseEvent('mouseup', { ...base, buttons: 0, detail: 1 }));
  target.dispatchEvent(new view.MouseEvent('click', { ...base, buttons: 0, detail: 1 }));
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
  if (el instanceof view.HTMLInputElement || el instanceof view.HTMLTextAreaElement) {
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
      throw new TetherError('not_interactable', `The ${describe(el)} did not accept ${JSON.stringify(text)} (an input of type "${el.type}" needs its own format, e.g. 2024-05-31 for a date). Retry with a value in that format.`);
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
  const init = { key: 'Enter', code: 'Enter', keyCode: 13, which: 13, charCode: 0, bubbles: true, cancelable: true, composed: true };
  const notCancelled = el.dispatchEvent(new view.KeyboardEvent('keydown', init));
  el.dispatchEvent(new view.KeyboardEvent('keypress', { ...init, charCode: 13 }));
  el.dispatchEvent(new view.KeyboardEvent('keyup', init));
  if (notCancelled && el instanceof view.HTMLInputElement && el.form && el.isConnected) {
    el.form.requestSubmit();
  }
}

/**
 * Waits until the DOM has not changed for quietMs (at most maxMs), or until a
 * cross-document navigation starts.
 */
export function settle(doc: Document, opts: SettleOptions = DEFAULT_SETTLE): Promise<SettleResult> {
  const view = doc.defaultView!;
  return new Promise((resolve) => {
    let quiet: ReturnType<typeof setTimeout>;
    const finish = (navigating: boolean) => {
      clearTimeout(quiet);
      clearTimeout(cap);
      observer.disconnect();
      nav?.removeEventListener('navigate', onNavigate);
      view.removeEventListener('pagehide', onPageHide);
      resolve({ navigating });
    };
    const observer = new view.MutationObserver(() => {
      clearTimeout(quiet);
      quiet = setTimeout(() => finish(false), opts.quietMs);
    });
    observer.observe(doc, { subtree: true, childList: true, attributes: true, characterData: true });
    quiet = setTimeout(() => finish(false), opts.quietMs);
    const cap = setTimeout(() => finish(false), opts.maxMs);
    // The Navigation API (Chromium) reports navigations the page starts.
    const nav = (view as unknown as { navigation?: EventTarget }).navigation;
    const onNavigate = (e: Event) => {
      const ne = e as Event & { destination?: { sameDocument?: boolean }; hashChange?: boolean };
      if (ne.destination?.sameDocument === false) finish(true);
    };
    const onPageHide = () => finish(true);
    nav?.addEventListener('navigate', onNavigate);
    view.addEventListener('pagehide', onPageHide);
  });
}
