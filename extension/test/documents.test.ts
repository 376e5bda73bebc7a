import { afterEach, describe, expect, it, vi } from 'vitest';

function fakeChrome(sharedTabs: Record<number, number>) {
  const session: Record<string, unknown> = {
    tabState: { nextNumber: 3, shared: sharedTabs, numbers: sharedTabs, recent: [], nextDoc: 1, docs: {}, dialogs: {}, armed: {} },
  };
  vi.stubGlobal('chrome', {
    storage: {
      session: {
        get: async (key: string) => (key in session ? { [key]: structuredClone(session[key]) } : {}),
        set: async (items: Record<string, unknown>) => void Object.assign(session, structuredClone(items)),
      },
    },
    tabs: { query: async () => Object.keys(sharedTabs).map((id) => ({ id: Number(id) })) },
  });
}

describe('documents are numbered per profile', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('never gives two documents of any tabs or frames the same number, and routes refs to their tab', async () => {
    fakeChrome({ 10: 1, 11: 2 });
    vi.resetModules();
    const st = { ...(await import('../src/background/shared-tabs')), ...(await import('../src/background/documents')) };
    const mr = await import('../src/background/methods-read');
    expect(await st.nextDocument(10, 0)).toBe(1);
    expect(await st.nextDocument(11, 0)).toBe(2);
    expect(await st.nextDocument(11, 5)).toBe(3);
    expect(await st.documentsIssued()).toBe(3);
    expect(await st.documentOwner(2)).toEqual({ tabId: 11, frameId: 0 });
    // A ref of tab 11 acts in tab 11 even when tab 1 (id 10) is addressed or current.
    expect(await mr.routeRef('d2e4', 1)).toEqual({ t: { tabId: 11, number: 2 }, frameId: 0 });
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
});
