// The service worker's session state: which tabs are shared under which
// number, which was used last, and how many documents each tab has loaded.
// Kept in chrome.storage.session so it survives service-worker restarts (and
// is cleared when the browser or the extension restarts). Updates are
// serialised so concurrent requests never lose one another's writes.

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
  /** Documents loaded so far per tab id (for ref prefixes); any tab, shared or not. */
  docs: Record<string, number>;
}

const KEY = 'tabState';

function empty(): TabState {
  return { nextNumber: 1, shared: {}, numbers: {}, recent: [], docs: {} };
}

let cache: Promise<TabState> | undefined;
let queue: Promise<unknown> = Promise.resolve();

function load(): Promise<TabState> {
  cache ??= chrome.storage.session.get(KEY).then((got) => ({ ...empty(), ...(got[KEY] as Partial<TabState> | undefined) }));
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
    await chrome.storage.session.set({ [KEY]: state });
    return out;
  });
  queue = run;
  return run;
}
