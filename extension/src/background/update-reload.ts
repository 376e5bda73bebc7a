// The reload that finishes an update (protocol Reload): the daemon rewrote
// the folder this extension was loaded from with a newer build, and
// chrome.runtime.reload() loads it. A reload clears chrome.storage.session,
// which holds the shared tabs, their numbers and the document counter, and
// orphans the content scripts in open tabs. So before reloading, those are
// saved to chrome.storage.local (CARRY_KEY); the reloaded service worker
// restores them once, drops the saved copy, and injects the content script
// into the shared tabs again. The document counter continues, so a ref
// given out before the reload names a document that is gone: stale_ref,
// never another element. The idempotency records (idempotency.ts, also in
// chrome.storage.session) cross too, with their expiry, so a retry of an
// action that finished just before the reload is answered as a repeat and
// not run again. Pairing (secret, slug, label) and the profile id are in
// chrome.storage.local already and survive the reload as they are.
import type { Reload, TabOwner } from '../protocol.gen';
import { injectTop } from './content-bridge';
import { recordsToCarry, restoreCarriedRecords } from './idempotency';
import { updateState, type TabState } from './state';

/** The chrome.storage.local key of the saved state, present only across a reload. */
export const CARRY_KEY = 'updateCarry';
/** A saved state older than this is ignored (the reload did not follow, or the browser was closed meanwhile). */
export const CARRY_MAX_AGE_MS = 60_000;

/** What crosses the reload: the shared tabs and counters of TabState. */
export interface Carry {
  /** Date.now() when saved. */
  at: number;
  /** The build that saved it (manifest version_name, or version). */
  from: string;
  nextNumber: number;
  nextDoc: number;
  shared: Record<string, number>;
  numbers: Record<string, number>;
  recent: number[];
  owners: Record<string, TabOwner>;
  /** The idempotency records (recordsToCarry), checked again when put back (restoreCarriedRecords). */
  idem?: Record<string, unknown>;
}

/** The part of s that a reload carries. */
export function carryOf(s: TabState, now: number, from: string): Carry {
  return { at: now, from, nextNumber: s.nextNumber, nextDoc: s.nextDoc, shared: s.shared, numbers: s.numbers, recent: s.recent, owners: s.owners };
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;

/**
 * Validates a saved carry: undefined when it is malformed, older than
 * CARRY_MAX_AGE_MS or from the future. Entries naming tabs not in live are
 * dropped; numbers and counters are kept as they were, never lowered.
 */
export function parseCarry(raw: unknown, now: number, live: ReadonlySet<number>): Carry | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const o = raw as Record<string, unknown>;
  if (typeof o.at !== 'number' || now - o.at > CARRY_MAX_AGE_MS || o.at - now > 5_000) return undefined;
  if (!isInt(o.nextNumber) || !isInt(o.nextDoc)) return undefined;
  const ints = (v: unknown): Record<string, number> => {
    const out: Record<string, number> = {};
    if (typeof v !== 'object' || v === null) return out;
    for (const [k, n] of Object.entries(v)) if (live.has(Number(k)) && isInt(n)) out[k] = n;
    return out;
  };
  const owners: Record<string, TabOwner> = {};
  if (typeof o.owners === 'object' && o.owners !== null) {
    for (const [k, v] of Object.entries(o.owners)) {
      if (live.has(Number(k)) && typeof v === 'object' && v !== null && typeof (v as TabOwner).app === 'string') owners[k] = v as TabOwner;
    }
  }
  const shared = ints(o.shared);
  return {
    at: o.at,
    from: typeof o.from === 'string' ? o.from : '',
    nextNumber: o.nextNumber,
    nextDoc: o.nextDoc,
    shared,
    numbers: ints(o.numbers),
    recent: Array.isArray(o.recent) ? o.recent.filter((id): id is number => typeof id === 'number' && String(id) in shared) : [],
    owners: Object.fromEntries(Object.entries(owners).filter(([k]) => k in shared)),
    ...(typeof o.idem === 'object' && o.idem !== null ? { idem: o.idem as Record<string, unknown> } : {}),
  };
}

/** Puts a carry into the (fresh) session state: counters never go down, numbers in use stay. */
export function applyCarry(s: TabState, c: Carry): void {
  s.nextNumber = Math.max(s.nextNumber, c.nextNumber);
  s.nextDoc = Math.max(s.nextDoc, c.nextDoc);
  for (const [k, n] of Object.entries(c.numbers)) s.numbers[k] ??= n;
  for (const [k, n] of Object.entries(c.shared)) {
    s.shared[k] ??= n;
    s.numbers[k] ??= n;
  }
  for (const [k, o] of Object.entries(c.owners)) s.owners[k] ??= o;
  s.recent = [...s.recent, ...c.recent.filter((id) => !s.recent.includes(id))];
}

/** Saves the shared tabs and counters, then reloads the extension (protocol Reload). */
export async function reloadForUpdate(frame: Reload): Promise<void> {
  const m = chrome.runtime.getManifest();
  // Read inside the update queue, so no share or document numbering is lost between the save and the reload.
  const carry = await updateState((s) => carryOf(s, Date.now(), m.version_name ?? m.version));
  // After the state: a step recorded meanwhile is carried as running (a retry is refused, never run again).
  carry.idem = await recordsToCarry();
  await chrome.storage.local.set({ [CARRY_KEY]: carry });
  console.info(`tether: reloading to update from ${carry.from} to ${frame.versionName || frame.version}`);
  chrome.runtime.reload();
}

let restoring: Promise<void> | undefined;

/**
 * Restores what reloadForUpdate saved, once per service worker start (the
 * copy is deleted first, so it is used at most once), and injects the
 * content script into the shared tabs again. Resolves when the state is
 * back; never rejects.
 */
export function restoredAfterReload(): Promise<void> {
  restoring ??= restore().catch((err: unknown) => console.error('tether: restoring the shared tabs after the update failed', err));
  return restoring;
}

async function restore(): Promise<void> {
  const got = await chrome.storage.local.get(CARRY_KEY);
  if (got[CARRY_KEY] === undefined) return;
  await chrome.storage.local.remove(CARRY_KEY);
  const tabs = await chrome.tabs.query({});
  const live = new Set(tabs.flatMap((t) => (t.id === undefined ? [] : [t.id])));
  const carry = parseCarry(got[CARRY_KEY], Date.now(), live);
  if (!carry) return;
  await restoreCarriedRecords(carry.idem).catch((err: unknown) => console.error('tether: restoring the idempotency records after the update failed', err));
  await updateState((s) => applyCarry(s, carry));
  // The content scripts of these tabs belong to the extension before the reload and no longer answer.
  for (const t of tabs) {
    if (t.id === undefined || !(String(t.id) in carry.shared)) continue;
    await injectTop(t.id, t.url || t.pendingUrl || '').catch(() => undefined); // a page that cannot be scripted now is injected at the next call
  }
}
