import { beforeEach, describe, expect, it, vi } from 'vitest';

/** Just enough of chrome for state.ts: the session storage holds which tabs are shared. */
function fakeChrome(shared: Record<string, number>) {
  const session: Record<string, unknown> = { tabState: { shared } };
  (globalThis as unknown as { chrome: unknown }).chrome = {
    storage: {
      session: {
        get: async (key: string) => (key in session ? { [key]: structuredClone(session[key]) } : {}),
        set: async (items: Record<string, unknown>) => void Object.assign(session, structuredClone(items)),
      },
    },
  };
}

async function load() {
  vi.resetModules();
  const state = await import('../src/background/state');
  const net = await import('../src/background/network');
  await state.readState(); // loads the mirror sharedNow reads
  return { state, net };
}

const base = { frameId: 0, parentFrameId: -1, method: 'GET', type: 'xmlhttprequest' as const, timeStamp: 1000 };

describe('network ring', () => {
  beforeEach(() => fakeChrome({ '7': 1 }));

  it('keeps shared tabs only, and nothing of tab -1', async () => {
    const { net } = await load();
    net.onBeforeRequest({ ...base, requestId: 'a', tabId: 7, url: 'https://a.test/x' } as never);
    net.onBeforeRequest({ ...base, requestId: 'b', tabId: 8, url: 'https://a.test/unshared' } as never);
    net.onBeforeRequest({ ...base, requestId: 'c', tabId: -1, url: 'https://a.test/sw' } as never);
    net.onCompleted({ ...base, requestId: 'b', tabId: 8, url: 'https://a.test/unshared', statusCode: 200, fromCache: false, timeStamp: 1010 } as never);
    expect(net.requestsOf(7, 1).requests.map((r) => r.url)).toEqual(['https://a.test/x']);
    expect(net.requestsOf(8, 2).requests).toEqual([]);
    expect(net.requestsOf(-1, 0).requests).toEqual([]);
  });

  it('redacts secret headers as they arrive and lists without headers', async () => {
    const { net } = await load();
    net.onBeforeRequest({ ...base, requestId: 'a', tabId: 7, url: 'https://a.test/x' } as never);
    net.onSendHeaders({ ...base, requestId: 'a', tabId: 7, url: 'https://a.test/x', requestHeaders: [{ name: 'Authorization', value: 'Bearer t' }, { name: 'cookie', value: 'sid=1' }, { name: 'Accept', value: '*/*' }] } as never);
    net.onCompleted({ ...base, requestId: 'a', tabId: 7, url: 'https://a.test/x', statusCode: 200, fromCache: false, timeStamp: 1042, responseHeaders: [{ name: 'Set-Cookie', value: 's=2' }, { name: 'Content-Length', value: '12' }] } as never);
    const one = net.requestsOf(7, 1, 'a').requests[0];
    expect(JSON.stringify(one)).not.toMatch(/Bearer t|sid=1|s=2/);
    expect(one?.requestHeaders).toContainEqual({ name: 'Authorization', value: '<redacted>' });
    expect(one?.responseHeaders).toContainEqual({ name: 'Set-Cookie', value: '<redacted>' });
    const listed = net.requestsOf(7, 1).requests[0];
    expect(listed).toMatchObject({ status: 200, duration: 42, size: 12 });
    expect(listed?.requestHeaders).toBeUndefined();
  });

  it('is bounded, counting what it dropped, and goes when the tab is unshared', async () => {
    const { net, state } = await load();
    for (let i = 0; i < net.NETWORK_LIMIT + 5; i++) net.onBeforeRequest({ ...base, requestId: String(i), tabId: 7, url: `https://a.test/${i}` } as never);
    const r = net.requestsOf(7, 1);
    expect(r.requests.length).toBe(net.NETWORK_LIMIT);
    expect(r.dropped).toBe(5);
    state.watchShared(net.keepRingsOf);
    await state.updateState((s) => void delete s.shared['7']);
    expect(net.requestsOf(7, 1).requests).toEqual([]);
    net.onBeforeRequest({ ...base, requestId: 'late', tabId: 7, url: 'https://a.test/late' } as never);
    expect(net.requestsOf(7, 1).requests).toEqual([]);
  });
});

describe('download attribution', () => {
  it('names the origin of blob: URLs, and of data: URLs by their referrer', async () => {
    fakeChrome({});
    const { downloadOrigin } = await import('../src/background/downloads');
    expect(downloadOrigin('blob:https://a.test/1234')).toBe('https://a.test');
    expect(downloadOrigin('data:text/plain,hi', 'https://b.test/page')).toBe('https://b.test');
    expect(downloadOrigin('data:text/plain,hi')).toBeUndefined();
    expect(downloadOrigin('https://c.test:8443/f.pdf')).toBe('https://c.test:8443');
  });
});
