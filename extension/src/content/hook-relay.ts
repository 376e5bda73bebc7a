// The content script's side of the page-world hooks (content/page-hooks.ts):
// relays their records (dialogs, console) to the service worker, and passes
// the service worker's state (armed answers, when the AI acts, unhook) to
// them. The records are page-controlled data: they are checked for shape and
// size, nothing more.
import type { HookBatch } from '../shared/messages';
import { CONSOLE_TEXT_LIMIT, CONTROL_EVENT, HOOK_EVENT, type PageControl } from './page-hooks';

/** Most console records relayed per batch; a page that logs more in one tick loses the rest there. */
const BATCH_LIMIT = 500;
/** How long console records wait to be batched, in ms. */
const BATCH_MS = 50;

/** Passes control to the hooks of this document (if any are installed). */
export function controlPageHooks(win: Window, control: PageControl): void {
  win.dispatchEvent(new CustomEvent(CONTROL_EVENT, { detail: JSON.stringify(control) }));
}

/**
 * Relays the hooks' records to send: dialogs at once (a dialog may be about
 * to block the page), console records in batches. Tells hooks installed
 * before or after this relay that it is ready.
 */
export function relayPageHooks(win: Window, send: (batch: HookBatch) => void): void {
  let batch: HookBatch = { dialogs: [], console: [] };
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const out = batch;
    batch = { dialogs: [], console: [] };
    if (out.dialogs.length || out.console.length) send(out);
  };
  const str = (v: unknown, limit = CONSOLE_TEXT_LIMIT) => (typeof v === 'string' ? v.slice(0, limit) : '');
  win.addEventListener(HOOK_EVENT, (e: Event) => {
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
      const d: HookBatch['dialogs'][number] = { kind: rec.kind, message: str(rec.message), phase: rec.phase, accepted: rec.accepted === true, armed: rec.armed === true };
      if (typeof rec.promptText === 'string') d.promptText = str(rec.promptText);
      batch.dialogs.push(d);
      // A dialog goes out at once: the action that caused it reports it, or
      // the page is about to block until the user answers.
      flush();
      return;
    }
    if (rec.type === 'console' && batch.console.length < BATCH_LIMIT) {
      const c: HookBatch['console'][number] = { level: str(rec.level, 20), text: str(rec.text), time: typeof rec.time === 'number' ? rec.time : Date.now() };
      if (typeof rec.url === 'string') c.url = str(rec.url, 2000);
      batch.console.push(c);
      if (!scheduled) {
        scheduled = true;
        setTimeout(flush, BATCH_MS);
      }
    }
  });
  // Hooks installed before this relay are waiting for this.
  controlPageHooks(win, { ready: true });
}
