// At most once: a daemon request that carries an idempotency key (the
// agent's call, see Request.idempotencyKey) acts at most once per key, even
// across a daemon restart or a service-worker restart, and a key belongs to
// one call. The key is recorded in chrome.storage.session, with the call it
// belongs to (its tool and arguments' fingerprint, Request.tool and
// callFingerprint), BEFORE the handler runs. A request of another call with
// that key (another tool or other arguments) is refused without running. A
// call may send several requests: reads just run; each method that acts is
// a step of the call, recorded before it runs, and a repeat of that step is
// answered from the record: the first answer when it was kept, else a
// "duplicate" error telling the agent to look with browser_snapshot, never
// by acting.
//
// Records live 10 minutes from the call's first request. The store is
// bounded: at most MAX_ENTRIES keys and MAX_TOTAL_CHARS characters of JSON
// in all (oldest dropped first); an answer longer than MAX_ANSWER_CHARS is
// not kept (a repeat then gets "already done"). Each key is its own storage
// item (IDEM_PREFIX + key) so one write never rewrites the others;
// IDEM_INDEX lists them with their time and size.
import type { Request } from '../protocol.gen';
import type { Outcome } from '../shared/messages';

export const IDEM_TTL_MS = 10 * 60 * 1000;
export const MAX_ENTRIES = 500;
export const MAX_TOTAL_CHARS = 2_000_000;
export const MAX_ANSWER_CHARS = 200_000;
export const IDEM_PREFIX = 'idem:';
export const IDEM_INDEX = 'idemIndex';

/** One step of a call: a request for a method that acts. */
interface IdemStep {
  /** Fingerprint of the request's params: the same step with other params is refused. */
  params: string;
  /** The step's answer once it finished; absent while it runs (or if it died, or was too long to keep). */
  outcome?: Outcome;
  /** True once the step finished. */
  done?: boolean;
}

/** A key's record: the call it belongs to and the steps of that call that act. */
interface IdemRecord {
  /** The call's tool, e.g. "browser_click" ("" from a daemon that does not send it). */
  tool: string;
  /** Fingerprint of the call's arguments ("" from a daemon that does not send it). */
  call: string;
  /** Date.now() when the call's first request arrived. */
  at: number;
  /** The steps that act, by method. */
  steps: Record<string, IdemStep>;
}

/**
 * The methods that change nothing (the daemon's Method.Mutates is false):
 * they claim the key for their call but keep no step, and run again when
 * the call is repeated.
 */
export const READ_METHODS: ReadonlySet<string> = new Set(['snapshot', 'tabs_list', 'find', 'read', 'console', 'screenshot', 'read_url', 'network', 'downloads']);

interface IndexEntry {
  /** Storage item name. */
  k: string;
  at: number;
  /** Characters of the record's JSON. */
  size: number;
}

let queue: Promise<unknown> = Promise.resolve();

/** Runs fn after every earlier store update (one at a time across requests). */
function locked<T>(fn: () => Promise<T>): Promise<T> {
  const run = queue.catch(() => undefined).then(fn);
  queue = run;
  return run;
}

/** A stable text for params (object keys sorted), to tell a key's reuse for other arguments. */
export function fingerprint(params: unknown): string {
  return JSON.stringify(params ?? {}, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

async function readIndex(): Promise<IndexEntry[]> {
  const got = await chrome.storage.session.get(IDEM_INDEX);
  const idx = got[IDEM_INDEX];
  return Array.isArray(idx) ? (idx as IndexEntry[]) : [];
}

/** Saves rec under name and drops expired and excess records (oldest first). */
function save(name: string, rec: IdemRecord, now: number): Promise<void> {
  return saveAll({ [name]: rec }, now);
}

/** Saves each record under its name and drops expired and excess records (oldest first, never one saved here). */
async function saveAll(recs: Record<string, IdemRecord>, now: number): Promise<void> {
  const names = new Set(Object.keys(recs));
  const idx = (await readIndex()).filter((e) => !names.has(e.k));
  for (const [k, rec] of Object.entries(recs)) idx.push({ k, at: rec.at, size: JSON.stringify(rec).length });
  idx.sort((a, b) => a.at - b.at);
  const drop: string[] = [];
  let total = idx.reduce((n, e) => n + e.size, 0);
  for (let oldest = idx[0]; oldest && !names.has(oldest.k); oldest = idx[0]) {
    if (now - oldest.at < IDEM_TTL_MS && idx.length <= MAX_ENTRIES && total <= MAX_TOTAL_CHARS) break;
    const gone = idx.shift()!;
    total -= gone.size;
    drop.push(gone.k);
  }
  await chrome.storage.session.set({ ...recs, [IDEM_INDEX]: idx });
  if (drop.length) await chrome.storage.session.remove(drop);
}

const SNAPSHOT_HINT = 'Do not repeat it: call browser_snapshot to see whether it happened, then decide.';

/** The refusal of a request of another call than the one its key belongs to. */
function otherCall(req: Request, rec: IdemRecord): Outcome {
  const tool = req.tool || req.method;
  const earlier = rec.tool ? (rec.tool === req.tool ? `another ${rec.tool} call (other arguments)` : `a ${rec.tool} call`) : 'another call';
  const age = Math.round((Date.now() - rec.at) / 1000);
  return {
    ok: false,
    error: {
      code: 'bad_request',
      message: `${tool} was not run: its idempotency key ${JSON.stringify(agentKey(req.idempotencyKey))} was already used ${age}s ago for ${earlier}; nothing was done. A key belongs to one call: use a new key for each call, and the same key only to repeat that very call.`,
    },
  };
}

/** The answer to a repeated step, from its record. */
function repeatAnswer(req: Request, rec: IdemRecord, step: IdemStep, params: string): Outcome {
  if (step.params !== params) {
    return {
      ok: false,
      error: {
        code: 'bad_request',
        message: `This call reused idempotency key ${JSON.stringify(agentKey(req.idempotencyKey))} of an earlier ${req.method} with other arguments; nothing was done. Use a new key for each call.`,
      },
    };
  }
  if (step.outcome) return step.outcome;
  const age = Math.round((Date.now() - rec.at) / 1000);
  return {
    ok: false,
    error: {
      code: 'duplicate',
      message: step.done
        ? `This ${req.method} call (idempotency key ${JSON.stringify(agentKey(req.idempotencyKey))}) already ran ${age}s ago; it was not run again. ${SNAPSHOT_HINT}`
        : `This ${req.method} call (idempotency key ${JSON.stringify(agentKey(req.idempotencyKey))}) is still running, or was interrupted by an extension restart, since ${age}s ago; it was not run again. ${SNAPSHOT_HINT}`,
    },
  };
}

/** The answer to a repeated step whose record was dropped for room (Request.sentBefore): never run again. */
function droppedRepeat(req: Request): Outcome {
  return {
    ok: false,
    error: {
      code: 'duplicate',
      message: `This ${req.method} call (idempotency key ${JSON.stringify(agentKey(req.idempotencyKey))}) repeats one that Tether sent to the browser earlier, and the browser no longer holds its record (it keeps the last ${MAX_ENTRIES} keys), so whether it acted is unknown; it was not run again. ${SNAPSHOT_HINT}`,
    },
  };
}

/** A record from storage, or undefined when it is missing, expired or of an older layout. */
function current(v: unknown, now: number): IdemRecord | undefined {
  const rec = v as IdemRecord | undefined;
  if (!rec || typeof rec !== 'object' || typeof rec.steps !== 'object' || rec.steps === null) return undefined;
  return now - rec.at < IDEM_TTL_MS ? rec : undefined;
}

/**
 * The records an extension reload carries (update-reload.ts; a reload
 * clears chrome.storage.session): the unexpired ones, newest first, within
 * MAX_ENTRIES and MAX_TOTAL_CHARS, by storage item name. Read after every
 * earlier store update.
 */
export function recordsToCarry(now = Date.now()): Promise<Record<string, unknown>> {
  return locked(async () => {
    const idx = (await readIndex()).slice().sort((a, b) => b.at - a.at);
    const got = idx.length ? await chrome.storage.session.get(idx.map((e) => e.k)) : {};
    const out: Record<string, IdemRecord> = {};
    let total = 0;
    let n = 0;
    for (const e of idx) {
      const rec = current(got[e.k], now);
      if (!rec) continue;
      const size = JSON.stringify(rec).length;
      if (n >= MAX_ENTRIES || total + size > MAX_TOTAL_CHARS) break;
      out[e.k] = rec;
      total += size;
      n++;
    }
    return out;
  });
}

/**
 * Puts back the records a reload carried (recordsToCarry's result, read
 * from chrome.storage.local: untrusted shape), so a retry of a step that
 * finished before the reload is still answered as a repeat. Skipped: names
 * without IDEM_PREFIX, malformed or expired records (IDEM_TTL_MS still
 * counts from the call's first request), records from the future, and keys
 * the store already holds (a call made since the reload). Returns how many
 * were put back.
 */
export function restoreCarriedRecords(carried: unknown, now = Date.now()): Promise<number> {
  return locked(async () => {
    if (typeof carried !== 'object' || carried === null) return 0;
    const valid = Object.entries(carried as Record<string, unknown>).filter(([k, v]) => {
      if (!k.startsWith(IDEM_PREFIX) || k.length === IDEM_PREFIX.length) return false;
      const rec = current(v, now);
      return !!rec && typeof rec.at === 'number' && rec.at <= now + 5_000 && typeof rec.tool === 'string' && typeof rec.call === 'string';
    });
    if (!valid.length) return 0;
    const have = await chrome.storage.session.get(valid.map(([k]) => k));
    const recs: Record<string, IdemRecord> = {};
    for (const [k, v] of valid.slice(0, MAX_ENTRIES)) if (!current(have[k], now)) recs[k] = v as IdemRecord;
    if (!Object.keys(recs).length) return 0;
    await saveAll(recs, now);
    return Object.keys(recs).length;
  });
}

/**
 * The key as the agent sent it: the daemon puts 12 hex characters naming
 * the agent's app and a dot before it (protocol.IdempotentCall.WireKey), so
 * that two apps' same keys are two calls; messages quote the agent's own.
 */
export function agentKey(key: string | undefined): string {
  return (key ?? '').replace(/^[0-9a-f]{12}\./, '');
}

/**
 * The storage item name under which a daemon from before keys were scoped
 * (it sent the agent's key bare) recorded the call of the scoped key key,
 * or undefined when key is not scoped, or its bare key looks scoped itself
 * (it may then be another app's record). Such a record is at most
 * IDEM_TTL_MS old: it matters only just after Tether was upgraded, when an
 * agent repeats a call the older daemon had sent (the daemon was killed, or
 * the agent lost its answer); without it the repeat would act again.
 */
export function legacyName(key: string): string | undefined {
  const bare = agentKey(key);
  if (bare === key || bare === '' || /^[0-9a-f]{12}\./.test(bare)) return undefined;
  return `${IDEM_PREFIX}${bare}`;
}

/**
 * Runs req through run at most once per (idempotency key, method that
 * acts), for the one call the key belongs to: a request without a key just
 * runs; the first request of a key records the call (tool, arguments'
 * fingerprint); a request of another call with that key is refused; a read
 * of the same call runs; the first request of a method that acts is
 * recorded as a step, then run, then its answer is kept; a repeat of the
 * step within IDEM_TTL_MS gets the kept answer or a "duplicate" error and
 * run is not called; so does a step the daemon says it sent before
 * (Request.sentBefore) when its record was dropped for room. Never throws for store failures of the final write
 * (the answer still goes back).
 */
export async function runOnce(req: Request, run: () => Promise<Outcome>): Promise<Outcome> {
  const key = req.idempotencyKey;
  if (typeof key !== 'string' || key === '') return run();
  let name = `${IDEM_PREFIX}${key}`;
  const tool = typeof req.tool === 'string' ? req.tool : '';
  const call = typeof req.callFingerprint === 'string' ? req.callFingerprint : '';
  const acts = !READ_METHODS.has(req.method);
  const params = fingerprint(req.params);
  const refusal = await locked(async (): Promise<Outcome | undefined> => {
    const now = Date.now();
    const got = await chrome.storage.session.get(name);
    let rec = current(got[name], now);
    const legacy = rec ? undefined : legacyName(key);
    if (legacy) {
      // The same call, recorded by an older daemon under the bare key: a
      // repeat of it. Another call under that bare key is no concern of
      // this one (it may be another app's).
      const old = current((await chrome.storage.session.get(legacy))[legacy], now);
      if (old && old.tool === tool && old.call === call) {
        name = legacy;
        rec = old;
      }
    }
    if (rec && (rec.tool !== tool || rec.call !== call)) return otherCall(req, rec);
    const fresh = !rec;
    rec ??= { tool, call, at: now, steps: {} };
    if (acts) {
      const step = rec.steps[req.method];
      if (step) return repeatAnswer(req, rec, step, params);
      // The daemon sent this step for the key before, and its record is
      // gone (dropped for room): the first attempt may have acted.
      if (req.sentBefore === true) return droppedRepeat(req);
      rec.steps[req.method] = { params };
    } else if (!fresh) {
      return undefined; // a read of a call already recorded
    }
    await save(name, rec, now);
    return undefined;
  });
  if (refusal) return refusal;
  const outcome = await run();
  if (!acts) return outcome;
  await locked(async () => {
    const got = await chrome.storage.session.get(name);
    const rec = current(got[name], Number.NEGATIVE_INFINITY); // even if it expired while the step ran
    const step = rec?.tool === tool && rec.call === call ? rec.steps[req.method] : undefined;
    if (!rec || !step) return; // dropped for room meanwhile (or replaced)
    step.done = true;
    if (JSON.stringify(outcome).length <= MAX_ANSWER_CHARS) step.outcome = outcome;
    await save(name, rec, Date.now());
  }).catch((err: unknown) => console.warn('tether: could not keep the answer of an idempotent call', err));
  return outcome;
}
