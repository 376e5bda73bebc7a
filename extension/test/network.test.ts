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

  it('bounds methods and header names as well as values', async () => {
    const { net } = await load();
    net.onBeforeRequest({ ...base, requestId: 'm', tabId: 7, method: 'M'.repeat(100_000), url: 'https://a.test/m' } as never);
    expect(net.requestsOf(7, 1).requests[0]?.method.length).toBeLessThanOrEqual(100);
    const [h] = net.redactHeaders([{ name: 'X-' + 'n'.repeat(300_000), value: 'v'.repeat(10_000) }]);
    expect(h?.name.length).toBeLessThanOrEqual(200);
    expect(h?.value.length).toBeLessThanOrEqual(2000);
  });

  it('says a header value that is not UTF-8 is binary, and redacts a binary secret', async () => {
    const { net } = await load();
    expect(net.redactHeaders([{ name: 'X-Latin', binaryValue: [0x61, 0x85, 0x62] }, { name: 'Set-Cookie', binaryValue: [0x85] }, { name: 'X-Empty', value: '' }])).toEqual([
      { name: 'X-Latin', value: '<3 bytes, not UTF-8>' },
      { name: 'Set-Cookie', value: '<redacted>' },
      { name: 'X-Empty', value: '' },
    ]);
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

  it('by a request only when it could be the download, and one download per request', async () => {
    fakeChrome({ '7': 1 });
    const { net } = await load();
    const dl = await import('../src/background/downloads');
    const now = Date.now();
    const item = (id: number, url: string) => ({ id, url, finalUrl: url, referrer: '' }) as chrome.downloads.DownloadItem;
    // The shared tab fetched the file: the user's own download of it in another tab is not the tab's.
    net.onBeforeRequest({ ...base, requestId: 'f', tabId: 7, url: 'https://a.test/f.bin', timeStamp: now } as never);
    expect(await dl.attribute(item(1, 'https://a.test/f.bin'), now)).toBeUndefined();
    // A navigation (or an <a download> link's request) that became the download is.
    net.onBeforeRequest({ ...base, requestId: 'n', tabId: 7, type: 'main_frame', url: 'https://a.test/g.bin', timeStamp: now } as never);
    net.onBeforeRequest({ ...base, requestId: 'o', tabId: 7, type: 'other', url: 'https://a.test/h.bin', timeStamp: now } as never);
    expect(await dl.attribute(item(2, 'https://a.test/g.bin'), now)).toBe(7);
    expect(await dl.attribute(item(3, 'https://a.test/h.bin'), now)).toBe(7);
    // Its request attributed it: a second download of the same URL (the user's, in another tab) is not.
    expect(await dl.attribute(item(4, 'https://a.test/g.bin'), now)).toBeUndefined();
  });
});

/** A fake chrome.downloads with one item, recording calls; tab 7 is shared as 1 at https://a.test. */
function fakeDownloads(item: Partial<chrome.downloads.DownloadItem>) {
  fakeChrome({ '7': 1 });
  const calls: string[] = [];
  const it: Record<string, unknown> = { id: 5, url: 'https://a.test/f.pdf', finalUrl: '', filename: '/dl/f.pdf', state: 'in_progress', paused: false, exists: true, bytesReceived: 10, totalBytes: 100, fileSize: 0, startTime: '2026-01-01T00:00:00Z', danger: 'safe', mime: 'application/pdf', ...item };
  const c = (globalThis as unknown as { chrome: Record<string, unknown> }).chrome;
  c['tabs'] = { get: async () => ({ id: 7, url: 'https://a.test/page' }) };
  c['downloads'] = {
    search: async ({ id }: { id: number }) => (id === it['id'] ? [{ ...it }] : []),
    pause: async (id: number) => void (calls.push(`pause ${id}`), (it['paused'] = true)),
    resume: async (id: number) => void (calls.push(`resume ${id}`), (it['paused'] = false)),
    cancel: async (id: number) => void (calls.push(`cancel ${id}`), Object.assign(it, { state: 'interrupted', error: 'USER_CANCELED', exists: false })),
    removeFile: async (id: number) => void (calls.push(`removeFile ${id}`), (it['exists'] = false)),
  };
  return { calls, it };
}

describe('downloads judged by the policy', () => {
  async function loadDownloads() {
    vi.resetModules();
    const acting = await import('../src/background/acting');
    const dl = await import('../src/background/downloads');
    return { acting, dl };
  }

  it('pauses and reports a download near a tool action; ends are reported', async () => {
    const { calls } = fakeDownloads({});
    const { acting, dl } = await loadDownloads();
    acting.setActingUntil(7, Date.now());
    const frames: unknown[] = [];
    const push = async (f: unknown) => (frames.push(f), true);
    expect(await dl.reportDownload({ id: 5, state: 'in_progress' } as never, 7, push)).toBe(true);
    expect(calls).toEqual(['pause 5']);
    expect(frames[0]).toMatchObject({ type: 'download', event: 'started', site: 'https://a.test', paused: true, download: { id: 5, tab: 1, filename: '/dl/f.pdf', paused: true } });
    await dl.onDownloadChanged({ id: 5, state: { current: 'complete', previous: 'in_progress' } } as never, push);
    expect(frames[1]).toMatchObject({ type: 'download', event: 'ended', download: { id: 5 } });
  });

  it('bounds a download\'s URL as a request\'s is', async () => {
    fakeDownloads({});
    const { dl } = await loadDownloads();
    const d = dl.downloadOf({ id: 5, url: 'https://a.test/att?' + 'q'.repeat(100_000), finalUrl: '', mime: 'application/' + 'x'.repeat(50_000), filename: '/dl/f', state: 'complete', bytesReceived: 4, totalBytes: 4, fileSize: 4, startTime: '' } as never, 1);
    expect(d.url.length).toBeLessThanOrEqual(4000);
    expect(d.mime?.length).toBeLessThanOrEqual(200);
  });

  it('reports the end of a download that ended before it was reported (a data: URL), once', async () => {
    const { calls } = fakeDownloads({ state: 'complete', bytesReceived: 100 });
    const { acting, dl } = await loadDownloads();
    acting.setActingUntil(7, Date.now());
    const frames: { event?: string }[] = [];
    const push = async (f: { event?: string }) => (frames.push(f), true);
    // Its onChanged (complete) came before reportDownload knew it: nothing to report then.
    await dl.onDownloadChanged({ id: 5, state: { current: 'complete', previous: 'in_progress' } } as never, push);
    expect(await dl.reportDownload({ id: 5, state: 'complete', filename: '/dl/f.pdf' } as never, 7, push)).toBe(true);
    expect(calls).toEqual([]);
    expect(frames.map((f) => f.event)).toEqual(['started', 'ended']);
    expect(frames[1]).toMatchObject({ download: { id: 5, state: 'complete' } });
  });

  it('lets a download run when no tool acted lately, or nobody can decide', async () => {
    const { calls } = fakeDownloads({});
    const { acting, dl } = await loadDownloads();
    expect(await dl.reportDownload({ id: 5, state: 'in_progress' } as never, 7, async () => true)).toBe(false);
    expect(calls).toEqual([]);
    acting.setActingUntil(7, Date.now());
    expect(await dl.reportDownload({ id: 5, state: 'in_progress' } as never, 7, async () => false)).toBe(false);
    expect(calls).toEqual(['pause 5', 'resume 5']);
  });

  it('decides only attributed downloads: resume, or cancel and remove the file', async () => {
    const { calls, it: item } = fakeDownloads({ paused: true });
    const { dl } = await loadDownloads();
    await expect(dl.decideDownload(5, 'resume')).rejects.toThrow(/not one of a shared tab's downloads/);
    // Attribute it to tab 7 through a request seen there.
    const net = await import('../src/background/network');
    const state = await import('../src/background/state');
    await state.readState();
    // The attachment link's navigation, which became the download.
    net.onBeforeRequest({ ...base, type: 'main_frame', requestId: 'd', tabId: 7, url: 'https://a.test/f.pdf', timeStamp: Date.now() } as never);
    expect(await dl.onDownloadCreated({ id: 5, url: 'https://a.test/f.pdf', finalUrl: '' } as never)).toBe(7);
    expect(await dl.decideDownload(5, 'resume')).toMatchObject({ id: 5, tab: 1, state: 'in_progress' });
    expect(calls).toEqual(['resume 5']);
    const d = await dl.decideDownload(5, 'cancel');
    expect(d).toMatchObject({ state: 'interrupted', error: 'USER_CANCELED' });
    expect(calls).toEqual(['resume 5', 'cancel 5']);
    // A file already complete is removed from disk.
    Object.assign(item, { state: 'complete', exists: true });
    await dl.decideDownload(5, 'cancel');
    expect(calls.at(-1)).toBe('removeFile 5');
  });
});
