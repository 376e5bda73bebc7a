// Trusted input (opt-in): what only trusted input can do (CSS :hover, user
// activation, default actions the page cannot tell from a person's) runs
// through chrome.debugger's Input domain for one action: attach, act, detach.
// The "debugger" permission is a required one (Chrome allows no optional
// "debugger": chrome.permissions, "Permissions that can't be optional"), so
// the gate is the user's "Trusted input" checkbox in the popup
// (chrome.storage.local "trustedInput") together with the daemon's
// "trustedInput" setting.
import { TetherError } from '../shared/errors';
import { cdpModifiers, type KeySpec, type Modifier } from '../shared/keys';

export const TRUSTED_SETTING = 'trustedInput';

export const TRUSTED_OFF_MESSAGE =
  'Trusted input is turned off in this browser. The user can turn it on with the "Trusted input" checkbox in the Tether popup (the Tether toolbar icon). ' +
  'While a trusted action runs, Chrome shows its "Tether started debugging this browser" banner, and a site can detect that a debugger is attached. ' +
  'Until then, call the same tool without trusted: its events are synthetic (the page sees isTrusted false, and CSS :hover does not apply).';

/** Throws disabled unless the user turned trusted input on in the popup. */
export async function requireTrusted(): Promise<void> {
  const stored = await chrome.storage.local.get(TRUSTED_SETTING);
  if (stored[TRUSTED_SETTING] !== true || !chrome.debugger) throw new TetherError('disabled', TRUSTED_OFF_MESSAGE);
}

export type Send = (method: string, params?: Record<string, unknown>) => Promise<unknown>;

/** Attaches the debugger to the tab, runs fn, and always detaches. */
export async function withDebugger<T>(tabId: number, fn: (send: Send) => Promise<T>): Promise<T> {
  const target: chrome.debugger.Debuggee = { tabId };
  try {
    await chrome.debugger.attach(target, '1.3');
  } catch (err) {
    const text = String(err instanceof Error ? err.message : err);
    if (/already attached/i.test(text)) {
      throw new TetherError('not_interactable', 'Another debugger (DevTools or another extension) is attached to this tab, so trusted input cannot run. Close DevTools on that tab, or call the tool without trusted.');
    }
    throw new TetherError('not_interactable', `Chrome did not let Tether attach its debugger to this tab (${text}). Call the tool without trusted.`);
  }
  try {
    return await fn((method, params) => chrome.debugger.sendCommand(target, method, params) as Promise<unknown>);
  } finally {
    await chrome.debugger.detach(target).catch(() => undefined);
  }
}

/** How a trusted click is made: button, presses (2: double-click), held keys. */
export interface TrustedClickOptions {
  button?: 'left' | 'right' | 'middle';
  count?: number;
  modifiers?: Modifier[];
}

const CDP_BUTTONS = { left: 1, right: 2, middle: 4 } as const;

/**
 * The Input.dispatchMouseEvent calls of a click at (x, y): a move, then a
 * press and a release per click with clickCount 1, 2… (Chrome makes the
 * click, auxclick, contextmenu and dblclick events and their default
 * actions from these, as for a person's mouse).
 */
export function clickEvents(x: number, y: number, o: TrustedClickOptions = {}): Record<string, unknown>[] {
  const button = o.button ?? 'left';
  const modifiers = cdpModifiers(o.modifiers ?? []);
  const out: Record<string, unknown>[] = [{ type: 'mouseMoved', x, y, button: 'none', buttons: 0, modifiers }];
  for (let n = 1; n <= Math.max(1, o.count ?? 1); n++) {
    out.push({ type: 'mousePressed', x, y, button, buttons: CDP_BUTTONS[button], clickCount: n, modifiers });
    out.push({ type: 'mouseReleased', x, y, button, buttons: 0, clickCount: n, modifiers });
  }
  return out;
}

export async function trustedClick(send: Send, x: number, y: number, o: TrustedClickOptions = {}): Promise<void> {
  for (const e of clickEvents(x, y, o)) await send('Input.dispatchMouseEvent', e);
}

export async function trustedHover(send: Send, x: number, y: number): Promise<void> {
  await send('Input.dispatchMouseEvent', { type: 'mouseMoved', x, y, button: 'none', buttons: 0 });
}

const MODIFIER_KEYS: Record<Modifier, { code: string; keyCode: number }> = {
  Alt: { code: 'AltLeft', keyCode: 18 },
  Control: { code: 'ControlLeft', keyCode: 17 },
  Meta: { code: 'MetaLeft', keyCode: 91 },
  Shift: { code: 'ShiftLeft', keyCode: 16 },
};

/** The Input.dispatchKeyEvent calls that press spec: modifiers down, key down and up, modifiers up. */
export function keyEvents(spec: KeySpec): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const held: Modifier[] = [];
  for (const m of spec.modifiers) {
    held.push(m);
    const k = MODIFIER_KEYS[m];
    out.push({ type: 'rawKeyDown', key: m, code: k.code, windowsVirtualKeyCode: k.keyCode, nativeVirtualKeyCode: k.keyCode, modifiers: cdpModifiers(held), location: 1 });
  }
  const modifiers = cdpModifiers(held);
  const down: Record<string, unknown> = {
    type: spec.text !== undefined ? 'keyDown' : 'rawKeyDown',
    key: spec.key,
    code: spec.code,
    windowsVirtualKeyCode: spec.keyCode,
    nativeVirtualKeyCode: spec.keyCode,
    modifiers,
  };
  if (spec.text !== undefined) {
    down.text = spec.text;
    down.unmodifiedText = spec.text;
  }
  // macOS has no built-in shortcut table in the renderer: name the editing command.
  if ((held.includes('Control') || held.includes('Meta')) && spec.code === 'KeyA') down.commands = ['selectAll'];
  out.push(down);
  out.push({ type: 'keyUp', key: spec.key, code: spec.code, windowsVirtualKeyCode: spec.keyCode, nativeVirtualKeyCode: spec.keyCode, modifiers });
  for (const m of [...spec.modifiers].reverse()) {
    held.splice(held.indexOf(m), 1);
    const k = MODIFIER_KEYS[m];
    out.push({ type: 'keyUp', key: m, code: k.code, windowsVirtualKeyCode: k.keyCode, nativeVirtualKeyCode: k.keyCode, modifiers: cdpModifiers(held), location: 1 });
  }
  return out;
}

export async function trustedKey(send: Send, spec: KeySpec): Promise<void> {
  for (const e of keyEvents(spec)) await send('Input.dispatchKeyEvent', e);
}
