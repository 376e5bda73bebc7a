import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

type Listener = { fn: unknown; filter: chrome.webRequest.RequestFilter; extra?: string[]; name: number };

/**
 * Just enough of chrome for network-listeners.ts: webRequest events that
 * name each listener by a counter of the run, as Chrome's bindings do, and
 * keep what a stopped worker leaves (every name ever added and not removed).
 */
function fakeChrome(session: Record<string, unknown> = {}) {
  let counter = 0;
  const live: Listener[] = [];
  const removed: number[] = [];
  const platformCalls = { n: 0 };
  const event = () => ({
    addListener: (fn: unknown, filter: chrome.webRequest.RequestFilter, extra?: string[]) => void live.push({ fn, filter, extra, name: ++counter }),
    removeListener: (fn: unknown) => {
      for (let i = live.length - 1; i >= 0; i--) {
        if (live[i]?.fn === fn) removed.push(...live.splice(i, 1).map((l) => l.name));
      }
    },
  });
  (globalThis as unknown as { chrome: unknown }).chrome = {
    webRequest: { onBeforeRequest: event(), onSendHeaders: event(), onHeadersReceived: event(), onCompleted: event(), onErrorOccurred: event() },
    storage: {
      session: {
        get: async (key: string) => (key in session ? { [key]: structuredClone(session[key]) } : {}),
        set: async (items: Record<string, unknown>) => void Object.assign(session, structuredClone(items)),
      },
    },
    runtime: { getPlatformInfo: async () => void platformCalls.n++ },
  };
  return { live, removed, session, platformCalls };
}

const handlers = { onBeforeRequest: vi.fn(), onSendHeaders: vi.fn(), onHeadersReceived: vi.fn(), onCompleted: vi.fn(), onErrorOccurred: vi.fn() };

async function start() {
  vi.resetModules();
  const m = await import('../src/background/network-listeners');
  m.startListening(handlers);
  await new Promise((r) => setTimeout(r, 0)); // the stored names are read
  return m;
}

describe('webRequest listeners per shared tab', () => {
  afterEach(() => vi.useRealTimers());

  it('registers none while nothing is shared, and a filtered set per shared tab', async () => {
    const c = fakeChrome();
    const m = await start();
    m.listenTo(new Set());
    expect(c.live).toEqual([]);
    m.listenTo(new Set([7]));
    expect(c.live).toHaveLength(5);
    for (const l of c.live) expect(l.filter).toEqual({ urls: ['<all_urls>'], tabId: 7 });
    expect(c.live.filter((l) => l.extra?.includes('extraHeaders'))).toHaveLength(3);
    m.listenTo(new Set([7, 8]));
    expect(c.live.map((l) => l.filter.tabId)).toEqual([7, 7, 7, 7, 7, 8, 8, 8, 8, 8]);
    // Unsharing 7 removes its set only (each set has its own functions).
    m.listenTo(new Set([8]));
    expect(c.live.map((l) => l.filter.tabId)).toEqual([8, 8, 8, 8, 8]);
    expect(m.listenedTabs()).toEqual([8]);
    m.listenTo(new Set());
    expect(c.live).toEqual([]);
  });

  it('calls the handlers with the events of its tab', async () => {
    const c = fakeChrome();
    const m = await start();
    m.listenTo(new Set([3]));
    (c.live[0]?.fn as (d: unknown) => void)({ tabId: 3, requestId: 'r' });
    expect(handlers.onBeforeRequest).toHaveBeenCalledWith({ tabId: 3, requestId: 'r' });
  });

  it('keeps the number of the last name in use, and a restarted worker sweeps the names it does not reuse', async () => {
    const c = fakeChrome();
    let m = await start();
    m.listenTo(new Set([1, 2, 3])); // names 1-15
    m.listenTo(new Set([3])); // 11-15 stay
    await Promise.resolve();
    expect(c.session['webRequestNames']).toBe(15);

    // The worker stops and starts again: names count from 1; tab 3 gets 1-5,
    // and 6-15 (inactive in Chrome with the old filters) are added and removed.
    const again = fakeChrome(c.session);
    m = await start();
    m.listenTo(new Set([3]));
    expect(again.live.map((l) => [l.name, l.filter.tabId])).toEqual([1, 2, 3, 4, 5].map((n) => [n, 3]));
    expect([...again.removed].sort((a, b) => a - b)).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    await Promise.resolve();
    expect(c.session['webRequestNames']).toBe(5);
  });

  it('keeps a worker with a shared tab running, and lets it stop when none is', async () => {
    vi.useFakeTimers();
    const c = fakeChrome();
    vi.resetModules();
    const m = await import('../src/background/network-listeners');
    m.startListening(handlers);
    m.listenTo(new Set([4]));
    vi.advanceTimersByTime(m.KEEP_RUNNING_MS * 3);
    expect(c.platformCalls.n).toBe(3);
    m.listenTo(new Set());
    vi.advanceTimersByTime(m.KEEP_RUNNING_MS * 3);
    expect(c.platformCalls.n).toBe(3);
  });
});

beforeEach(() => vi.clearAllMocks());
