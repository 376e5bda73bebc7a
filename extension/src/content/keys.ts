// Key presses in the page: dispatching keydown / keypress / keyup on the
// focused element (the combos are parsed by shared/keys.ts). A content
// script's events are untrusted, so the browser performs no default action
// for them: pressKey emulates the defaults agents rely on (select-all, focus
// traversal, Enter submitting its form, text insertion, Backspace/Delete,
// Space/Enter activating controls), and only when the page did not cancel
// the keydown.
import { modifierKey, type KeySpec, type Modifier } from '../shared/keys';
import { shadowRootOf } from './shadow';

/** The focused element, through open shadow roots and same-origin iframes. */
export function deepActiveElement(doc: Document): Element {
  let el: Element | null = doc.activeElement;
  for (;;) {
    if (!el) return doc.body ?? doc.documentElement;
    const inner = shadowRootOf(el)?.activeElement;
    if (inner) {
      el = inner;
      continue;
    }
    if (el.tagName === 'IFRAME' || el.tagName === 'FRAME') {
      let sub: Document | null = null;
      try {
        sub = (el as HTMLIFrameElement).contentDocument;
      } catch {
        sub = null;
      }
      if (sub?.activeElement && sub.activeElement !== sub.body) {
        el = sub.activeElement;
        continue;
      }
    }
    return el;
  }
}

/** Presses spec on the focused element of doc and emulates its default action. */
export function pressKey(doc: Document, spec: KeySpec): void {
  const target = deepActiveElement(doc);
  const view = target.ownerDocument.defaultView!;
  const held = new Set<Modifier>();
  const init = (key: string, code: string, keyCode: number, extra: KeyboardEventInit & { keyCode?: number; charCode?: number; which?: number } = {}) => ({
    key, code, keyCode, which: keyCode, charCode: 0,
    ctrlKey: held.has('Control'), shiftKey: held.has('Shift'), altKey: held.has('Alt'), metaKey: held.has('Meta'),
    bubbles: true, cancelable: true, composed: true, view, repeat: false, location: 0,
    ...extra,
  });
  for (const m of spec.modifiers) {
    held.add(m);
    const n = modifierKey(m);
    target.dispatchEvent(new view.KeyboardEvent('keydown', init(m, n.code, n.keyCode, { location: 1 })));
  }
  const isModifierKey = ['Control', 'Shift', 'Alt', 'Meta'].includes(spec.key);
  let allowed = true;
  if (!isModifierKey) allowed = target.dispatchEvent(new view.KeyboardEvent('keydown', init(spec.key, spec.code, spec.keyCode)));
  // keypress fires for keys that produce a character (Enter included).
  if (allowed && spec.text !== undefined) {
    const charCode = spec.text === '\r' ? 13 : spec.text.charCodeAt(0);
    allowed = target.dispatchEvent(new view.KeyboardEvent('keypress', init(spec.key, spec.code, charCode, { charCode, keyCode: charCode, which: charCode })));
  }
  // The default action may move focus (Tab) or submit; keyup goes to the focus afterwards.
  let upTarget: Element = target;
  if (allowed && !isModifierKey) upTarget = defaultAction(target, spec) ?? target;
  if (!upTarget.isConnected) upTarget = deepActiveElement(doc);
  if (!isModifierKey) upTarget.dispatchEvent(new view.KeyboardEvent('keyup', init(spec.key, spec.code, spec.keyCode)));
  for (const m of [...spec.modifiers].reverse()) {
    held.delete(m);
    const n = modifierKey(m);
    upTarget.dispatchEvent(new view.KeyboardEvent('keyup', init(m, n.code, n.keyCode, { location: 1 })));
  }
}

/** Input types that hold editable text. */
const TEXT_TYPES = new Set(['text', 'search', 'email', 'url', 'tel', 'password', 'number']);
/** Input types that block implicit submission (HTML §4.10.21.2). */
const BLOCKING_TYPES = new Set(['text', 'search', 'email', 'url', 'tel', 'password', 'date', 'month', 'week', 'time', 'datetime-local', 'number']);

function isTextField(el: Element): el is HTMLInputElement | HTMLTextAreaElement {
  if (el.tagName === 'TEXTAREA') return !(el as HTMLTextAreaElement).disabled && !(el as HTMLTextAreaElement).readOnly;
  if (el.tagName !== 'INPUT') return false;
  const input = el as HTMLInputElement;
  return TEXT_TYPES.has(input.type) && !input.disabled && !input.readOnly;
}

function editingHost(el: Element): HTMLElement | null {
  const h = el as HTMLElement;
  if (!h.isContentEditable) return null;
  let host = h;
  while (host.parentElement && (host.parentElement as HTMLElement).isContentEditable) host = host.parentElement as HTMLElement;
  return host;
}

/** Runs the browser's default action for spec on target; returns the element focused afterwards. */
function defaultAction(target: Element, spec: KeySpec): Element | undefined {
  const mods = spec.modifiers;
  const primary = mods.includes('Control') || mods.includes('Meta');
  if (primary && !mods.includes('Alt') && spec.code === 'KeyA') {
    selectAll(target);
    return undefined;
  }
  if (spec.key === 'Tab' && !primary && !mods.includes('Alt')) {
    return moveFocus(target, mods.includes('Shift') ? -1 : 1);
  }
  if (primary || mods.includes('Alt')) return undefined;
  switch (spec.key) {
    case 'Enter':
      return enter(target);
    case 'Backspace':
    case 'Delete':
      deleteText(target, spec.key === 'Backspace');
      return undefined;
    case ' ':
      if (isTextField(target) || editingHost(target)) break;
      if (activatesOnSpace(target)) (target as HTMLElement).click();
      return undefined;
    case 'ArrowDown':
    case 'ArrowUp':
      if (target.tagName === 'SELECT') stepSelect(target as HTMLSelectElement, spec.key === 'ArrowDown' ? 1 : -1);
      else if (isRange(target)) stepRange(target, spec.key);
      return undefined;
    case 'ArrowLeft':
    case 'ArrowRight':
    case 'PageUp':
    case 'PageDown':
    case 'Home':
    case 'End':
      if (isRange(target)) stepRange(target, spec.key);
      return undefined;
    default:
      break;
  }
  if (spec.text !== undefined) insertText(target, spec.text);
  return undefined;
}

function selectAll(target: Element): void {
  const doc = target.ownerDocument;
  if (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA') {
    (target as HTMLInputElement).select();
    return;
  }
  const host = editingHost(target);
  const selection = doc.defaultView!.getSelection();
  const range = doc.createRange();
  range.selectNodeContents(host ?? doc.body ?? doc.documentElement);
  selection?.removeAllRanges();
  selection?.addRange(range);
}

/** Enter: activates buttons and links, submits forms, or inserts a line break. */
function enter(target: Element): Element | undefined {
  const view = target.ownerDocument.defaultView!;
  if (target.tagName === 'TEXTAREA' || editingHost(target)) {
    insertText(target, '\n');
    return undefined;
  }
  if (target.tagName === 'INPUT') {
    const input = target as HTMLInputElement;
    if (['submit', 'image', 'reset', 'button', 'checkbox', 'radio'].includes(input.type)) {
      // Enter on a checkbox or radio submits the form in Chrome; on a button it clicks.
      if (input.type === 'checkbox' || input.type === 'radio') implicitSubmit(input);
      else input.click();
      return undefined;
    }
    if (BLOCKING_TYPES.has(input.type)) implicitSubmit(input);
    return undefined;
  }
  if (target instanceof view.HTMLButtonElement || (target.tagName === 'A' && target.hasAttribute('href')) || target.tagName === 'SUMMARY' || target.getAttribute('role') === 'button' || target.getAttribute('role') === 'link') {
    // Native buttons, links and summary are activated by Enter; so are ARIA buttons in practice.
    if (!(target as HTMLButtonElement).disabled) (target as HTMLElement).click();
  }
  return undefined;
}

/**
 * Implicit submission (HTML §4.10.21.2): click the form's default button; with
 * none, submit through requestSubmit unless several fields block it.
 */
export function implicitSubmit(input: HTMLInputElement): void {
  const form = input.form;
  if (!form || !input.isConnected) return;
  const submitter = [...form.elements].find((e) => {
    const t: string = (e as HTMLButtonElement).type;
    return (e.tagName === 'BUTTON' && t === 'submit') || (e.tagName === 'INPUT' && (t === 'submit' || t === 'image'));
  }) as HTMLButtonElement | HTMLInputElement | undefined;
  if (submitter) {
    if (!submitter.disabled) submitter.click();
    return;
  }
  const blocking = [...form.elements].filter((e) => e.tagName === 'INPUT' && BLOCKING_TYPES.has((e as HTMLInputElement).type));
  if (blocking.length > 1) return;
  form.requestSubmit();
}

function activatesOnSpace(el: Element): boolean {
  if ((el as HTMLButtonElement).disabled) return false;
  if (el.tagName === 'BUTTON' || el.tagName === 'SUMMARY') return true;
  if (el.tagName === 'INPUT') return ['checkbox', 'radio', 'button', 'submit', 'reset', 'image'].includes((el as HTMLInputElement).type);
  return ['button', 'checkbox', 'switch', 'radio', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'option'].includes(el.getAttribute('role') ?? '');
}

function stepSelect(select: HTMLSelectElement, step: number): void {
  if (select.multiple || select.disabled) return;
  const opts = [...select.options];
  let i = select.selectedIndex;
  for (let j = i + step; j >= 0 && j < opts.length; j += step) {
    if (!opts[j]!.disabled) {
      i = j;
      break;
    }
  }
  if (i === select.selectedIndex || i < 0) return;
  select.selectedIndex = i;
  const view = select.ownerDocument.defaultView!;
  select.dispatchEvent(new view.Event('input', { bubbles: true, composed: true }));
  select.dispatchEvent(new view.Event('change', { bubbles: true }));
}

function isRange(el: Element): el is HTMLInputElement {
  return el.tagName === 'INPUT' && (el as HTMLInputElement).type === 'range' && !(el as HTMLInputElement).disabled && !(el as HTMLInputElement).readOnly;
}

/**
 * A range input's keyboard default action, as Chromium's RangeInputType
 * does it: arrows move by the step (Left and Right reversed in right-to-left
 * text; Up, Right and PageUp increase for a vertical slider too), PageUp and
 * PageDown by a tenth of the range (at least a step), Home and End to the
 * ends; the result is clamped and snapped to the step, and input and change
 * fire when the value changed.
 */
function stepRange(input: HTMLInputElement, key: string): void {
  const { min, max, step } = rangeOf(input);
  const by = step ?? (max - min) / 100;
  const big = Math.max((max - min) / 10, by);
  const current = parseFloat(input.value);
  const view = input.ownerDocument.defaultView!;
  const style = view.getComputedStyle(input);
  const vertical = (style.writingMode || '').startsWith('vertical') || style.getPropertyValue('appearance') === 'slider-vertical';
  const rtl = style.direction === 'rtl' && !vertical;
  let next: number;
  switch (key) {
    case 'ArrowUp':
      next = current + by;
      break;
    case 'ArrowDown':
      next = current - by;
      break;
    case 'ArrowLeft':
      next = rtl ? current + by : current - by;
      break;
    case 'ArrowRight':
      next = rtl ? current - by : current + by;
      break;
    case 'PageUp':
      next = current + big;
      break;
    case 'PageDown':
      next = current - big;
      break;
    case 'Home':
      next = rtl ? max : min;
      break;
    case 'End':
      next = rtl ? min : max;
      break;
    default:
      return;
  }
  setRangeValue(input, next);
}

/** A range input's min, max (never below min) and step (undefined for step="any"), with HTML's defaults 0, 100 and 1. */
function rangeOf(input: HTMLInputElement): { min: number; max: number; step?: number; base: number } {
  const num = (s: string) => (s.trim() !== '' && Number.isFinite(Number(s)) ? Number(s) : undefined);
  const min = num(input.min) ?? 0;
  const max = Math.max(min, num(input.max) ?? 100);
  const stepAttr = input.step.trim().toLowerCase();
  const step = stepAttr === 'any' ? undefined : (num(stepAttr) ?? 0) > 0 ? num(stepAttr)! : 1;
  return { min, max, step, base: num(input.min) ?? num(input.getAttribute('value') ?? '') ?? 0 };
}

/**
 * The value a range input takes for n, by HTML's value sanitization: clamped
 * to min and max, and rounded to the nearest step from the step base (the
 * greater one on a tie), never past max.
 */
export function rangeValue(input: HTMLInputElement, n: number): string {
  const { min, max, step, base } = rangeOf(input);
  let v = Math.min(max, Math.max(min, n));
  if (step !== undefined) {
    v = base + Math.round((v - base) / step) * step;
    if (v > max) v -= step;
    if (v < min) v += step;
    const decimals = (x: number) => (String(x).split('.')[1] ?? '').length;
    v = Number(v.toFixed(Math.max(decimals(step), decimals(base))));
  }
  return String(v);
}

/**
 * Sets a range input to the sanitized n through the native setter (what
 * frameworks watch) and fires input and change when the value changed.
 */
export function setRangeValue(input: HTMLInputElement, n: number): void {
  const view = input.ownerDocument.defaultView!;
  const native = Object.getOwnPropertyDescriptor(view.HTMLInputElement.prototype, 'value')!;
  const before = native.get!.call(input) as string;
  native.set!.call(input, rangeValue(input, n));
  if (native.get!.call(input) === before) return;
  input.dispatchEvent(new view.Event('input', { bubbles: true, composed: true }));
  input.dispatchEvent(new view.Event('change', { bubbles: true }));
}

function execCommand(doc: Document, command: string, value?: string): boolean {
  try {
    return typeof doc.execCommand === 'function' && doc.execCommand(command, false, value);
  } catch {
    return false;
  }
}

/** Inserts text at the caret the way typing does: beforeinput, then the editing command. */
export function insertText(target: Element, text: string): void {
  const field = isTextField(target);
  const host = field ? null : editingHost(target);
  if (!field && !host) return;
  const doc = target.ownerDocument;
  const view = doc.defaultView!;
  const inputType = text === '\n' ? (field ? 'insertLineBreak' : 'insertParagraph') : 'insertText';
  const before = new view.InputEvent('beforeinput', { bubbles: true, cancelable: true, composed: true, inputType, data: text === '\n' ? null : text });
  if (!target.dispatchEvent(before)) return;
  if (text === '\n' && host) {
    if (execCommand(doc, 'insertParagraph') || execCommand(doc, 'insertLineBreak')) return;
  } else if (execCommand(doc, 'insertText', text)) {
    return;
  }
  // No editing commands here: edit the value (or the DOM) directly.
  if (field) {
    spliceValue(target, text, 0);
  } else {
    const sel = view.getSelection();
    if (sel && sel.rangeCount > 0) {
      const range = sel.getRangeAt(0);
      range.deleteContents();
      const node = doc.createTextNode(text);
      range.insertNode(node);
      range.setStartAfter(node);
      range.collapse(true);
      sel.removeAllRanges();
      sel.addRange(range);
    } else {
      host!.append(text);
    }
    target.dispatchEvent(new view.InputEvent('input', { bubbles: true, composed: true, inputType, data: text }));
  }
}

function deleteText(target: Element, backward: boolean): void {
  const field = isTextField(target);
  const host = field ? null : editingHost(target);
  if (!field && !host) return;
  const doc = target.ownerDocument;
  const view = doc.defaultView!;
  const inputType = backward ? 'deleteContentBackward' : 'deleteContentForward';
  if (!target.dispatchEvent(new view.InputEvent('beforeinput', { bubbles: true, cancelable: true, composed: true, inputType }))) return;
  if (execCommand(doc, backward ? 'delete' : 'forwardDelete')) return;
  if (field) spliceValue(target, '', backward ? -1 : 1);
}

/**
 * Replaces the field's selection with text through the native setter, then
 * fires input. With an empty selection and text '', deletes one character
 * before (dir -1) or after (dir 1) the caret.
 */
function spliceValue(el: HTMLInputElement | HTMLTextAreaElement, text: string, dir: number): void {
  const view = el.ownerDocument.defaultView!;
  const proto = el.tagName === 'TEXTAREA' ? view.HTMLTextAreaElement.prototype : view.HTMLInputElement.prototype;
  const native = Object.getOwnPropertyDescriptor(proto, 'value')!;
  const value = native.get!.call(el) as string;
  let start: number | null = null;
  let end: number | null = null;
  try {
    start = el.selectionStart;
    end = el.selectionEnd;
  } catch {
    // number/email inputs have no selection API.
  }
  if (start === null || end === null) {
    start = value.length;
    end = value.length;
  }
  if (start === end && text === '') {
    if (dir < 0 && start > 0) start--;
    else if (dir > 0 && end < value.length) end++;
    else return;
  }
  native.set!.call(el, value.slice(0, start) + text + value.slice(end));
  try {
    el.setSelectionRange(start + text.length, start + text.length);
  } catch {
    // Not supported by this input type.
  }
  const inputType = text ? 'insertText' : dir < 0 ? 'deleteContentBackward' : 'deleteContentForward';
  el.dispatchEvent(new view.InputEvent('input', { bubbles: true, composed: true, inputType, data: text || null }));
}

// Focus traversal.

const FOCUSABLE = 'a[href],area[href],button,input,select,textarea,iframe,summary,[tabindex],[contenteditable]:not([contenteditable="false"]),audio[controls],video[controls]';

/** The document's tabbable elements in sequential focus order (open shadow roots included). */
export function tabbables(doc: Document): HTMLElement[] {
  const found: { el: HTMLElement; index: number; order: number }[] = [];
  let order = 0;
  const visit = (root: Document | ShadowRoot | Element) => {
    for (const el of Array.from(root.querySelectorAll('*'))) {
      const shadow = shadowRootOf(el);
      if (shadow) {
        if (isTabbable(el)) found.push({ el: el as HTMLElement, index: tabIndexOf(el), order: order++ });
        visit(shadow);
        continue;
      }
      if (el.matches(FOCUSABLE) && isTabbable(el)) found.push({ el: el as HTMLElement, index: tabIndexOf(el), order: order++ });
    }
  };
  visit(doc);
  // Positive tabindex first (ascending), then the rest in tree order.
  return found
    .sort((a, b) => (a.index > 0 ? a.index : Infinity) - (b.index > 0 ? b.index : Infinity) || a.order - b.order)
    .map((f) => f.el);
}

function tabIndexOf(el: Element): number {
  const attr = el.getAttribute('tabindex');
  return attr === null ? 0 : Number.parseInt(attr, 10) || 0;
}

function isTabbable(el: Element): boolean {
  const attr = el.getAttribute('tabindex');
  if (attr !== null && Number.parseInt(attr, 10) < 0) return false;
  if (!el.matches(FOCUSABLE) && attr === null) return false;
  if ((el as HTMLButtonElement).disabled) return false;
  if (el.tagName === 'INPUT' && (el as HTMLInputElement).type === 'hidden') return false;
  if (el.closest('[inert]')) return false;
  const view = el.ownerDocument.defaultView!;
  if (typeof (el as HTMLElement).checkVisibility === 'function') {
    if (!(el as HTMLElement).checkVisibility({ visibilityProperty: true } as CheckVisibilityOptions)) return false;
  } else {
    const style = view.getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden') return false;
  }
  // Only the checked radio of a group (or the first, when none is) is in the order.
  if (el.tagName === 'INPUT' && (el as HTMLInputElement).type === 'radio' && (el as HTMLInputElement).name) {
    const radio = el as HTMLInputElement;
    const group = [...el.ownerDocument.querySelectorAll<HTMLInputElement>(`input[type=radio]`)].filter((r) => r.name === radio.name && r.form === radio.form);
    const checked = group.find((r) => r.checked);
    return checked ? checked === radio : group[0] === radio;
  }
  return true;
}

function moveFocus(from: Element, step: number): Element | undefined {
  const doc = from.ownerDocument;
  const order = tabbables(doc);
  if (order.length === 0) return undefined;
  const i = order.indexOf(from as HTMLElement);
  const next = (i < 0 ? (step > 0 ? order[0] : order[order.length - 1]) : order[(i + step + order.length) % order.length])!;
  next.focus();
  if ((next.tagName === 'INPUT' && TEXT_TYPES.has((next as HTMLInputElement).type)) || next.tagName === 'TEXTAREA') {
    // Tabbing into a text field selects its content.
    try {
      (next as HTMLInputElement).select();
    } catch {
      // ignore
    }
  }
  return next;
}
