// The page-world hooks (bundled as main-world.js, run in every frame's MAIN
// world at document_start): alert/confirm/prompt answer at once instead of
// blocking the tab, and console calls and uncaught errors are recorded.
//
// Everything here runs with the page's own scripts, so a page can see, undo
// or fake it: what it reports is untrusted data, like the rest of the page.
//
// Talk with the content script (isolated world) goes through events on the
// window whose detail is a JSON string:
//   HOOK_EVENT (page → content script): {type:'dialog', ...DialogEvent} or
//     {type:'console', level, text, time, url}
//   ARM_EVENT (content script or service worker → page): {queue: ArmedAnswer[]}
//     replaces the armed answers of this document.

export const HOOK_EVENT = '__tether_hook';
export const ARM_EVENT = '__tether_arm';
const GUARD = '__tetherPageHooks';
/** Longest console text kept, in characters. */
export const CONSOLE_TEXT_LIMIT = 4000;

export interface ArmedAnswer {
  accept: boolean;
  promptText?: string;
}

export type DialogKind = 'alert' | 'confirm' | 'prompt';

export interface DialogRecord {
  type: 'dialog';
  kind: DialogKind;
  message: string;
  accepted: boolean;
  promptText?: string;
  armed: boolean;
}

export interface ConsoleRecord {
  type: 'console';
  level: string;
  text: string;
  time: number;
  url?: string;
}

export type HookRecord = DialogRecord | ConsoleRecord;

/** The default policy: alert accepted; confirm and prompt dismissed (the safe answer). */
export function answerDialog(kind: DialogKind, message: string, defaultValue: string | undefined, armed: ArmedAnswer | undefined): { record: DialogRecord; value: unknown } {
  const accept = armed ? armed.accept : kind === 'alert';
  const record: DialogRecord = { type: 'dialog', kind, message, accepted: accept, armed: armed !== undefined };
  if (kind === 'alert') return { record, value: undefined };
  if (kind === 'confirm') return { record, value: accept };
  if (!accept) return { record, value: null };
  const text = armed?.promptText ?? defaultValue ?? '';
  record.promptText = text;
  return { record, value: text };
}

/** Installs the hooks in win (once). */
export function installPageHooks(win: Window & typeof globalThis): void {
  const scope = win as unknown as Record<string, unknown>;
  if (scope[GUARD]) return;
  scope[GUARD] = true;
  let queue: ArmedAnswer[] = [];
  const CustomEv = win.CustomEvent;
  const dispatch = win.dispatchEvent.bind(win);
  const stringify = JSON.stringify;
  const emit = (rec: HookRecord) => {
    try {
      dispatch(new CustomEv(HOOK_EVENT, { detail: stringify(rec) }));
    } catch {
      // Never break the page.
    }
  };

  const arm = (raw: unknown) => {
    try {
      const detail = JSON.parse(String(raw)) as { queue?: unknown };
      if (Array.isArray(detail.queue)) {
        queue = detail.queue
          .filter((a): a is ArmedAnswer => typeof a === 'object' && a !== null && typeof (a as ArmedAnswer).accept === 'boolean')
          .map((a) => (typeof a.promptText === 'string' ? { accept: a.accept, promptText: a.promptText } : { accept: a.accept }));
      }
    } catch {
      // Not ours.
    }
  };
  // The service worker may have armed answers before these hooks ran in this document.
  if (typeof scope.__tetherArmQueue === 'string') arm(scope.__tetherArmQueue);
  win.addEventListener(ARM_EVENT, (e: Event) => arm((e as CustomEvent).detail));

  const dialog = (kind: DialogKind) =>
    function (this: unknown, message?: unknown, defaultValue?: unknown): unknown {
      const armed = queue.shift();
      const text = message === undefined ? '' : String(message);
      const { record, value } = answerDialog(kind, text, defaultValue === undefined ? undefined : String(defaultValue), armed);
      emit(record);
      return value;
    };
  const define = (name: string, fn: unknown) => {
    try {
      Object.defineProperty(win, name, { value: fn, writable: true, configurable: true, enumerable: true });
    } catch {
      // A page froze it: nothing to do.
    }
  };
  define('alert', dialog('alert'));
  define('confirm', dialog('confirm'));
  define('prompt', dialog('prompt'));

  const con = win.console as unknown as Record<string, (...args: unknown[]) => void>;
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    const original = con[level];
    if (typeof original !== 'function') continue;
    con[level] = function (this: unknown, ...args: unknown[]) {
      emit({ type: 'console', level, text: formatArgs(args), time: Date.now(), url: win.location.href });
      return original.apply(this, args);
    };
  }
  win.addEventListener('error', (e: Event) => {
    const ev = e as ErrorEvent;
    if (!(ev instanceof win.ErrorEvent)) return; // A resource failed to load: not a script error.
    const where = ev.filename ? ` (${ev.filename}:${ev.lineno}:${ev.colno})` : '';
    const text = ev.error instanceof win.Error && ev.error.stack ? ev.error.stack : `${ev.message}${where}`;
    emit({ type: 'console', level: 'exception', text: clipText(text), time: Date.now(), url: ev.filename || win.location.href });
  });
  win.addEventListener('unhandledrejection', (e: Event) => {
    const reason = (e as PromiseRejectionEvent).reason;
    emit({ type: 'console', level: 'exception', text: clipText(`Uncaught (in promise) ${formatArgs([reason])}`), time: Date.now(), url: win.location.href });
  });
}

/** Formats console arguments roughly the way DevTools prints them. */
export function formatArgs(args: unknown[]): string {
  const parts = args.map((a) => {
    if (typeof a === 'string') return a;
    if (a instanceof Error) return a.stack || `${a.name}: ${a.message}`;
    if (a === undefined || typeof a === 'function' || typeof a === 'symbol' || typeof a === 'bigint') return String(a);
    if (typeof a === 'object' && a !== null && 'nodeType' in a && 'nodeName' in a) return `<${String((a as Node).nodeName).toLowerCase()}>`;
    try {
      return JSON.stringify(a) ?? String(a);
    } catch {
      return String(a);
    }
  });
  return clipText(parts.join(' '));
}

function clipText(s: string): string {
  return s.length > CONSOLE_TEXT_LIMIT ? s.slice(0, CONSOLE_TEXT_LIMIT - 1) + '…' : s;
}
