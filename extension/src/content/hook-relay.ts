// The content script's side of the page-world hooks (shared/page-hooks.ts):
// relays their records (dialogs, console) to the service worker, and passes
// the service worker's state (armed answers, when the AI acts, unhook) to
// them. The records are page-controlled data: they are checked for shape and
// size, nothing more.
import type { HookBatch } from '../shared/messages';
import { CONSOLE_TEXT_LIMIT, CONTROL_EVENT, HOOK_EVENT, type PageControl } from '../shared/page-hooks';

/** Most console records relayed per batch; a page that logs more in one tick loses the rest there. */
const BATCH_LIMIT = 500;
/**
 * Dialog records go out at once (the action that caused one reports it, or
 * the page is about to block), the first DIALOGS_AT_ONCE of each BATCH_MS;
 * past that they wait for the batch, which takes at most DIALOG_BATCH_LIMIT.
 * A real page's dialogs come one at a time (each blocks, or is answered
 * while the AI acts); a page that forges records by the thousand loses the
 * rest, so it cannot flood the service worker.
 */
const DIALOGS_AT_ONCE = 5;
const DIALOG_BATCH_LIMIT = 20;
/** How long console records wait to be batched, in ms. */
const BATCH_MS = 50;

/** Passes control to the hooks of this document (if any are installed). */
export function controlPageHooks(win: Window, control: PageControl): void {
  win.dispatchEvent(new CustomEvent(CONTROL_EVENT, { detail: JSON.stringify(control) }));
}

/** The relay of a document: stopped when its tab stops being shared, started again when it is shared again. */
export interface HookRelay {
  start(): void;
  stop(): void;
  /** Sends the records batched so far now (an action's, before its result: a hidden page's batch timer fires on whole seconds). */
  flush(): void;
}

/**
 * Relays the hooks' records to send: a dialog that is about to block the page
 * at once, other dialog and console records in batches (bounded). Tells
 * hooks installed before or after this relay that it is ready. Stopped, it
 * listens to nothing, so a page of a tab no longer shared gets no answer.
 */
export function relayPageHooks(win: Window, send: (batch: HookBatch) => void): HookRelay {
  let batch: HookBatch = { dialogs: [], console: [] };
  let scheduled = false;
  let windowStart = 0;
  let sentAtOnce = 0;
  const flush = () => {
    scheduled = false;
    const out = batch;
    batch = { dialogs: [], console: [] };
    if (out.dialogs.length || out.console.length) send(out);
  };
  const later = () => {
    if (!scheduled) {
      scheduled = true;
      setTimeout(flush, BATCH_MS);
    }
  };
  const str = (v: unknown, limit = CONSOLE_TEXT_LIMIT) => (typeof v === 'string' ? v.slice(0, limit) : '');
  const onRecord = (e: Event) => {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(String((e as CustomEvent).detail)) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof rec !== 'object' || rec === null) return;
    if (rec.type === 'hello') {
      controlPageHooks(win, { ready: true });
      return;
    }
    if (rec.type === 'dialog' && (rec.kind === 'alert' || rec.kind === 'confirm' || rec.kind === 'prompt') && (rec.phase === 'answered' || rec.phase === 'open' || rec.phase === 'closed')) {
      if (batch.dialogs.length >= DIALOG_BATCH_LIMIT) return;
      const d: HookBatch['dialogs'][number] = { kind: rec.kind, message: str(rec.message), phase: rec.phase, accepted: rec.accepted === true, armed: rec.armed === true };
      if (typeof rec.promptText === 'string') d.promptText = str(rec.promptText);
      batch.dialogs.push(d);
      const now = Date.now();
      if (now - windowStart >= BATCH_MS) {
        windowStart = now;
        sentAtOnce = 0;
      }
      // An open dialog is about to block the page until the user answers: now or never.
      if (rec.phase === 'open' || sentAtOnce < DIALOGS_AT_ONCE) {
        sentAtOnce++;
        flush();
      } else later();
      return;
    }
    if (rec.type === 'console' && batch.console.length < BATCH_LIMIT) {
      const c: HookBatch['console'][number] = { level: str(rec.level, 20), text: str(rec.text), time: typeof rec.time === 'number' ? rec.time : Date.now() };
      if (typeof rec.url === 'string') c.url = str(rec.url, 2000);
      batch.console.push(c);
      later();
    }
  };
  let on = false;
  const relay: HookRelay = {
    start() {
      if (on) return;
      on = true;
      win.addEventListener(HOOK_EVENT, onRecord);
      // Hooks installed before this relay are waiting for this.
      controlPageHooks(win, { ready: true });
    },
    stop() {
      on = false;
      win.removeEventListener(HOOK_EVENT, onRecord);
      batch = { dialogs: [], console: [] };
    },
    flush() {
      if (on) flush();
    },
  };
  relay.start();
  return relay;
}
