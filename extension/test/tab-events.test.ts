import { describe, expect, it } from 'vitest';
import type { TabInfo, TabsChanged } from '../src/protocol.gen';
import { TabsChangedCoalescer } from '../src/background/tab-events';

describe('TabsChangedCoalescer', () => {
  it('flushNow sends pending changes at once, before the window ends', async () => {
    const sent: TabsChanged[] = [];
    const tabs: TabInfo[] = [{ tab: 2, url: 'https://a.example/', title: 'A', active: true, current: true }];
    // A window far longer than the test: only flushNow can send.
    const c = new TabsChangedCoalescer({ listTabs: async () => tabs, send: (f) => void sent.push(f) }, 60_000);
    c.add('navigated', 2);
    c.add('closed', 3);
    expect(sent).toHaveLength(0);
    await c.flushNow();
    expect(sent.map((f) => [f.change, f.tab])).toEqual([['navigated', 2], ['closed', 3]]);
    expect(sent[1]!.tabs).toEqual(tabs);
    await c.flushNow(); // nothing pending: nothing sent
    expect(sent).toHaveLength(2);
  });
});
