import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Request } from '../src/protocol.gen';
import type { Outcome } from '../src/shared/messages';

/** chrome.storage.session as the store uses it. */
function fakeSession() {
  const items: Record<string, unknown> = {};
  const session = {
    get: async (keys: string | string[]) =>
      Object.fromEntries((Array.isArray(keys) ? keys : [keys]).filter((k) => k in items).map((k) => [k, structuredClone(items[k])])),
    set: async (v: Record<string, unknown>) => void Object.assign(items, structuredClone(v)),
    remove: async (keys: string | string[]) => {
      for (const k of Array.isArray(keys) ? keys : [keys]) delete items[k];
    },
  };
  vi.stubGlobal('chrome', { storage: { session } });
  return items;
}

async function load() {
  vi.resetModules();
  return import('../src/background/idempotency');
}

const click = (key?: string, ref = 'e1'): Request => ({
  type: 'request',
  id: String(Math.random()),
  method: 'click',
  params: { ref },
  timeoutMs: 30_000,
  ...(key ? { idempotencyKey: key, tool: 'browser_click', callFingerprint: `fp-${ref}` } : {}),
});

/** A request of method for the call (tool, fp) with key. */
const req = (method: Request['method'], params: Record<string, unknown>, key: string, tool?: string, fp?: string): Request => ({
  type: 'request',
  id: String(Math.random()),
  method,
  params,
  timeoutMs: 30_000,
  idempotencyKey: key,
  ...(tool !== undefined ? { tool, callFingerprint: fp ?? `fp-${tool}` } : {}),
});

const clicked: Outcome = { ok: true, value: { message: 'Clicked e1.' } };

describe('runOnce', () => {
  let items: Record<string, unknown>;
  beforeEach(() => {
    items = fakeSession();
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('runs every call without a key', async () => {
    const { runOnce } = await load();
    const run = vi.fn(async () => clicked);
    await runOnce(click(), run);
    await runOnce(click(), run);
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('answers a repeated key with the first answer, without acting', async () => {
    const { runOnce } = await load();
    const run = vi.fn(async () => clicked);
    expect(await runOnce(click('k1'), run)).toEqual(clicked);
    expect(await runOnce(click('k1'), run)).toEqual(clicked);
    expect(run).toHaveBeenCalledTimes(1);
    // Another key acts.
    await runOnce(click('k2'), run);
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('records the key before acting, and a repeat while running is refused', async () => {
    const { runOnce, IDEM_PREFIX } = await load();
    let finish!: (o: Outcome) => void;
    const run = vi.fn(() => {
      expect(items[`${IDEM_PREFIX}k1`]).toBeDefined();
      return new Promise<Outcome>((resolve) => (finish = resolve));
    });
    const first = runOnce(click('k1'), run);
    await vi.waitFor(() => expect(run).toHaveBeenCalledTimes(1));
    const second = await runOnce(click('k1'), run);
    expect(second.ok).toBe(false);
    if (!second.ok) {
      expect(second.error.code).toBe('duplicate');
      expect(second.error.message).toMatch(/still running.*browser_snapshot/);
    }
    finish(clicked);
    expect(await first).toEqual(clicked);
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('survives a service-worker restart: an interrupted call is not run again', async () => {
    let { runOnce } = await load();
    void runOnce(click('k1'), () => new Promise<Outcome>(() => undefined)); // never ends: the worker dies
    await vi.waitFor(() => expect(Object.keys(items).length).toBeGreaterThan(0));
    ({ runOnce } = await load()); // a new worker, same session storage
    const run = vi.fn(async () => clicked);
    const again = await runOnce(click('k1'), run);
    expect(run).not.toHaveBeenCalled();
    expect(again.ok ? '' : again.error.message).toMatch(/interrupted by an extension restart/);
  });

  it('refuses a key reused with other arguments', async () => {
    const { runOnce } = await load();
    const run = vi.fn(async () => clicked);
    await runOnce(click('k1', 'e1'), run);
    const other = await runOnce(click('k1', 'e2'), run);
    expect(run).toHaveBeenCalledTimes(1);
    expect(other.ok ? '' : other.error.code).toBe('bad_request');
  });

  it("keeps two apps' same key apart, and quotes the agent's key without its app's prefix", async () => {
    const { runOnce } = await load();
    const run = vi.fn(async () => clicked);
    // The daemon scopes each app's key: 12 hex characters and a dot before it.
    await runOnce(click('0123456789ab.1'), run);
    await runOnce(click('ba9876543210.1'), run);
    expect(run).toHaveBeenCalledTimes(2);
    const again = await runOnce(click('0123456789ab.1', 'e2'), run);
    expect(run).toHaveBeenCalledTimes(2);
    const message = again.ok ? '' : again.error.message;
    expect(message).toContain('key "1"');
    expect(message).not.toContain('0123456789ab');
  });

  it("answers a repeat of a call an older daemon recorded under the bare key, never acting again (upgrade)", async () => {
    const { runOnce } = await load();
    const run = vi.fn(async () => clicked);
    // An older daemon sent the agent's key bare; the click ran.
    await runOnce(click('app-click-7'), run);
    // After the upgrade the same app repeats it: the daemon now scopes the key.
    const again = await runOnce(click('0123456789ab.app-click-7'), run);
    expect(run).toHaveBeenCalledTimes(1);
    expect(again).toEqual(clicked);
    // Another call under that bare key (another app's, say) runs: it is not this one.
    await runOnce(click('ba9876543210.app-click-7', 'e2'), run);
    expect(run).toHaveBeenCalledTimes(2);
    // A bare key that looks scoped itself is never taken for a legacy one.
    await runOnce(click('ba9876543210.x'), run);
    await runOnce(click('0123456789ab.ba9876543210.x'), run);
    expect(run).toHaveBeenCalledTimes(4);
  });

  it('forgets keys after 10 minutes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { runOnce, IDEM_TTL_MS } = await load();
    const run = vi.fn(async () => clicked);
    await runOnce(click('k1'), run);
    vi.setSystemTime(Date.now() + IDEM_TTL_MS + 1);
    await runOnce(click('k1'), run);
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('stays bounded in count and size', async () => {
    const { runOnce, MAX_ENTRIES, MAX_ANSWER_CHARS, IDEM_INDEX, IDEM_PREFIX } = await load();
    const run = vi.fn(async () => clicked);
    for (let i = 0; i < MAX_ENTRIES + 40; i++) await runOnce(click(`k${i}`), run);
    const stored = Object.keys(items).filter((k) => k.startsWith(IDEM_PREFIX));
    expect(stored.length).toBeLessThanOrEqual(MAX_ENTRIES);
    expect((items[IDEM_INDEX] as unknown[]).length).toBe(stored.length);
    expect(stored).not.toContain(`${IDEM_PREFIX}k0`);

    // An answer too long to keep: a repeat is told it already ran.
    const big: Outcome = { ok: true, value: { text: 'x'.repeat(MAX_ANSWER_CHARS + 1) } };
    const bigRun = vi.fn(async () => big);
    expect(await runOnce(click('big'), bigRun)).toEqual(big);
    const again = await runOnce(click('big'), bigRun);
    expect(bigRun).toHaveBeenCalledTimes(1);
    expect(again.ok ? '' : again.error.message).toMatch(/already ran/);
    expect(JSON.stringify(items).length).toBeLessThan(1_000_000);
  });

  it('never acts again on a repeat whose record was dropped for room, when the daemon says it sent the step before', async () => {
    const { runOnce, MAX_ENTRIES } = await load();
    const run = vi.fn(async () => clicked);
    await runOnce(click('k0'), run);
    // Other calls' keys push k0's record out (reads take room too).
    const find = vi.fn(async (): Promise<Outcome> => ({ ok: true, value: {} }));
    for (let i = 1; i <= MAX_ENTRIES + 5; i++) await runOnce(req('find', { text: 'x' }, `f${i}`, 'browser_find'), find);
    expect(run).toHaveBeenCalledTimes(1);
    // The daemon's repeat of k0's click says it went to the browser before.
    const again = await runOnce({ ...click('k0'), sentBefore: true }, run);
    expect(run).toHaveBeenCalledTimes(1);
    expect(again.ok ? '' : again.error.code).toBe('duplicate');
    expect(again.ok ? '' : again.error.message).toMatch(/no longer holds its record.*not run again.*browser_snapshot/);
    // A first attempt (the daemon sent none before) runs as always.
    await runOnce({ ...click('k-new'), sentBefore: false }, run);
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('refuses the key of a click for every other call, read-only ones too, without running', async () => {
    const { runOnce } = await load();
    const run = vi.fn(async () => clicked);
    await runOnce(click('k1'), run);
    await runOnce(click('k1'), run);
    expect(run).toHaveBeenCalledTimes(1);
    for (const other of [
      req('navigate', { url: 'https://example.com/' }, 'k1', 'browser_navigate'),
      req('history', { action: 'back' }, 'k1', 'browser_navigate_back'),
      req('history', { action: 'reload' }, 'k1', 'browser_reload'),
      req('read_url', { url: 'https://example.com/' }, 'k1', 'browser_read_url'),
      req('snapshot', {}, 'k1', 'browser_snapshot'),
      req('click', { ref: 'e1' }, 'k1', 'browser_click', 'fp-other'),
    ]) {
      const got = await runOnce(other, run);
      expect(got.ok ? '' : got.error.code).toBe('bad_request');
      expect(got.ok ? '' : got.error.message).toMatch(/already used .* for (a browser_click call|another browser_click call \(other arguments\)).*new key for each call/);
    }
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('lets a read claim its key: a later click with it is refused', async () => {
    const { runOnce } = await load();
    const run = vi.fn(async () => clicked);
    await runOnce(req('read_url', { url: 'https://a/' }, 'k1', 'browser_read_url'), run);
    await runOnce(req('read_url', { url: 'https://a/' }, 'k1', 'browser_read_url'), run); // a read of the same call runs again
    expect(run).toHaveBeenCalledTimes(2);
    const got = await runOnce(click('k1'), run);
    expect(got.ok ? '' : got.error.message).toMatch(/a browser_read_url call/);
    expect(run).toHaveBeenCalledTimes(2);
  });

  it('runs each step of one call once: a repeat of the call is answered step by step', async () => {
    const { runOnce } = await load();
    const opened: Outcome = { ok: true, value: { tab: 2 } };
    const navigated: Outcome = { ok: true, value: { url: 'https://a/' } };
    const openRun = vi.fn(async () => opened);
    const navRun = vi.fn(async () => navigated);
    const readRun = vi.fn(async () => clicked);
    const steps = () => [
      req('tab_new', { url: 'about:blank' }, 'k1', 'browser_tabs', 'fp-new'),
      req('navigate', { tab: 2, url: 'https://a/' }, 'k1', 'browser_tabs', 'fp-new'),
      req('snapshot', { tab: 2 }, 'k1', 'browser_tabs', 'fp-new'),
    ];
    for (let i = 0; i < 2; i++) {
      const [open, nav, snap] = steps();
      expect(await runOnce(open!, openRun)).toEqual(opened);
      expect(await runOnce(nav!, navRun)).toEqual(navigated);
      expect(await runOnce(snap!, readRun)).toEqual(clicked);
    }
    expect(openRun).toHaveBeenCalledTimes(1);
    expect(navRun).toHaveBeenCalledTimes(1);
    expect(readRun).toHaveBeenCalledTimes(2);
  });

  it('keeps one step per method for a daemon that sends no call identity', async () => {
    const { runOnce } = await load();
    const run = vi.fn(async () => clicked);
    await runOnce(req('click', { ref: 'e1' }, 'k1'), run);
    await runOnce(req('click', { ref: 'e1' }, 'k1'), run);
    await runOnce(req('navigate', { url: 'https://a/' }, 'k1'), run);
    expect(run).toHaveBeenCalledTimes(2);
  });
});

describe('idempotency records across an update reload', () => {
  it('a retry of a step that finished before the reload is answered as a repeat, not run again', async () => {
    fakeSession();
    let m = await load();
    const run = vi.fn(async () => clicked);
    expect(await m.runOnce(click('k1'), run)).toEqual(clicked);
    // A step that was still running when the reload came.
    void m.runOnce(click('k2', 'e2'), () => new Promise<Outcome>(() => undefined));
    await new Promise((r) => setTimeout(r, 0));
    // Through chrome.storage.local (JSON), into a fresh session store.
    const carried = JSON.parse(JSON.stringify(await m.recordsToCarry()));
    expect(Object.keys(carried).sort()).toEqual([`${m.IDEM_PREFIX}k1`, `${m.IDEM_PREFIX}k2`]);
    const items = fakeSession();
    m = await load();
    expect(await m.restoreCarriedRecords(carried)).toBe(2);
    expect(items[m.IDEM_INDEX]).toHaveLength(2);
    const again = vi.fn(async () => clicked);
    expect(await m.runOnce(click('k1'), again)).toEqual(clicked);
    const interrupted = await m.runOnce(click('k2', 'e2'), again);
    expect(interrupted).toMatchObject({ ok: false, error: { code: 'duplicate' } });
    expect(again).not.toHaveBeenCalled();
    expect(run).toHaveBeenCalledTimes(1);
  });

  it('keeps the expiry, skips malformed, foreign and future records, and never replaces a newer one', async () => {
    vi.useFakeTimers({ now: 1_700_000_000_000 });
    try {
      fakeSession();
      let m = await load();
      await m.runOnce(click('old'), async () => clicked);
      vi.advanceTimersByTime(m.IDEM_TTL_MS - 1_000);
      await m.runOnce(click('new'), async () => clicked);
      const carried = await m.recordsToCarry();
      expect(Object.keys(carried)).toEqual([`${m.IDEM_PREFIX}new`, `${m.IDEM_PREFIX}old`]);
      vi.advanceTimersByTime(2_000); // "old" expires on the way
      fakeSession();
      m = await load();
      // Meanwhile a call with key "new" was made after the reload: its record stays.
      const other = click('new', 'e9');
      await m.runOnce(other, async () => clicked);
      const bad = {
        ...carried,
        'not-idem': { tool: 'x', call: '', at: Date.now(), steps: {} },
        [`${m.IDEM_PREFIX}future`]: { tool: 'x', call: '', at: Date.now() + 60_000, steps: {} },
        [`${m.IDEM_PREFIX}broken`]: { tool: 'x', at: Date.now() },
      };
      expect(await m.restoreCarriedRecords(bad)).toBe(0);
      expect(await m.restoreCarriedRecords(null)).toBe(0);
      const again = vi.fn(async () => clicked);
      await m.runOnce(click('old'), again); // expired: runs
      expect(again).toHaveBeenCalledTimes(1);
      expect(await m.runOnce(click('new'), again)).toMatchObject({ ok: false, error: { code: 'bad_request' } }); // the key belongs to the newer call
    } finally {
      vi.useRealTimers();
    }
  });
});
