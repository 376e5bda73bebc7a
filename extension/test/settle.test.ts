import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { settle } from '../src/content/actions';

/**
 * A stand-in for the browser's Long Animation Frames buffer: the entries a
 * PerformanceObserver with buffered: true gets (only the fields settle reads).
 */
let frames: Array<{ startTime: number; duration: number; renderStart: number }> = [];
class FakeObserver {
  static supportedEntryTypes = ['long-animation-frame'];
  private pending: typeof frames = [];
  constructor(_cb: unknown) {}
  observe(): void {
    this.pending = [...frames];
  }
  takeRecords(): typeof frames {
    const out = this.pending;
    this.pending = [];
    return out;
  }
  disconnect(): void {}
}

/** Animation frames the test runs by hand. */
let rafs: Array<() => void> = [];
const w = window as unknown as Record<string, unknown>;
const saved = { po: w.PerformanceObserver, raf: w.requestAnimationFrame, caf: w.cancelAnimationFrame };

beforeEach(() => {
  vi.useFakeTimers();
  // The page has been open a while: its frames have positive times.
  vi.advanceTimersByTime(5000);
  frames = [];
  rafs = [];
  w.PerformanceObserver = FakeObserver;
  w.requestAnimationFrame = (cb: () => void) => rafs.push(cb);
  w.cancelAnimationFrame = (id: number) => {
    rafs[id - 1] = () => undefined;
  };
  document.body.innerHTML = '<p id="s">idle</p>';
});

afterEach(() => {
  vi.useRealTimers();
  w.PerformanceObserver = saved.po;
  w.requestAnimationFrame = saved.raf;
  w.cancelAnimationFrame = saved.caf;
});

const opts = { quietMs: 100, maxMs: 1500 };
const status = () => document.getElementById('s')!;
/** A long frame that ended just now and spent ms rendering. */
const slowFrame = (ms: number) => {
  const end = performance.now();
  frames.push({ startTime: end - ms - 10, duration: ms + 10, renderStart: end - ms });
};

/** Lets pending promise callbacks run (no time passes). */
async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

/** Runs the frame settle asked for, as the browser would after the action's turn. */
async function nextFrame(): Promise<void> {
  await vi.advanceTimersByTimeAsync(1);
  for (const cb of rafs.splice(0)) cb();
}

describe('settle', () => {
  it('runs the action once and, on a page that redraws slowly, ends at the first frame after it', async () => {
    slowFrame(600);
    const action = vi.fn(() => void (status().textContent = 'saved'));
    let done = false;
    const settled = settle(document, action, opts).then((r) => ((done = true), r));
    expect(action).toHaveBeenCalledTimes(1);
    await nextFrame();
    await flush();
    expect(done).toBe(true);
    expect(await settled).toEqual({ navigating: false, redrawing: true });
    expect(status().textContent).toBe('saved');
  });

  it('waits out the quiet window on a page that redraws fast', async () => {
    slowFrame(20);
    let done = false;
    const settled = settle(document, () => void (status().textContent = 'saved'), opts).then((r) => ((done = true), r));
    await nextFrame();
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(done).toBe(true);
    expect(await settled).toEqual({ navigating: false });
  });

  it('forgets a slow redraw after a minute', async () => {
    slowFrame(600);
    vi.advanceTimersByTime(61_000);
    let done = false;
    void settle(document, () => void (status().textContent = 'saved'), opts).then(() => (done = true));
    await nextFrame();
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(done).toBe(true);
  });

  it('on a slow page, waits for a change made after the action’s turn to be quiet', async () => {
    slowFrame(600);
    let done = false;
    void settle(
      document,
      () => {
        setTimeout(() => (status().textContent = 'loaded'), 5);
      },
      opts,
    ).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(10);
    for (const cb of rafs.splice(0)) cb();
    await flush();
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(done).toBe(true);
    expect(status().textContent).toBe('loaded');
  });

  it('counts what the action’s promises and 0-ms timers change as its own', async () => {
    slowFrame(600);
    let done = false;
    void settle(
      document,
      () => {
        void Promise.resolve().then(() => (status().textContent = 'a'));
        setTimeout(() => (status().textContent = 'b'), 0);
      },
      opts,
    ).then(() => (done = true));
    await nextFrame();
    await flush();
    expect(done).toBe(true);
    expect(status().textContent).toBe('b');
  });

  it('throws the action’s error and leaves nothing pending', async () => {
    slowFrame(600);
    expect(() =>
      settle(
        document,
        () => {
          throw new Error('boom');
        },
        opts,
      ),
    ).toThrow('boom');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('times a hidden page’s quiet window with the delay it is given, and its own timers when that fails', async () => {
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    try {
      const asked: number[] = [];
      const delay = (ms: number) => (asked.push(ms), new Promise<void>((r) => setTimeout(r, ms)));
      let done = false;
      void settle(document, () => void (status().textContent = 'saved'), opts, { delay }).then(() => (done = true));
      await vi.advanceTimersByTimeAsync(99);
      expect(done).toBe(false);
      await vi.advanceTimersByTimeAsync(2);
      expect(done).toBe(true);
      expect(asked).toEqual([100]);

      done = false;
      void settle(document, () => void (status().textContent = 'again'), opts, { delay: () => Promise.reject(new Error('no worker')) }).then(() => (done = true));
      await vi.advanceTimersByTimeAsync(101);
      expect(done).toBe(true);
    } finally {
      delete (document as unknown as Record<string, unknown>).visibilityState;
    }
  });

  it('leaves a shown page’s quiet window to its own timers', async () => {
    const delay = vi.fn((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
    let done = false;
    void settle(document, () => void (status().textContent = 'saved'), opts, { delay }).then(() => (done = true));
    await vi.advanceTimersByTimeAsync(101);
    expect(done).toBe(true);
    expect(delay).not.toHaveBeenCalled();
  });
});
