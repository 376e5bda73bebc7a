// The page-world hooks of a shared tab: dialogs and the console.
//
// Nothing declares them in the manifest. The service worker installs them with
// chrome.scripting.executeScript (world MAIN, injectImmediately) into every
// frame of a tab when the tab is shared and at each commit while it stays
// shared (background/tab-hooks.ts), so a tab the user has not shared never
// runs them. Unhooking restores the very same original functions and
// property descriptors, so String(window.alert) is native again.
//
// Dialogs. While the AI acts on the tab (a tool call until its result plus
// 500 ms: actingUntil) or an answer is armed by browser_handle_dialog,
// alert/confirm/prompt answer at once by the policy: the armed answer, else
// alert accepted and confirm/prompt dismissed (record phase "answered").
// Otherwise they are the browser's own dialogs: the hook records the dialog
// (phase "open") before handing it to the browser, and its answer (phase
// "closed") after, so the next tool call can report the blocked page with the
// dialog's text (a blocked page blocks its content script too, and no
// extension API reports an open dialog without the debugger).
//
// Console calls and uncaught errors are recorded while the hooks are in.
//
// Everything here runs with the page's own scripts, so a page can see, undo
// or fake it: what it reports is untrusted data, like the rest of the page.
//
// Talk with the content script (isolated world) goes through window events
// whose detail is a JSON string (events cross worlds, objects do not):
//   hookEvent (page → content script): HookRecord.
//   controlEvent (content script → page): PageControl.
// Records wait in a small buffer until the content script says it is ready
// (the two are injected side by side, in either order).

/**
 * The event the hooks send records on (page → content script). Not the
 * "__tether_hook" of extension 0.1.0, whose hooks stay in pages opened under
 * it until they reload: their records are not relayed twice.
 */
export const HOOK_EVENT = '__tether_record';
/** The event that steers the hooks (content script → page). */
export const CONTROL_EVENT = '__tether_control';
/** Longest console text kept, in characters. */
export const CONSOLE_TEXT_LIMIT = 4000;

/** An answer armed by browser_handle_dialog. */
export interface ArmedAnswer {
  accept: boolean;
  promptText?: string;
}

export type DialogKind = 'alert' | 'confirm' | 'prompt';

/**
 * One dialog call. phase "answered": answered at once by the policy
 * (accepted, armed, promptText say how); "open": handed to the browser, which
 * shows it to the user; "closed": the user answered it (accepted, promptText).
 */
export interface DialogRecord {
  type: 'dialog';
  kind: DialogKind;
  message: string;
  phase: 'answered' | 'open' | 'closed';
  accepted?: boolean;
  promptText?: string;
  armed?: boolean;
}

export interface ConsoleRecord {
  type: 'console';
  level: string;
  text: string;
  time: number;
  url?: string;
}

/** hello: hooks just installed, asking whether a content script relays. */
export type HookRecord = DialogRecord | ConsoleRecord | { type: 'hello' };

/**
 * What the content script tells the hooks. queue replaces the armed answers;
 * actingUntil (a Date.now() value) is when the AI stops acting; ready: a
 * content script relays records; unhook: restore everything and stop.
 */
export interface PageControl {
  queue?: ArmedAnswer[];
  actingUntil?: number;
  ready?: boolean;
  unhook?: boolean;
}

/** The hooks' start state, passed by the service worker. */
export interface HookInit {
  hookEvent: string;
  controlEvent: string;
  queue: ArmedAnswer[];
  actingUntil: number;
  consoleTextLimit: number;
}

/** The service worker's HookInit for a frame. */
export function hookInit(queue: ArmedAnswer[], actingUntil: number): HookInit {
  return { hookEvent: HOOK_EVENT, controlEvent: CONTROL_EVENT, queue, actingUntil, consoleTextLimit: CONSOLE_TEXT_LIMIT };
}

/**
 * Installs the hooks in win, once per document: a second install hands its
 * state to the hooks already there. Serialized by chrome.scripting, so it
 * refers to nothing outside its own body.
 */
export function installPageHooks(init: HookInit, win: Window & typeof globalThis = window): void {
  const CustomEv = win.CustomEvent;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const now = Date.now.bind(Date);

  // Already hooked in this document? Those hooks take the new state and say so.
  const probe: { state: HookInit; taken: boolean } = { state: init, taken: false };
  try {
    win.dispatchEvent(new CustomEv(init.controlEvent, { detail: probe }));
  } catch {
    // Never break the page.
  }
  if (probe.taken) return;

  let queue: ArmedAnswer[] = [];
  let actingUntil = 0;
  let ready = false;
  // False once unhooked: a wrapper the page kept a reference to then only calls the original.
  let hooked = true;
  let pending: string[] = [];
  const PENDING_LIMIT = 200;

  const send = (rec: HookRecord) => {
    if (!hooked) return;
    let detail: string;
    try {
      detail = stringify(rec);
    } catch {
      return;
    }
    if (!ready && rec.type !== 'hello') {
      if (pending.length < PENDING_LIMIT) pending.push(detail);
      return;
    }
    try {
      win.dispatchEvent(new CustomEv(init.hookEvent, { detail }));
    } catch {
      // Never break the page.
    }
  };

  const setState = (c: { queue?: unknown; actingUntil?: unknown }) => {
    if (Array.isArray(c.queue)) {
      queue = c.queue
        .filter((a): a is ArmedAnswer => typeof a === 'object' && a !== null && typeof (a as ArmedAnswer).accept === 'boolean')
        .map((a) => (typeof a.promptText === 'string' ? { accept: a.accept, promptText: a.promptText } : { accept: a.accept }));
    }
    if (typeof c.actingUntil === 'number') actingUntil = c.actingUntil;
  };
  setState(init);

  const clip = (s: string) => (s.length > init.consoleTextLimit ? s.slice(0, init.consoleTextLimit - 1) + '…' : s);
  /** Console arguments, roughly as DevTools prints them. */
  const formatArgs = (args: unknown[]): string => {
    const parts = args.map((a) => {
      if (typeof a === 'string') return a;
      if (a instanceof win.Error) return a.stack || `${a.name}: ${a.message}`;
      if (a === undefined || typeof a === 'function' || typeof a === 'symbol' || typeof a === 'bigint') return String(a);
      if (typeof a === 'object' && a !== null && 'nodeType' in a && 'nodeName' in a) return `<${String((a as Node).nodeName).toLowerCase()}>`;
      try {
        return stringify(a) ?? String(a);
      } catch {
        return String(a);
      }
    });
    return clip(parts.join(' '));
  };

  // The originals, restored as they were by unhook.
  const restore: Array<() => void> = [];
  const replace = (obj: object, name: string, make: (original: (...args: unknown[]) => unknown) => unknown) => {
    const desc = Object.getOwnPropertyDescriptor(obj, name);
    const original = (desc && 'value' in desc ? desc.value : (obj as Record<string, unknown>)[name]) as unknown;
    if (typeof original !== 'function') return;
    try {
      Object.defineProperty(obj, name, { value: make(original as (...args: unknown[]) => unknown), writable: true, configurable: true, enumerable: desc ? desc.enumerable : true });
    } catch {
      return; // A page froze it: nothing to do.
    }
    restore.push(() => {
      try {
        if (desc) Object.defineProperty(obj, name, desc);
        else delete (obj as Record<string, unknown>)[name];
      } catch {
        // A page froze it meanwhile.
      }
    });
  };

  const dialog = (kind: DialogKind) => (original: (...args: unknown[]) => unknown) =>
    function (this: unknown, ...args: unknown[]): unknown {
      if (!hooked) return Reflect.apply(original, win, args);
      const message = args[0] === undefined ? '' : String(args[0]);
      const armed = queue.shift();
      if (armed === undefined && now() >= actingUntil) {
        // Nobody acts for the AI now: the browser's own dialog, for the user.
        send({ type: 'dialog', kind, message, phase: 'open' });
        const value = Reflect.apply(original, win, args);
        const rec: DialogRecord = { type: 'dialog', kind, message, phase: 'closed', accepted: kind === 'alert' ? true : kind === 'confirm' ? value === true : value !== null };
        if (kind === 'prompt' && typeof value === 'string') rec.promptText = value;
        send(rec);
        return value;
      }
      const accept = armed ? armed.accept : kind === 'alert';
      const rec: DialogRecord = { type: 'dialog', kind, message, phase: 'answered', accepted: accept, armed: armed !== undefined };
      let value: unknown;
      if (kind === 'confirm') value = accept;
      else if (kind === 'prompt') {
        value = accept ? (armed?.promptText ?? (args[1] === undefined ? '' : String(args[1]))) : null;
        if (accept) rec.promptText = value as string;
      }
      send(rec);
      return value;
    };
  replace(win, 'alert', dialog('alert'));
  replace(win, 'confirm', dialog('confirm'));
  replace(win, 'prompt', dialog('prompt'));

  const con = win.console;
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    replace(con, level, (original) =>
      function (this: unknown, ...args: unknown[]) {
        send({ type: 'console', level, text: formatArgs(args), time: now(), url: win.location.href });
        return Reflect.apply(original, this, args);
      },
    );
  }

  const listen = (type: string, fn: (e: Event) => void) => {
    win.addEventListener(type, fn);
    restore.push(() => win.removeEventListener(type, fn));
  };
  listen('error', (e: Event) => {
    const ev = e as ErrorEvent;
    if (!(ev instanceof win.ErrorEvent)) return; // A resource failed to load: not a script error.
    const where = ev.filename ? ` (${ev.filename}:${ev.lineno}:${ev.colno})` : '';
    const text = ev.error instanceof win.Error && ev.error.stack ? ev.error.stack : `${ev.message}${where}`;
    send({ type: 'console', level: 'exception', text: clip(text), time: now(), url: ev.filename || win.location.href });
  });
  listen('unhandledrejection', (e: Event) => {
    const reason = (e as PromiseRejectionEvent).reason;
    send({ type: 'console', level: 'exception', text: clip(`Uncaught (in promise) ${formatArgs([reason])}`), time: now(), url: win.location.href });
  });
  listen(init.controlEvent, (e: Event) => {
    const detail = (e as CustomEvent).detail as unknown;
    if (typeof detail === 'object' && detail !== null && 'taken' in detail) {
      // Another install in this document: it stays out, these hooks take its state.
      const p = detail as { state: HookInit; taken: boolean };
      p.taken = true;
      setState(p.state);
      return;
    }
    let c: PageControl;
    try {
      c = parse(String(detail)) as PageControl;
    } catch {
      return; // Not ours.
    }
    if (typeof c !== 'object' || c === null) return;
    if (c.unhook === true) {
      hooked = false;
      for (const undo of restore.splice(0).reverse()) undo();
      pending = [];
      return;
    }
    setState(c);
    if (c.ready === true && !ready) {
      ready = true;
      const out = pending;
      pending = [];
      for (const d of out) {
        try {
          win.dispatchEvent(new CustomEv(init.hookEvent, { detail: d }));
        } catch {
          // Never break the page.
        }
      }
    }
  });
  send({ type: 'hello' });
}
