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
    const { frameResolver } = await import('../src/background/methods-read');
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
    const { frameResolver } = await import('../src/background/methods-read');
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
    const { frameResolver } = await import('../src/background/methods-read');
    const got = frameResolver(1, 0)('u' + INNER);
    await vi.advanceTimersByTimeAsync(1000);
    expect(await got).toBeUndefined();
  });
});
