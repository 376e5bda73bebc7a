import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { TabsChanged } from '../src/protocol.gen';
import type { OffscreenMessage } from '../src/shared/messages';

interface FakeTab {
  id: number;
  url: string;
  title: string;
  active: boolean;
  windowId: number;
  status: string;
}

/** Just enough of the chrome API for shared-tabs.ts. */
function fakeChrome(tabs: FakeTab[]) {
  const session: Record<string, unknown> = {};
  const sent: OffscreenMessage[] = [];
  const chromeFake = {
    storage: {
      session: {
        get: async (key: string) => (key in session ? { [key]: structuredClone(session[key]) } : {}),
        set: async (items: Record<string, unknown>) => void Object.assign(session, structuredClone(items)),
      },
    },
    tabs: {
      get: async (id: number) => {
        const t = tabs.find((x) => x.id === id);
        if (!t) throw new Error(`No tab with id: ${id}.`);
        return { ...t };
      },
      query: async (q: { active?: boolean }) => tabs.filter((t) => !q.active || t.active).map((t) => ({ ...t })),
      // Messages to the tabs' content scripts (page-state), in order.
      sendMessage: vi.fn(async () => ({ ok: true, pong: true })),
    },
    scripting: { executeScript: vi.fn(async () => []) },
    action: {
      setBadgeText: vi.fn(async () => undefined),
      setBadgeBackgroundColor: vi.fn(async () => undefined),
      setBadgeTextColor: vi.fn(async () => undefined),
      setTitle: vi.fn(async () => undefined),
    },
    contextMenus: { update: vi.fn(async () => undefined) },
    runtime: {
      sendMessage: vi.fn(async (m: OffscreenMessage) => {
        sent.push(m);
        return true;
      }),
    },
  };
  vi.stubGlobal('chrome', chromeFake);
  const frames = () => sent.filter((m): m is Extract<OffscreenMessage, { kind: 'tabs-changed' }> => m.kind === 'tabs-changed').map((m) => m.frame);
  return { chromeFake, frames, session };
}

async function load() {
  vi.resetModules();
  return import('../src/background/shared-tabs');
}

const tab = (id: number, title: string, active = false): FakeTab => ({ id, url: `https://example.com/${id}`, title, active, windowId: 1, status: 'complete' });

describe('shared tabs → tabs_changed', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('announces share, unshare, navigate and close with the full list, and marks the badge', async () => {
    const tabs = [tab(10, 'Ten', true), tab(11, 'Eleven')];
    const { chromeFake, frames } = fakeChrome(tabs);
    const st = await load();

    expect(await st.share(10, false, 'shared')).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(frames()).toEqual<TabsChanged[]>([
      { type: 'tabs_changed', change: 'shared', tab: 1, tabs: [{ tab: 1, url: 'https://example.com/10', title: 'Ten', active: true, current: true }] },
    ]);
    expect(chromeFake.action.setBadgeText).toHaveBeenLastCalledWith({ tabId: 10, text: '1' });
    expect(chromeFake.action.setTitle).toHaveBeenLastCalledWith({ tabId: 10, title: 'Shared with Tether as tab 1' });
    // Shared: the page-world hooks and the content script go into all its frames, nothing into other tabs.
    const injected = chromeFake.scripting.executeScript.mock.calls.map((c) => (c as unknown as [chrome.scripting.ScriptInjection<unknown[], unknown>])[0]);
    expect(injected.map((i) => [i.target, i.world ?? 'ISOLATED', i.files ?? 'func'])).toEqual([
      [{ tabId: 10, allFrames: true }, 'MAIN', 'func'],
      [{ tabId: 10, allFrames: true }, 'ISOLATED', ['content.js']],
    ]);

    expect(await st.share(11, false, 'opened')).toBe(2);
    await vi.advanceTimersByTimeAsync(100);
    expect(frames().at(-1)).toMatchObject({ change: 'opened', tab: 2 });
    expect(frames().at(-1)!.tabs.map((t) => t.tab)).toEqual([1, 2]);

    tabs[1]!.url = 'https://example.com/next';
    await st.onTabUpdated(11, { status: 'loading', url: 'https://example.com/next' }, { ...tabs[1]!, status: 'loading' } as chrome.tabs.Tab);
    await vi.advanceTimersByTimeAsync(100);
    expect(frames()).toHaveLength(2); // still loading: nothing yet
    await st.onTabUpdated(11, { status: 'complete' }, tabs[1] as chrome.tabs.Tab);
    await vi.advanceTimersByTimeAsync(100);
    expect(frames().at(-1)).toMatchObject({ change: 'navigated', tab: 2 });
    expect(frames().at(-1)!.tabs[1]).toMatchObject({ url: 'https://example.com/next' });

    await st.unshare(10);
    await vi.advanceTimersByTimeAsync(100);
    expect(frames().at(-1)).toMatchObject({ change: 'unshared', tab: 1 });
    expect(frames().at(-1)!.tabs.map((t) => t.tab)).toEqual([2]);
    expect(chromeFake.action.setBadgeText).toHaveBeenLastCalledWith({ tabId: 10, text: '' });
    // Unshared: every frame's hooks are told to restore the page.
    expect(chromeFake.tabs.sendMessage).toHaveBeenLastCalledWith(10, { target: 'content', kind: 'page-state', unhook: true });

    // Sharing it again keeps its number.
    expect(await st.share(10, false, 'shared')).toBe(1);

    tabs.splice(1, 1);
    await st.forgetTab(11);
    await vi.advanceTimersByTimeAsync(100);
    expect(frames().at(-1)).toMatchObject({ change: 'closed', tab: 2 });
    expect(frames().at(-1)!.tabs.map((t) => t.tab)).toEqual([1]);
  });

  it('coalesces a burst into one frame per tab with the final list', async () => {
    const tabs = [tab(10, 'Ten', true), tab(11, 'Eleven')];
    const { frames } = fakeChrome(tabs);
    const st = await load();
    await st.share(10, false, 'shared');
    await st.onTabUpdated(10, { title: 'Ten again' }, tabs[0] as chrome.tabs.Tab);
    await st.onTabUpdated(10, { status: 'complete' }, tabs[0] as chrome.tabs.Tab);
    await st.share(11, false, 'shared');
    await st.unshare(11);
    await vi.advanceTimersByTimeAsync(100);
    expect(frames().map((f) => [f.change, f.tab])).toEqual([
      ['shared', 1],
      ['unshared', 2],
    ]);
    for (const f of frames()) expect(f.tabs.map((t) => t.tab)).toEqual([1]);
  });

  it('does not announce unshared tabs', async () => {
    const tabs = [tab(10, 'Ten', true)];
    const { frames } = fakeChrome(tabs);
    const st = await load();
    await st.onTabUpdated(10, { status: 'complete' }, tabs[0] as chrome.tabs.Tab);
    await st.onTabActivated(10);
    await st.forgetTab(10);
    await vi.advanceTimersByTimeAsync(200);
    expect(frames()).toEqual([]);
  });

  it('announces activation of a shared tab and keeps the menu check right', async () => {
    const tabs = [tab(10, 'Ten', true), tab(11, 'Eleven')];
    const { chromeFake, frames } = fakeChrome(tabs);
    const st = await load();
    await st.share(11, false, 'shared');
    await st.onTabActivated(11);
    expect(chromeFake.contextMenus.update).toHaveBeenLastCalledWith(st.MENU_ID, { checked: true });
    await st.onTabActivated(10);
    expect(chromeFake.contextMenus.update).toHaveBeenLastCalledWith(st.MENU_ID, { checked: false });
    await vi.advanceTimersByTimeAsync(100);
    expect(frames().map((f) => [f.change, f.tab])).toEqual([['shared', 1]]); // shared outranks activated in one burst
    await st.onTabActivated(11);
    await vi.advanceTimersByTimeAsync(100);
    expect(frames().at(-1)).toMatchObject({ change: 'activated', tab: 1 });
  });
});
