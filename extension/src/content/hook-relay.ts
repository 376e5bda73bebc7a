// Relays the page-world hooks' records (dialogs, console) from the window
// events of main-world.js to the service worker, batched. The records are
// page-controlled data: they are checked for shape and size, nothing more.
import type { HookBatch } from '../shared/messages';
import { CONSOLE_TEXT_LIMIT, HOOK_EVENT } from './page-hooks';

/** Most records relayed per batch; a page that logs more in one tick loses the rest there. */
const BATCH_LIMIT = 500;

export function relayPageHooks(win: Window, send: (batch: HookBatch) => void): void {
  let batch: HookBatch = { dialogs: [], console: [] };
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const out = batch;
    batch = { dialogs: [], console: [] };
    if (out.dialogs.length || out.console.length) send(out);
  };
  win.addEventListener(HOOK_EVENT, (e: Event) => {
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(String((e as CustomEvent).detail)) as Record<string, unknown>;
    } catch {
      return;
    }
    const str = (v: unknown, limit = CONSOLE_TEXT_LIMIT) => (typeof v === 'string' ? v.slice(0, limit) : '');
    if (rec.type === 'dialog' && (rec.kind === 'alert' || rec.kind === 'confirm' || rec.kind === 'prompt')) {
      const d: HookBatch['dialogs'][number] = { kind: rec.kind, message: str(rec.message), accepted: rec.accepted === true, armed: rec.armed === true };
      if (typeof rec.promptText === 'string') d.promptText = str(rec.promptText);
      batch.dialogs.push(d);
      // A dialog goes out at once: the action that caused it reports it.
      flush();
      return;
    } else if (rec.type === 'console' && batch.console.length < BATCH_LIMIT) {
      const c: HookBatch['console'][number] = { level: str(rec.level, 20), text: str(rec.text), time: typeof rec.time === 'number' ? rec.time : Date.now() };
      if (typeof rec.url === 'string') c.url = str(rec.url, 2000);
      batch.console.push(c);
    }
    if (!scheduled) {
      scheduled = true;
      setTimeout(flush, 50);
    }
  });
}
