import { afterEach, describe, expect, it, vi } from 'vitest';

const TOP = 'https://example.test/page';
const INNER = 'https://other.test/frame';

function fakeChrome(listed: Array<{ frameId: number; parentFrameId: number; url: string }>, answering: Array<{ frameId: number; result: string }> | 'never') {
  const executeScript = vi.fn(() => (answering === 'never' ? new Promise(() => undefined) : Promise.resolve(answering)));
  vi.stubGlobal('chrome', {
    webNavigation: { getAllFrames: async () => listed },
    scripting: { executeScript },
  });
  return executeScript;
}

describe('frame placeholders', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it('takes a child frame webNavigation lists, without asking the frames', async () => {
    const asked = fakeChrome([{ frameId: 0, parentFrameId: -1, url: TOP }, { frameId: 4, parentFrameId: 0, url: INNER }], []);
    const { frameResolver } = await import('../src/background/methods/route');
    const resolve = frameResolver(1, 0);
    expect(await resolve('u' + INNER)).toBe(4);
    expect(await resolve(9)).toBe(9);
    expect(asked).not.toHaveBeenCalled();
  });

  it('finds the frames of a page restored from the back/forward cache, which webNavigation does not list, by asking them', async () => {
    const asked = fakeChrome([{ frameId: 0, parentFrameId: -1, url: TOP }], [
      { frameId: 0, result: TOP },
      { frameId: 6, result: INNER + '#x' },
      { frameId: 7, result: INNER },
    ]);
    const { frameResolver } = await import('../src/background/methods/route');
    const resolve = frameResolver(1, 0);
    expect(await resolve('u' + INNER)).toBe(6);
    expect(await resolve('u' + INNER)).toBe(7);
    expect(await resolve('u' + INNER)).toBeUndefined();
    expect(await resolve('u' + TOP)).toBeUndefined(); // the top frame is listed: never taken for a child
    expect(asked).toHaveBeenCalledTimes(1);
  });

  it('leaves a frame out when the frames do not answer in time', async () => {
    vi.useFakeTimers();
    fakeChrome([{ frameId: 0, parentFrameId: -1, url: TOP }], 'never');
    const { frameResolver } = await import('../src/background/methods/route');
    const got = frameResolver(1, 0)('u' + INNER);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await got).toBeUndefined();
  });
});

describe('frame placeholders by rank', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('takes the n-th child frame showing the URL, by creation order, skipping one read in place', async () => {
    fakeChrome([
      { frameId: 0, parentFrameId: -1, url: TOP },
      { frameId: 9, parentFrameId: 0, url: 'about:srcdoc' },
      { frameId: 3, parentFrameId: 0, url: 'about:srcdoc' },
    ], []);
    const { frameResolver } = await import('../src/background/methods/route');
    // The first about:srcdoc frame (3) was read in place by the parent: the placeholder is the second.
    expect(await frameResolver(1, 0)('u1 about:srcdoc')).toBe(9);
  });

  it('says why a frame could not be read', async () => {
    const { frameFailure } = await import('../src/background/methods/page-result');
    expect(frameFailure(new Error('Frame with ID 4 is showing error page'))).toMatch(/error page/);
    expect(frameFailure(new Error('Cannot access contents of url "chrome-extension://x/". Extension manifest must request permission'))).toMatch(/does not let extensions/);
  });
});
