// At most once: a daemon request that carries an idempotency key (the
// agent's call, see Request.idempotencyKey) acts at most once per key, even
// across a daemon restart or a service-worker restart. The key is recorded
// in chrome.storage.session BEFORE the handler runs; a repeat is answered
// from the record: the first answer when it was kept, else a "duplicate"
// error telling the agent to look with browser_snapshot, never by acting.
//
// Records live 10 minutes. The store is bounded: at most MAX_ENTRIES
// records and MAX_TOTAL_CHARS characters of JSON in all (oldest dropped
// first); an answer longer than MAX_ANSWER_CHARS is not kept (a repeat then
// gets "already done"). Each record is its own storage item (IDEM_PREFIX +
// method + key) so one write never rewrites the others; IDEM_INDEX lists
// them with their time and size.
import type { Request } from '../protocol.gen';
import type { Outcome } from '../shared/messages';

export const IDEM_TTL_MS = 10 * 60 * 1000;
export const MAX_ENTRIES = 500;
export const MAX_TOTAL_CHARS = 2_000_000;
export const MAX_ANSWER_CHARS = 200_000;
export const IDEM_PREFIX = 'idem:';
export const IDEM_INDEX = 'idemIndex';

interface IdemRecord {
  /** Fingerprint of the request's params: a key reused for other arguments is refused. */
  params: string;
  /** Date.now() when the first request arrived. */
  at: number;
  /** The first request's answer once it finished; absent while it runs (or if it died, or was too long to keep). */
  outcome?: Outcome;
  /** True once the first request finished. */
  done?: boolean;
}

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
async function save(name: string, rec: IdemRecord, now: number): Promise<void> {
  const size = JSON.stringify(rec).length;
  const idx = (await readIndex()).filter((e) => e.k !== name);
  idx.push({ k: name, at: rec.at, size });
  idx.sort((a, b) => a.at - b.at);
  const drop: string[] = [];
  let total = idx.reduce((n, e) => n + e.size, 0);
  for (let oldest = idx[0]; oldest && oldest.k !== name; oldest = idx[0]) {
    if (now - oldest.at < IDEM_TTL_MS && idx.length <= MAX_ENTRIES && total <= MAX_TOTAL_CHARS) break;
    const gone = idx.shift()!;
    total -= gone.size;
    drop.push(gone.k);
  }
  await chrome.storage.session.set({ [name]: rec, [IDEM_INDEX]: idx });
  if (drop.length) await chrome.storage.session.remove(drop);
}

const SNAPSHOT_HINT = 'Do not repeat it: call browser_snapshot to see whether it happened, then decide.';

/** The answer to a repeated key, from the first request's record. */
function repeatAnswer(req: Request, rec: IdemRecord, params: string): Outcome {
  if (rec.params !== params) {
    return {
      ok: false,
      error: {
        code: 'bad_request',
        message: `This call reused idempotency key ${JSON.stringify(req.idempotencyKey)} of an earlier ${req.method} with other arguments; nothing was done. Use a new key for each call.`,
      },
    };
  }
  if (rec.outcome) return rec.outcome;
  const age = Math.round((Date.now() - rec.at) / 1000);
  return {
    ok: false,
    error: {
      code: 'duplicate',
      message: rec.done
        ? `This ${req.method} call (idempotency key ${JSON.stringify(req.idempotencyKey)}) already ran ${age}s ago; it was not run again. ${SNAPSHOT_HINT}`
        : `This ${req.method} call (idempotency key ${JSON.stringify(req.idempotencyKey)}) is still running, or was interrupted by an extension restart, since ${age}s ago; it was not run again. ${SNAPSHOT_HINT}`,
    },
  };
}

/**
 * Runs req through run at most once per (method, idempotency key): a request
 * without a key just runs; the first with a key is recorded, then run, then
 * its answer is kept; a repeat within IDEM_TTL_MS gets the kept answer or a
 * "duplicate" error and run is not called. Never throws for store failures
 * of the final write (the answer still goes back).
 */
export async function runOnce(req: Request, run: () => Promise<Outcome>): Promise<Outcome> {
  const key = req.idempotencyKey;
  if (typeof key !== 'string' || key === '') return run();
  const name = `${IDEM_PREFIX}${req.method}:${key}`;
  const params = fingerprint(req.params);
  const repeat = await locked(async () => {
    const now = Date.now();
    const got = await chrome.storage.session.get(name);
    const rec = got[name] as IdemRecord | undefined;
    if (rec && now - rec.at < IDEM_TTL_MS) return rec;
    await save(name, { params, at: now }, now);
    return undefined;
  });
  if (repeat) return repeatAnswer(req, repeat, params);
  const outcome = await run();
  await locked(async () => {
    const got = await chrome.storage.session.get(name);
    const rec = got[name] as IdemRecord | undefined;
    if (!rec) return; // dropped for room meanwhile
    rec.done = true;
    if (JSON.stringify(outcome).length <= MAX_ANSWER_CHARS) rec.outcome = outcome;
    await save(name, rec, Date.now());
  }).catch((err: unknown) => console.warn('tether: could not keep the answer of an idempotent call', err));
  return outcome;
}
