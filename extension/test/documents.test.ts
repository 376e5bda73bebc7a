import { afterEach, describe, expect, it, vi } from 'vitest';

function fakeChrome(sharedTabs: Record<number, number>, reply: (tabId: number, frameId: number) => unknown = () => ({ ok: true, pong: true })) {
  const session: Record<string, unknown> = {
    tabState: { nextNumber: 3, shared: sharedTabs, numbers: sharedTabs, recent: [], nextDoc: 1, docs: {}, issued: {}, dialogs: {}, armed: {} },
  };
  vi.stubGlobal('chrome', {
    runtime: { id: 'tether', getURL: (p: string) => `chrome-extension://tether/${p}`, sendMessage: async () => undefined },
    storage: {
      session: {
        get: async (key: string) => (key in session ? { [key]: structuredClone(session[key]) } : {}),
        set: async (items: Record<string, unknown>) => void Object.assign(session, structuredClone(items)),
      },
    },
    tabs: {
      query: async () => Object.keys(sharedTabs).map((id) => ({ id: Number(id) })),
      get: async (id: number) => ({ id, url: 'https://example.test/' }),
      sendMessage: async (tabId: number, _msg: unknown, opts: { frameId: number }) => reply(tabId, opts.frameId),
    },
  });
}

describe('documents are numbered per profile', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('never gives two documents of any tabs or frames the same number, and routes refs to their tab', async () => {
    fakeChrome({ 10: 1, 11: 2 });
    vi.resetModules();
    const st = { ...(await import('../src/background/shared-tabs')), ...(await import('../src/background/documents')) };
    const mr = await import('../src/background/methods/route');
    expect(await st.nextDocument(10, 0)).toBe(1);
    expect(await st.nextDocument(11, 0)).toBe(2);
    expect(await st.nextDocument(11, 5)).toBe(3);
    expect(await st.documentsIssued()).toBe(3);
    expect(await st.documentOwner(2)).toEqual({ tabId: 11, frameId: 0 });
    // A ref of tab 11 acts in tab 11 when it is addressed, or no tab is.
    expect(await mr.routeRef('d2e4', 2)).toEqual({ t: { tabId: 11, number: 2 }, frameId: 0 });
    expect(await mr.routeRef('d2e4', undefined)).toEqual({ t: { tabId: 11, number: 2 }, frameId: 0 });
    // Addressed to tab 1 (id 10), whose use the daemon checked, it is refused (another app's ref must not act in its tab), naming its tab.
    await expect(mr.routeRef('d2e4', 1)).rejects.toMatchObject({ code: 'bad_request', message: expect.stringMatching(/belongs to tab 2, not to tab 1.*Nothing was done/) });
    await expect(mr.routeRef('f5d3e1', 1)).rejects.toMatchObject({ code: 'bad_request' });
    expect(await mr.routeRef('f5d3e1', undefined)).toEqual({ t: { tabId: 11, number: 2 }, frameId: 5 });
    expect(await mr.routeRef('e1', undefined)).toEqual({ t: { tabId: 10, number: 1 }, frameId: 0 });
    // Tab 11's top frame loads a new document: the old one's refs are stale, unseen ones unknown.
    expect(await st.nextDocument(11, 0)).toBe(4);
    await expect(mr.routeRef('d2e4', undefined)).rejects.toMatchObject({ code: 'stale_ref' });
    await expect(mr.routeRef('d9e1', undefined)).rejects.toMatchObject({ code: 'unknown_ref' });
    await expect(mr.routeRef('f6d3e1', undefined)).rejects.toMatchObject({ code: 'unknown_ref' });
    // A tab that is no longer shared.
    await st.forgetTab(10);
    expect(await st.documentOwner(1)).toBeUndefined();
  });

  it('counts a document the back/forward cache restored as its frame\'s again, only in the tab and frame that numbered it', async () => {
    fakeChrome({ 10: 1, 11: 2 });
    vi.resetModules();
    const docs = await import('../src/background/documents');
    const mr = await import('../src/background/methods/route');
    expect(await docs.nextDocument(10, 0)).toBe(1); // page A
    expect(await docs.nextDocument(11, 0)).toBe(2);
    expect(await docs.nextDocument(10, 0)).toBe(3); // page B, left to by a link
    await expect(mr.routeRef('e4', 1)).rejects.toMatchObject({ code: 'stale_ref' });
    // Back: page A answers again with its number.
    expect(await docs.claimDocument(10, 0, 1)).toBe(true);
    expect(await mr.routeRef('e4', 1)).toEqual({ t: { tabId: 10, number: 1 }, frameId: 0 });
    await expect(mr.routeRef('d3e1', 1)).rejects.toMatchObject({ code: 'stale_ref' });
    // Forward: page B again.
    expect(await docs.claimDocument(10, 0, 3)).toBe(true);
    expect(await docs.documentOwner(3)).toEqual({ tabId: 10, frameId: 0 });
    expect(await docs.documentOwner(1)).toBeUndefined();
    // Another tab, another frame, a number never given: refused, nothing changes.
    expect(await docs.claimDocument(11, 0, 1)).toBe(false);
    expect(await docs.claimDocument(10, 7, 1)).toBe(false);
    expect(await docs.claimDocument(10, 0, 99)).toBe(false);
    expect(await docs.documentOwner(3)).toEqual({ tabId: 10, frameId: 0 });
    expect(await docs.documentOwner(2)).toEqual({ tabId: 11, frameId: 0 });
  });

  it('remembers the newest DOCS_KEPT numbers of a tab', async () => {
    fakeChrome({ 10: 1 });
    vi.resetModules();
    const docs = await import('../src/background/documents');
    for (let i = 0; i < docs.DOCS_KEPT + 5; i++) await docs.nextDocument(10, 0);
    expect(await docs.claimDocument(10, 0, 5)).toBe(false);
    expect(await docs.claimDocument(10, 0, 6)).toBe(true);
  });

  it('a content script\'s answer names the document its frame shows', async () => {
    let doc = 1;
    fakeChrome({ 10: 1 }, () => ({ ok: true, pong: true, doc }));
    vi.resetModules();
    const docs = await import('../src/background/documents');
    const bridge = await import('../src/background/content-bridge');
    await docs.nextDocument(10, 0);
    await docs.nextDocument(10, 0);
    expect(await docs.documentOwner(1)).toBeUndefined();
    await bridge.callContent(10, { target: 'content', kind: 'ping' }, Date.now() + 1000);
    expect(await docs.documentOwner(1)).toEqual({ tabId: 10, frameId: 0 });
    // A number the tab never had changes nothing.
    doc = 7;
    await bridge.callContent(10, { target: 'content', kind: 'ping' }, Date.now() + 1000);
    expect(await docs.documentOwner(1)).toEqual({ tabId: 10, frameId: 0 });
  });

  it('register-document gives a restored document its number back, and a new one when that is unknown', async () => {
    fakeChrome({ 10: 1, 11: 2 });
    vi.resetModules();
    const docs = await import('../src/background/documents');
    const { onRuntimeMessage } = await import('../src/background/router');
    const register = (tabId: number, frameId: number, doc?: number) =>
      new Promise((resolve) => {
        const msg = doc === undefined ? { target: 'background', kind: 'register-document' } : { target: 'background', kind: 'register-document', doc };
        expect(onRuntimeMessage(msg, { id: 'tether', tab: { id: tabId } as chrome.tabs.Tab, frameId }, resolve)).toBe(true);
      });
    expect(await register(10, 0)).toEqual({ doc: 1, frame: 0 });
    expect(await register(10, 0)).toEqual({ doc: 2, frame: 0 });
    expect(await register(10, 0, 1)).toEqual({ doc: 1, frame: 0 });
    expect(await docs.documentOwner(1)).toEqual({ tabId: 10, frameId: 0 });
    // Tab 11 cannot take tab 10's document: it gets a number of its own.
    expect(await register(11, 0, 2)).toEqual({ doc: 3, frame: 0 });
    expect(await docs.documentOwner(2)).toBeUndefined();
  });
});
