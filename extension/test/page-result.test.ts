import { describe, expect, it, vi } from 'vitest';

// The page a content script answers with, and the number of its document.
let answer: { doc?: number; snapshot: string } = { snapshot: '- button "Go" [ref=d3e1]' };

vi.mock('../src/background/content-bridge', () => ({
  callContent: async () => ({ ok: true, page: { url: 'https://example.test/', title: 'T', snapshot: answer.snapshot }, ...(answer.doc === undefined ? {} : { doc: answer.doc }) }),
}));
vi.mock('../src/background/documents', () => ({ documentsIssued: async () => 3 }));
vi.mock('../src/background/page-records', () => ({ takeDialogs: async () => [] }));
vi.mock('../src/background/state', () => ({ readState: async () => ({ shared: { 5: 2 } }) }));
vi.mock('../src/background/tab-hooks', () => ({ pageReady: async () => undefined }));

describe('page results', () => {
  it('carry the number of the document they are of, so that a reload (a new document at the same URL) is told apart', async () => {
    vi.stubGlobal('chrome', { tabs: { get: async () => ({ id: 5, url: 'https://example.test/', title: 'T' }) } });
    const { finishPage, pageResult } = await import('../src/background/methods/page-result');
    answer = { doc: 3, snapshot: '- button "Go" [ref=d3e1]' };
    const read = await pageResult(5, Date.now() + 5000);
    expect(read).toMatchObject({ tab: 2, doc: 3, snapshot: '- button "Go" [ref=d3e1]' });
    answer = { snapshot: '- paragraph: no refs' };
    expect((await pageResult(5, Date.now() + 5000)).doc).toBeUndefined();
    // An action's own answer (act.ts) passes its document's number on.
    const acted = await finishPage(5, 2, { url: 'https://example.test/', title: 'T', snapshot: '- button "Go" [ref=d4e1]' }, {}, Date.now() + 5000, 4);
    expect(acted.doc).toBe(4);
    vi.unstubAllGlobals();
  });

  it('pass a packed snapshot on as it came: the content script packs only what needs no cut and no frames', async () => {
    vi.stubGlobal('chrome', { tabs: { get: async () => ({ id: 5, url: 'https://example.test/', title: 'T' }) } });
    const { finishPage } = await import('../src/background/methods/page-result');
    const out = await finishPage(5, 2, { url: 'https://example.test/', title: 'T', snapshot: '', snapshotGzip: 'H4sIAAAA' }, { maxChars: 100 }, Date.now() + 5000);
    expect(out).toMatchObject({ tab: 2, snapshot: '', snapshotGzip: 'H4sIAAAA' });
    expect(out.omitted).toBeUndefined();
    vi.unstubAllGlobals();
  });
});
