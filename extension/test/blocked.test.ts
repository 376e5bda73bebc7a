// When the service worker takes a shared tab for blocked by a dialog of the
// browser's own (tab-hooks.ts): only on a confirmed miss, never because one
// answer came late (a worker Chrome just restarted, or a busy machine, runs
// its timer before the page's answer that is already on its way).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ContentMessage } from '../src/shared/messages';

type Reply = (msg: ContentMessage, frameId: number) => Promise<unknown>;

/** Just enough of the chrome API for tab-hooks.ts: one shared tab (id 7, number 3) whose frames answer by reply. */
function fakeChrome(reply: Reply) {
  const session: Record<string, unknown> = { tabState: { nextNumber: 4, shared: { 7: 3 }, numbers: { 7: 3 }, recent: [7], nextDoc: 1, docs: {}, dialogs: {}, armed: {}, open: {} } };
  const sent: Array<{ kind: string; at: number }> = [];
  const chromeFake = {
    storage: {
      session: {
        get: async (key: string) => (key in session ? { [key]: structuredClone(session[key]) } : {}),
        set: async (items: Record<string, unknown>) => void Object.assign(session, structuredClone(items)),
      },
    },
    tabs: {
      get: async (id: number) => ({ id, url: 'https://example.com/', status: 'complete' }),
      sendMessage: vi.fn((_tabId: number, msg: ContentMessage, opts?: { frameId?: number }) => {
        sent.push({ kind: msg.kind, at: Date.now() });
        return reply(msg, opts?.frameId ?? 0);
      }),
    },
    scripting: { executeScript: vi.fn(async () => []) },
  };
  vi.stubGlobal('chrome', chromeFake);
  return { chromeFake, sent, session };
}

async function load() {
  vi.resetModules();
  return import('../src/background/tab-hooks');
}

/** A reply that arrives after ms (a timer scheduled when the message is sent, so after a timer of the same length set before it). */
const after = (ms: number): Reply => () => new Promise((r) => setTimeout(() => r({ ok: true, pong: true }), ms));
const never: Reply = () => new Promise(() => undefined);

describe('a page counts as blocked only on a confirmed miss', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('an answer that arrives as the wait runs out is an answer', async () => {
    // The worker's timer fires first; the answer, already sent, right after:
    // what a worker held up at its start (or on a busy machine) sees.
    fakeChrome(after(1000));
    const th = await load();
    const got = th.answerWithin(7, { target: 'content', kind: 'ping' }, 1000);
    await vi.advanceTimersByTimeAsync(1001);
    expect(await got).toBe('answered');
  });

  it('a page that answers neither the message nor the ping sent when it ran late is blocked', async () => {
    const { sent } = fakeChrome(never);
    const th = await load();
    const got = th.answerWithin(7, { target: 'content', kind: 'page-state', actingUntil: 1 }, 1000);
    let settled = false;
    void got.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(1999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await got).toBe('timeout');
    expect(sent.map((s) => s.kind)).toEqual(['page-state', 'ping']);
    expect(sent[1]!.at - sent[0]!.at).toBe(1000);
  });

  it('a slow page that answers the second ping is not blocked', async () => {
    let n = 0;
    fakeChrome((msg) => (n++ === 0 ? never(msg, 0) : after(300)(msg, 0)));
    const th = await load();
    const got = th.answerWithin(7, { target: 'content', kind: 'ping' }, 1000);
    await vi.advanceTimersByTimeAsync(1300);
    expect(await got).toBe('answered');
  });

  it('a document that goes away while it is late is not blocked either', async () => {
    let n = 0;
    fakeChrome((msg) => (n++ === 0 ? never(msg, 0) : Promise.reject(new Error('The message port closed before a response was received.'))));
    const th = await load();
    const got = th.answerWithin(7, { target: 'content', kind: 'ping' }, 1000);
    await vi.advanceTimersByTimeAsync(1001);
    expect(await got).toBe('answered');
  });

  it("an action's page busy with the action's own hit test is not blocked; busy with nothing of ours, it is", async () => {
    for (const ours of [true, false]) {
      let bridge: typeof import('../src/background/content-bridge') | undefined;
      const free = Date.now() + 3000;
      fakeChrome((msg) => {
        if (msg.kind === 'click') {
          // The content script's own layout work before the dispatch takes 3 s; the reply follows.
          if (ours) bridge!.markPreparing(7, true);
          setTimeout(() => ours && bridge!.markPreparing(7, false), 3000);
          return new Promise((r) => setTimeout(() => r({ ok: true, page: { url: 'https://example.com/', title: '', snapshot: '' } }), 3100));
        }
        return new Promise((r) => setTimeout(() => r({ ok: true, pong: true }), Math.max(0, free - Date.now())));
      });
      const th = await load();
      bridge = await import('../src/background/content-bridge');
      const msg = { target: 'content', kind: 'click', ref: 'e1', docsIssued: 1 } as ContentMessage;
      const reply = th.actionOrBlocked(7, bridge.callContent(7, msg, Date.now() + 30_000));
      const outcome = ours ? expect(reply).resolves.toMatchObject({ ok: true }) : expect(reply).rejects.toMatchObject({ code: 'dialog_open' });
      await vi.advanceTimersByTimeAsync(4000);
      await outcome;
    }
  });

  it('a page still busy with a snapshot whose call ran out of time is busy with us, not blocked, until it answers it', async () => {
    // The page's main thread runs the snapshot (a huge page's first layout
    // cannot be cut short) for 10 s; the call gives up at 2 s; nothing else
    // is answered meanwhile.
    const busyUntil = Date.now() + 10_000;
    fakeChrome((msg) => {
      const left = Math.max(0, busyUntil - Date.now());
      if (msg.kind === 'snapshot') return new Promise((r) => setTimeout(() => r({ ok: true, page: { url: 'https://example.com/', title: '', snapshot: '' } }), left));
      return Date.now() < busyUntil ? new Promise(() => undefined) : Promise.resolve({ ok: true, pong: true });
    });
    const th = await load();
    const bridge = await import('../src/background/content-bridge');
    const snap = bridge.callContent(7, { target: 'content', kind: 'snapshot', docsIssued: 1, snap: {} } as ContentMessage, Date.now() + 2000);
    const timedOut = expect(snap).rejects.toMatchObject({ code: 'timeout' });
    await vi.advanceTimersByTimeAsync(2001);
    await timedOut;
    expect(bridge.busyWithUs(7)).toBe(true);
    const ready = th.pageReady(7);
    await vi.advanceTimersByTimeAsync(2000);
    await expect(ready).resolves.toBeUndefined();
    await vi.advanceTimersByTimeAsync(6000);
    expect(bridge.busyWithUs(7)).toBe(false);
  });

  it('an unanswered read stops counting as ours LONG_READ_GRACE_MS after its call ended', async () => {
    fakeChrome(never);
    await load();
    const bridge = await import('../src/background/content-bridge');
    const snap = bridge.callContent(7, { target: 'content', kind: 'snapshot', docsIssued: 1, snap: {} } as ContentMessage, Date.now() + 1000);
    const timedOut = expect(snap).rejects.toMatchObject({ code: 'timeout' });
    await vi.advanceTimersByTimeAsync(1001);
    await timedOut;
    expect(bridge.busyWithUs(7)).toBe(true);
    await vi.advanceTimersByTimeAsync(bridge.LONG_READ_GRACE_MS);
    expect(bridge.busyWithUs(7)).toBe(false);
  });

  it('a page busy just after answering a long read is busy with us for as long as the read took, not longer', async () => {
    // The snapshot takes 3 s; then the page misses everything for 2.5 s (the
    // read's garbage collected), then answers again; later it stops for good.
    let busyFrom = Infinity;
    let busyTo = Infinity;
    fakeChrome((msg) => {
      if (msg.kind === 'snapshot') {
        return new Promise((r) =>
          setTimeout(() => {
            busyFrom = Date.now();
            busyTo = busyFrom + 2500;
            r({ ok: true, page: { url: 'https://example.com/', title: '', snapshot: '' } });
          }, 3000),
        );
      }
      const now = Date.now();
      if (now >= busyFrom && now < busyTo) return new Promise((r) => setTimeout(() => r({ ok: true, pong: true }), busyTo - now));
      return now >= busyTo + 10_000 ? new Promise(() => undefined) : Promise.resolve({ ok: true, pong: true });
    });
    const th = await load();
    const bridge = await import('../src/background/content-bridge');
    const snap = bridge.callContent(7, { target: 'content', kind: 'snapshot', docsIssued: 1, snap: {} } as ContentMessage, Date.now() + 30_000);
    await vi.advanceTimersByTimeAsync(3000);
    await expect(snap).resolves.toMatchObject({ ok: true });
    const ready = th.pageReady(7);
    await vi.advanceTimersByTimeAsync(2500);
    await expect(ready).resolves.toBeUndefined();
    await vi.advanceTimersByTimeAsync(10_000);
    const blocked = th.pageReady(7);
    const failed = expect(blocked).rejects.toMatchObject({ code: 'dialog_open', message: expect.stringContaining('does not answer') });
    await vi.advanceTimersByTimeAsync(2000);
    await failed;
  });

  it("a page busy just after an action's follow-up read is busy with us for as long as that read took", async () => {
    // A click whose follow-up snapshot takes 3 s (the content script says
    // 'reading' when it starts); then the page misses everything for 2.5 s
    // (the read's garbage collected). The next call must wait, not report a
    // dialog. A click with no follow-up read leaves no such window.
    for (const followUp of [true, false]) {
      let bridge: typeof import('../src/background/content-bridge') | undefined;
      let busyFrom = Infinity;
      let busyTo = Infinity;
      fakeChrome((msg) => {
        if (msg.kind === 'click') {
          if (followUp) setTimeout(() => bridge!.markReading(7), 100);
          return new Promise((r) =>
            setTimeout(() => {
              busyFrom = Date.now();
              busyTo = busyFrom + 2500;
              r({ ok: true, page: { url: 'https://example.com/', title: '', snapshot: '' } });
            }, 3100),
          );
        }
        const now = Date.now();
        if (now >= busyFrom && now < busyTo) return new Promise((r) => setTimeout(() => r({ ok: true, pong: true }), busyTo - now));
        return Promise.resolve({ ok: true, pong: true });
      });
      const th = await load();
      bridge = await import('../src/background/content-bridge');
      const click = bridge.callContent(7, { target: 'content', kind: 'click', ref: 'e1', docsIssued: 1 } as ContentMessage, Date.now() + 30_000);
      await vi.advanceTimersByTimeAsync(3100);
      await expect(click).resolves.toMatchObject({ ok: true });
      const ready = th.pageReady(7);
      const outcome = followUp ? expect(ready).resolves.toBeUndefined() : expect(ready).rejects.toMatchObject({ code: 'dialog_open' });
      await vi.advanceTimersByTimeAsync(2500);
      await outcome;
    }
  });

  it('a frame without the content script says so at once', async () => {
    fakeChrome(async () => {
      throw new Error('Could not establish connection. Receiving end does not exist.');
    });
    const th = await load();
    expect(await th.answerWithin(7, { target: 'content', kind: 'ping' }, 1000)).toBe('no-receiver');
  });

  it('pageReady passes a page whose answer comes late, and reports one that never answers', async () => {
    fakeChrome(after(1000));
    let th = await load();
    const ok = th.pageReady(7, { actingUntil: 5 });
    await vi.advanceTimersByTimeAsync(1001);
    await expect(ok).resolves.toBeUndefined();

    fakeChrome(never);
    th = await load();
    const blocked = th.pageReady(7, { actingUntil: 5 });
    const failed = expect(blocked).rejects.toMatchObject({ code: 'dialog_open', message: expect.stringContaining('Tab 3 does not answer') });
    await vi.advanceTimersByTimeAsync(2000);
    await failed;
  });

  it('a dialog the hooks saw open is reported when its frame stays blocked, and dropped when it answers late', async () => {
    const open = { kind: 'confirm', message: 'Delete?', frameId: 0, since: 1 };
    const { session } = fakeChrome(never);
    (session.tabState as { open: Record<string, unknown> }).open = { 7: open };
    let th = await load();
    const blocked = th.pageReady(7);
    const failed = expect(blocked).rejects.toMatchObject({ code: 'dialog_open', message: expect.stringContaining('"Delete?"') });
    await vi.advanceTimersByTimeAsync(500);
    await failed;

    const late = fakeChrome(after(250));
    (late.session.tabState as { open: Record<string, unknown> }).open = { 7: open };
    th = await load();
    const ok = th.pageReady(7);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(ok).resolves.toBeUndefined();
    expect((late.session.tabState as { open: Record<string, unknown> }).open).toEqual({});
  });
});

describe('a loading page that does not answer', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  /** A page that answers nothing until busyMs after the test starts (its load keeps it busy), then everything. */
  const busyFor = (busyMs: number): Reply => {
    const free = Date.now() + busyMs;
    return () => new Promise((r) => setTimeout(() => r({ ok: true, pong: true }), Math.max(0, free - Date.now())));
  };
  /** A navigation that committed at once and loads after loadMs. */
  const loading = (loadMs: number) =>
    ({
      committed: () => true,
      waitForLoad: () => new Promise<boolean>((r) => setTimeout(() => r(true), loadMs)),
    }) as unknown as import('../src/background/navigation').NavigationWatcher;

  it('is waited for while busy once the hooks are in its document (no dialog it opens would go unreported)', async () => {
    fakeChrome(busyFor(9000));
    const th = await load();
    await th.onNavigationCommitted({ tabId: 7, frameId: 0, url: 'https://example.com/big' });
    expect(th.hooksIn(7)).toBe(true);
    // Busy before and after its load event, for 9 s: far past two missed pings.
    const loaded = th.loadOrBlocked(loading(4000), 7, Date.now() + 30_000, 'The navigation was sent to the tab. ');
    let settled = false;
    void loaded.finally(() => (settled = true)).catch(() => undefined);
    await vi.advanceTimersByTimeAsync(8000);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(3000);
    await expect(loaded).resolves.toBe(true);
  });

  it('is a timeout, not a dialog, when still busy at the deadline with the hooks in', async () => {
    fakeChrome(never);
    const th = await load();
    await th.onNavigationCommitted({ tabId: 7, frameId: 0, url: 'https://example.com/big' });
    const loaded = th.loadOrBlocked(loading(1000), 7, Date.now() + 10_000, 'The navigation was sent to the tab. ');
    const failed = expect(loaded).rejects.toMatchObject({ code: 'timeout', message: expect.stringContaining('too busy to answer') });
    await vi.advanceTimersByTimeAsync(12_000);
    await failed;
  });

  it('does not stop a call that replaces it (a navigation away, a reload), but stops a read', async () => {
    const { chromeFake } = fakeChrome(never);
    chromeFake.tabs.get = async (id: number) => ({ id, url: 'https://example.com/big', status: 'loading' });
    const th = await load();
    await th.onNavigationCommitted({ tabId: 7, frameId: 0, url: 'https://example.com/big' });
    let ran = false;
    const leaving = th.actOn(7, Date.now() + 30_000, async () => (ran = true), { loads: true });
    await vi.advanceTimersByTimeAsync(2000);
    await expect(leaving).resolves.toBe(true);
    expect(ran).toBe(true);

    const read = th.pageReady(7);
    const failed = expect(read).rejects.toMatchObject({ code: 'timeout', message: expect.stringContaining('too busy to answer') });
    await vi.advanceTimersByTimeAsync(2000);
    await failed;
  });

  it('leaving it still waits for a dialog the hooks saw open, and for a page without the hooks', async () => {
    const open = { kind: 'confirm', message: 'Leave?', frameId: 0, since: 1 };
    const { chromeFake, session } = fakeChrome(never);
    chromeFake.tabs.get = async (id: number) => ({ id, url: 'https://example.com/big', status: 'loading' });
    (session.tabState as { open: Record<string, unknown> }).open = { 7: open };
    let th = await load();
    const withDialog = th.actOn(7, Date.now() + 30_000, async () => true, { loads: true });
    const seen = expect(withDialog).rejects.toMatchObject({ code: 'dialog_open', message: expect.stringContaining('"Leave?"') });
    await vi.advanceTimersByTimeAsync(1000);
    await seen;

    fakeChrome(never).chromeFake.tabs.get = async (id: number) => ({ id, url: 'https://example.com/big', status: 'loading' });
    th = await load();
    expect(th.hooksIn(7)).toBe(false);
    const noHooks = th.actOn(7, Date.now() + 30_000, async () => true, { loads: true });
    const blocked = expect(noHooks).rejects.toMatchObject({ code: 'dialog_open', message: expect.stringContaining('does not answer') });
    await vi.advanceTimersByTimeAsync(3000);
    await blocked;
  });

  it('in a tab the call opened for it is not asked anything before the call', async () => {
    const { sent } = fakeChrome(never);
    const th = await load();
    const got = th.actOn(7, Date.now() + 30_000, async () => 'loaded', { loads: true, opened: true });
    await vi.advanceTimersByTimeAsync(10);
    await expect(got).resolves.toBe('loaded');
    expect(sent.every((m) => m.kind === 'page-state')).toBe(true);
  });

  it('is blocked (a dialog its first scripts opened) when the hooks never got in', async () => {
    fakeChrome(never);
    const th = await load();
    expect(th.hooksIn(7)).toBe(false);
    const loaded = th.loadOrBlocked(loading(60_000), 7, Date.now() + 30_000, 'The navigation was sent to the tab. ');
    const failed = expect(loaded).rejects.toMatchObject({ code: 'dialog_open', message: expect.stringContaining('does not answer') });
    await vi.advanceTimersByTimeAsync(8000);
    await failed;
  });
});

describe('a worker that starts', () => {
  afterEach(() => vi.unstubAllGlobals());

  it("tells the shared tabs' hooks that the AI does not act (the previous worker may have been stopped during a call)", async () => {
    const { chromeFake } = fakeChrome(async () => ({ ok: true, pong: true }));
    const th = await load();
    await th.resetActing();
    expect(chromeFake.tabs.sendMessage).toHaveBeenCalledWith(7, { target: 'content', kind: 'page-state', actingUntil: 0 });
  });

  it('but leaves acting a tab that a call it already took acts on', async () => {
    const { chromeFake } = fakeChrome(async () => ({ ok: true, pong: true }));
    const th = await load();
    const acting = await import('../src/background/acting');
    const until = Date.now() + 10_000;
    acting.setActingUntil(7, until);
    await th.resetActing();
    expect(chromeFake.tabs.sendMessage).toHaveBeenCalledWith(7, { target: 'content', kind: 'page-state', actingUntil: until });
  });
});
