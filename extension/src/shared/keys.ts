// Key presses, parsed: "Control+A"-style combos, for the content script's
// untrusted key events (content/keys.ts) and the service worker's trusted
// input (background/trusted.ts).
import { TetherError } from './errors';

export type Modifier = 'Alt' | 'Control' | 'Meta' | 'Shift';

/** One parsed key press. */
export interface KeySpec {
  /** KeyboardEvent.key, e.g. "Enter", "a", "A", "ArrowDown". */
  key: string;
  /** KeyboardEvent.code, e.g. "Enter", "KeyA", "Digit1". */
  code: string;
  /** Windows virtual key code (KeyboardEvent.keyCode). */
  keyCode: number;
  /** The text the key inserts, for printable keys without Control/Alt/Meta. */
  text?: string;
  modifiers: Modifier[];
}

const MODIFIER_NAMES: Record<string, Modifier | 'ControlOrMeta'> = {
  control: 'Control', ctrl: 'Control', ctl: 'Control',
  shift: 'Shift',
  alt: 'Alt', option: 'Alt', opt: 'Alt',
  meta: 'Meta', cmd: 'Meta', command: 'Meta', super: 'Meta', win: 'Meta',
  controlormeta: 'ControlOrMeta', cmdorctrl: 'ControlOrMeta', commandorcontrol: 'ControlOrMeta',
};

interface NamedKey { key: string; code: string; keyCode: number; text?: string }

const NAMED: Record<string, NamedKey> = {};
function named(names: string[], key: string, code: string, keyCode: number, text?: string): void {
  for (const n of names) NAMED[n.toLowerCase()] = { key, code, keyCode, text };
}
named(['Enter', 'Return'], 'Enter', 'Enter', 13, '\r');
named(['Tab'], 'Tab', 'Tab', 9);
named(['Escape', 'Esc'], 'Escape', 'Escape', 27);
named(['Backspace'], 'Backspace', 'Backspace', 8);
named(['Delete', 'Del'], 'Delete', 'Delete', 46);
named(['Insert'], 'Insert', 'Insert', 45);
named(['Space', 'Spacebar'], ' ', 'Space', 32, ' ');
named(['ArrowUp', 'Up'], 'ArrowUp', 'ArrowUp', 38);
named(['ArrowDown', 'Down'], 'ArrowDown', 'ArrowDown', 40);
named(['ArrowLeft', 'Left'], 'ArrowLeft', 'ArrowLeft', 37);
named(['ArrowRight', 'Right'], 'ArrowRight', 'ArrowRight', 39);
named(['Home'], 'Home', 'Home', 36);
named(['End'], 'End', 'End', 35);
named(['PageUp'], 'PageUp', 'PageUp', 33);
named(['PageDown'], 'PageDown', 'PageDown', 34);
named(['ContextMenu'], 'ContextMenu', 'ContextMenu', 93);
for (let i = 1; i <= 12; i++) named([`F${i}`], `F${i}`, `F${i}`, 111 + i);
// Modifier keys pressed alone.
named(['Control'], 'Control', 'ControlLeft', 17);
named(['Shift'], 'Shift', 'ShiftLeft', 16);
named(['Alt'], 'Alt', 'AltLeft', 18);
named(['Meta'], 'Meta', 'MetaLeft', 91);

/** US-layout punctuation: character → [code, keyCode, shifted?]. */
const PUNCT: Record<string, [string, number, boolean]> = {
  '-': ['Minus', 189, false], _: ['Minus', 189, true], '=': ['Equal', 187, false], '+': ['Equal', 187, true],
  '[': ['BracketLeft', 219, false], '{': ['BracketLeft', 219, true], ']': ['BracketRight', 221, false], '}': ['BracketRight', 221, true],
  '\\': ['Backslash', 220, false], '|': ['Backslash', 220, true], ';': ['Semicolon', 186, false], ':': ['Semicolon', 186, true],
  "'": ['Quote', 222, false], '"': ['Quote', 222, true], '`': ['Backquote', 192, false], '~': ['Backquote', 192, true],
  ',': ['Comma', 188, false], '<': ['Comma', 188, true], '.': ['Period', 190, false], '>': ['Period', 190, true],
  '/': ['Slash', 191, false], '?': ['Slash', 191, true],
  '!': ['Digit1', 49, true], '@': ['Digit2', 50, true], '#': ['Digit3', 51, true], $: ['Digit4', 52, true], '%': ['Digit5', 53, true],
  '^': ['Digit6', 54, true], '&': ['Digit7', 55, true], '*': ['Digit8', 56, true], '(': ['Digit9', 57, true], ')': ['Digit0', 48, true],
};

/** True on macOS, where ControlOrMeta means Meta. */
export function isMac(platform = typeof navigator !== 'undefined' ? navigator.platform : ''): boolean {
  return /Mac|iPhone|iPad/i.test(platform);
}

/**
 * Parses "Enter", "a", "Control+A", "Shift+Tab", "ControlOrMeta+a", "Control++".
 * Throws bad_request naming what is wrong.
 */
export function parseKey(combo: string, mac = isMac()): KeySpec {
  if (typeof combo !== 'string' || combo === '') throw badKey(combo, 'it is empty');
  // Split on "+" but keep a trailing "+" as the key itself ("Control++", "+").
  const parts: string[] = [];
  let rest = combo;
  while (rest.length > 0) {
    const i = rest.indexOf('+', 1);
    if (i < 0) {
      parts.push(rest);
      break;
    }
    parts.push(rest.slice(0, i));
    rest = rest.slice(i + 1);
    if (rest === '') throw badKey(combo, 'it ends with "+" but names no key after it');
  }
  const keyName = parts.pop()!;
  const modifiers: Modifier[] = [];
  for (const raw of parts) {
    const m = MODIFIER_NAMES[raw.trim().toLowerCase()];
    if (!m) throw badKey(combo, `"${raw}" is not a modifier (use Control, Shift, Alt, Meta or ControlOrMeta)`);
    const mod: Modifier = m === 'ControlOrMeta' ? (mac ? 'Meta' : 'Control') : m;
    if (!modifiers.includes(mod)) modifiers.push(mod);
  }
  const shift = modifiers.includes('Shift');
  const textAllowed = !modifiers.some((m) => m === 'Control' || m === 'Alt' || m === 'Meta');
  const namedKey = keyName.length > 1 ? NAMED[keyName.toLowerCase()] : keyName === ' ' ? NAMED.space : undefined;
  if (namedKey) {
    const text = namedKey.text !== undefined && textAllowed ? namedKey.text : undefined;
    return { key: namedKey.key, code: namedKey.code, keyCode: namedKey.keyCode, text, modifiers };
  }
  if ([...keyName].length !== 1) {
    throw badKey(combo, `"${keyName}" is neither a single character nor a key name (Enter, Tab, Escape, Backspace, Delete, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, Space, F1–F12)`);
  }
  let key = keyName;
  let code = '';
  let keyCode = 0;
  if (/^[a-z]$/i.test(key)) {
    // Shift+a types "A"; an uppercase letter alone is typed as Shift would type it.
    if (shift) key = key.toUpperCase();
    // "Control+A" is Ctrl with the A key: a real keyboard reports "a" without Shift.
    else if (!textAllowed) key = key.toLowerCase();
    code = `Key${key.toUpperCase()}`;
    keyCode = key.toUpperCase().charCodeAt(0);
  } else if (/^[0-9]$/.test(key)) {
    code = `Digit${key}`;
    keyCode = key.charCodeAt(0);
  } else if (PUNCT[key]) {
    [code, keyCode] = PUNCT[key]!;
  }
  return { key, code, keyCode, text: textAllowed ? key : undefined, modifiers };
}

function badKey(combo: unknown, why: string): TetherError {
  return new TetherError('bad_request', `Cannot press ${JSON.stringify(combo)}: ${why}. Pass one key ("Enter", "a", "ArrowDown") or a combo joined by "+" ("Control+A", "Shift+Tab").`);
}

/** The key of a modifier pressed alone (its code and keyCode: the left one). */
export function modifierKey(m: Modifier): { code: string; keyCode: number } {
  return NAMED[m.toLowerCase()]!;
}

/** CDP Input.dispatchKeyEvent modifier bits. */
export function cdpModifiers(mods: readonly Modifier[]): number {
  return (mods.includes('Alt') ? 1 : 0) | (mods.includes('Control') ? 2 : 0) | (mods.includes('Meta') ? 4 : 0) | (mods.includes('Shift') ? 8 : 0);
}
