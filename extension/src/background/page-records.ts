// What the page-world hooks of shared tabs report (relayed by content
// scripts): dialogs, answered by the policy or shown by the browser, and
// console messages. Records of a tab that is not shared are dropped on
// arrival: nothing from before sharing, or after it stopped, is kept.
import type { ConsoleMessage, ConsoleResult, DialogEvent } from '../protocol.gen';
import type { HookBatch } from '../shared/messages';
import { readState, updateState } from './state';
import { sendPageState } from './tab-hooks';

/** Dialogs kept per tab until a result reports them. */
const DIALOG_LIMIT = 50;
/** Console messages kept per tab. */
export const CONSOLE_LIMIT = 1000;
/** Console messages of a tab that survive a service-worker restart (session storage is small). */
const CONSOLE_SAVED = 200;

/** The tab's dialogs not reported yet; they count as reported now. */
export function takeDialogs(tabId: number): Promise<DialogEvent[]> {
  return updateState((s) => {
    const d = s.dialogs[tabId] ?? [];
    delete s.dialogs[tabId];
    return d;
  });
}

/** Hands the tab's armed answers to the page-world hooks of all its frames. */
export async function pushArmed(tabId: number): Promise<void> {
  const queue = (await readState()).armed[tabId] ?? [];
  sendPageState(tabId, { queue });
}

/** A content script in frameId of tabId relayed page-world records. */
export async function onPageHooks(tabId: number, frameId: number, batch: HookBatch): Promise<void> {
  // Dropped first thing, before any write, for a tab that is not shared.
  if ((await readState()).shared[tabId] === undefined) return;
  const dialogs = Array.isArray(batch.dialogs) ? batch.dialogs : [];
  const messages = Array.isArray(batch.console) ? batch.console : [];
  if (dialogs.length > 0) {
    const consumed = await updateState((s) => {
      if (s.shared[tabId] === undefined) return 0;
      const list = (s.dialogs[tabId] ??= []);
      let consumed = 0;
      for (const d of dialogs) {
        if (d.phase === 'open') {
          s.open[tabId] = { kind: d.kind, message: String(d.message), frameId, since: Date.now() };
          continue;
        }
        const e: DialogEvent = { kind: d.kind, message: String(d.message), accepted: d.accepted === true, armed: d.armed === true };
        if (typeof d.promptText === 'string') e.promptText = d.promptText;
        if (d.phase === 'closed') {
          e.native = true;
          if (s.open[tabId]?.frameId === frameId) delete s.open[tabId];
        }
        list.push(e);
        if (e.armed) {
          s.armed[tabId]?.shift();
          consumed++;
        }
      }
      if (list.length > DIALOG_LIMIT) list.splice(0, list.length - DIALOG_LIMIT);
      if (list.length === 0) delete s.dialogs[tabId];
      if (s.armed[tabId]?.length === 0) delete s.armed[tabId];
      return consumed;
    });
    // The other documents of the tab hold copies of the queue: bring them up to date.
    if (consumed > 0) await pushArmed(tabId);
  }
  if (messages.length > 0) {
    await addConsole(
      tabId,
      messages.map((m) => {
        const msg: ConsoleMessage = { level: String(m.level), text: String(m.text), time: Number(m.time) || Date.now() };
        if (typeof m.url === 'string' && m.url) msg.url = m.url;
        return msg;
      }),
    );
  }
}

/** Appends messages to a shared tab's console ring (the caller checked it is shared). */
async function addConsole(tabId: number, messages: ConsoleMessage[]): Promise<void> {
  const all = await loadRings();
  let ring = all.get(tabId);
  if (!ring) all.set(tabId, (ring = { messages: [], dropped: 0 }));
  ring.messages.push(...messages);
  if (ring.messages.length > CONSOLE_LIMIT) {
    ring.dropped += ring.messages.length - CONSOLE_LIMIT;
    ring.messages.splice(0, ring.messages.length - CONSOLE_LIMIT);
  }
  saveRingsSoon();
}

/**
 * Records the browser's own entry for a shared tab's failed request (level
 * "network"), as the console of DevTools shows it.
 */
export async function addNetworkError(tabId: number, req: { method: string; url: string; error?: string; time: number }): Promise<void> {
  if ((await readState()).shared[tabId] === undefined) return;
  await addConsole(tabId, [{ level: 'network', text: `${req.method} ${req.url} ${req.error ?? 'failed'}`, time: req.time }]);
}

// ---- console rings ----

interface Ring {
  messages: ConsoleMessage[];
  dropped: number;
}

const RINGS_KEY = 'consoleRings';
let rings: Promise<Map<number, Ring>> | undefined;
let saveTimer: ReturnType<typeof setTimeout> | undefined;

function loadRings(): Promise<Map<number, Ring>> {
  rings ??= chrome.storage.session.get(RINGS_KEY).then(
    (got) => new Map(Object.entries((got[RINGS_KEY] as Record<string, Ring> | undefined) ?? {}).map(([k, v]) => [Number(k), v])),
    () => new Map(),
  );
  return rings;
}

/** Saves the shared tabs' rings a little later (a burst of logs is one write). */
function saveRingsSoon(): void {
  if (saveTimer) return;
  saveTimer = setTimeout(() => {
    saveTimer = undefined;
    void (async () => {
      const [all, s] = await Promise.all([loadRings(), readState()]);
      const out: Record<string, Ring> = {};
      // Only shared tabs survive a worker restart, and only their last messages.
      for (const [tab, ring] of all) if (s.shared[tab] !== undefined) out[tab] = { messages: ring.messages.slice(-CONSOLE_SAVED), dropped: ring.dropped };
      await chrome.storage.session.set({ [RINGS_KEY]: out }).catch(() => undefined);
    })();
  }, 500);
}

/** The console messages of the tab numbered number (tabId), oldest first; clear empties the ring. */
export async function consoleOf(tabId: number, number: number, clear: boolean): Promise<ConsoleResult> {
  const all = await loadRings();
  const ring = all.get(tabId) ?? { messages: [], dropped: 0 };
  const out: ConsoleResult = { tab: number, messages: ring.messages.slice(), dropped: ring.dropped };
  if (clear) {
    all.delete(tabId);
    saveRingsSoon();
  }
  return out;
}

/** Forgets a tab's console (closed, or no longer shared). */
export async function forgetConsole(tabId: number): Promise<void> {
  if ((await loadRings()).delete(tabId)) saveRingsSoon();
}
