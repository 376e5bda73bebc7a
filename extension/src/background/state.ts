// The service worker's session state: which tabs are shared under which
// number, which was used last, which document each frame shows (documents are
// numbered per profile, for refs), and each tab's dialogs (reported, open)
// and armed answers.
// Kept in chrome.storage.session so it survives service-worker restarts (and
// is cleared when the browser or the extension restarts). Updates are
// serialised so concurrent requests never lose one another's writes.
import type { DialogEvent, TabOwner } from '../protocol.gen';
import type { ArmedAnswer } from '../shared/page-hooks';

export interface TabState {
  /** The next shared-tab number to hand out; numbers are never reused in a session. */
  nextNumber: number;
  /** Shared tabs: Chrome tab id → Tether tab number. */
  shared: Record<string, number>;
  /**
   * Every tab id that was ever given a number and still lives → that number,
   * so a tab that is unshared and shared again keeps it.
   */
  numbers: Record<string, number>;
  /** Shared tab ids, most recently used first. */
  recent: number[];
  /** Shared tab id → the AI app (and session) it belongs to; absent: the user's. */
  owners: Record<string, TabOwner>;
  /** The number of the next document that asks for refs; one counter for the whole profile. */
  nextDoc: number;
  /**
   * Tab id → frameId → the number of the document the frame shows: the last
   * one numbered there, or one restored from the back/forward cache that
   * answered since (documents.ts).
   */
  docs: Record<string, Record<string, number>>;
  /** Tab id → document number → frameId: the documents numbered in the tab (the newest DOCS_KEPT). */
  issued: Record<string, Record<string, number>>;
  /** Tab id → dialogs not yet reported in a result (oldest first, bounded). */
  dialogs: Record<string, DialogEvent[]>;
  /** Tab id → answers armed by handle_dialog for the tab's next dialogs. */
  armed: Record<string, ArmedAnswer[]>;
  /**
   * Tab id → the browser's own dialog that the page-world hooks saw open in
   * the tab and that the user has not answered yet: it blocks the page.
   */
  open: Record<string, OpenDialog>;
}

/** A dialog Chrome shows to the user in a shared tab (kind and message are page text). */
export interface OpenDialog {
  kind: 'alert' | 'confirm' | 'prompt';
  message: string;
  frameId: number;
  /** Date.now() when it opened. */
  since: number;
}

const KEY = 'tabState';

function empty(): TabState {
  return { nextNumber: 1, shared: {}, numbers: {}, recent: [], owners: {}, nextDoc: 1, docs: {}, issued: {}, dialogs: {}, armed: {}, open: {} };
}

let cache: Promise<TabState> | undefined;
let queue: Promise<unknown> = Promise.resolve();
/** The shared tab ids as last loaded or saved; undefined until the state is loaded. */
let sharedIds: ReadonlySet<number> | undefined;
const sharedWatchers: ((ids: ReadonlySet<number>) => void)[] = [];

function mirror(s: TabState): void {
  sharedIds = new Set(Object.keys(s.shared).map(Number));
  for (const w of sharedWatchers) w(sharedIds);
}

/**
 * The shared tab ids, synchronously, for listeners that must drop other
 * tabs' events first thing (webRequest); undefined until the state is
 * loaded (loadState starts that).
 */
export function sharedNow(): ReadonlySet<number> | undefined {
  return sharedIds;
}

/** Calls fn with the shared tab ids whenever the state is loaded or saved. */
export function watchShared(fn: (ids: ReadonlySet<number>) => void): void {
  sharedWatchers.push(fn);
}

/** Starts loading the state (so sharedNow is soon known). */
export function loadState(): void {
  void load().catch(() => undefined);
}

function load(): Promise<TabState> {
  cache ??= chrome.storage.session.get(KEY).then((got) => {
    const s = { ...empty(), ...(got[KEY] as Partial<TabState> | undefined) };
    // State written by protocol 2 counted documents per tab.
    for (const [tab, v] of Object.entries(s.docs)) if (typeof v !== 'object' || v === null) delete s.docs[tab];
    mirror(s);
    return s;
  });
  return cache;
}

/** Reads the state (a snapshot; do not mutate). */
export async function readState(): Promise<TabState> {
  await queue.catch(() => undefined);
  return structuredClone(await load());
}

/** Runs fn on the state after every earlier update, then saves it. */
export function updateState<T>(fn: (s: TabState) => T): Promise<T> {
  const run = queue.catch(() => undefined).then(async () => {
    const state = await load();
    const out = fn(state);
    mirror(state);
    await chrome.storage.session.set({ [KEY]: state });
    return out;
  });
  queue = run;
  return run;
}
