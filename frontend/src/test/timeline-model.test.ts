import { describe, expect, it } from 'vitest';
import { MAX_ROWS, PAGE_SIZE, TimelineModel, type Reporter } from '../lib/timeline.svelte';
import { callsOf, release, resetApp } from './fake-app';
import { entry } from './fixtures';

function reporter() {
  const seen: { kind: string; text: string }[] = [];
  const r: Reporter = {
    fail: (err) => seen.push({ kind: 'error', text: String(err) }),
    notify: (kind, text) => seen.push({ kind, text }),
  };
  return { r, seen };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('TimelineModel', () => {
  it('drops the answer of a reload that a newer one replaced', async () => {
    resetApp({
      timeline: [entry({ id: 1, outcome: 'ok' }), entry({ id: 2, outcome: 'denied' })],
      hold: new Set(['Timeline']),
    });
    const m = new TimelineModel(reporter().r);
    void m.setFilter({ outcome: 'ok' });
    const last = m.setFilter({ outcome: 'denied' });
    release('Timeline');
    await last;
    await settle();
    expect(callsOf('Timeline').map((a) => (a[0] as { outcome: string }).outcome)).toEqual(['ok', 'denied']);
    expect(m.rows.map((e) => e.id)).toEqual([2]);
    expect(m.loading).toBe(false);
  });

  it('keeps at most MAX_ROWS live rows and then offers older ones', async () => {
    resetApp({ timeline: [entry({ id: 1 })] });
    const m = new TimelineModel(reporter().r);
    await m.reload();
    expect(m.hasOlder).toBe(false);
    for (let id = 2; id <= MAX_ROWS + 5; id++) {
      m.onEvent({ kind: 'finished', entry: entry({ id }), dropped: 0 });
    }
    expect(m.rows.length).toBe(MAX_ROWS);
    expect(m.rows[0].id).toBe(MAX_ROWS + 5);
    expect(m.hasOlder).toBe(true);
  });

  it('asks for a full page and knows when there is no older one', async () => {
    resetApp({ timeline: Array.from({ length: PAGE_SIZE }, (_, i) => entry({ id: i + 1 })) });
    const m = new TimelineModel(reporter().r);
    await m.reload();
    expect(m.hasOlder).toBe(true);
    await m.loadOlder();
    expect(callsOf('Timeline')[1][0]).toMatchObject({ beforeId: 1 });
    expect(m.hasOlder).toBe(false);
    expect(m.rows.length).toBe(PAGE_SIZE);
  });

  it('reports a failed Timeline() and keeps the rows it had', async () => {
    const { r, seen } = reporter();
    const b = resetApp({ timeline: [entry({ id: 1 })] });
    const m = new TimelineModel(r);
    await m.reload();
    b.fail.Timeline = 'read the timeline: database is locked';
    await m.setFilter({ client: 'cursor' });
    expect(seen).toEqual([{ kind: 'error', text: 'read the timeline: database is locked' }]);
    expect(m.rows.map((e) => e.id)).toEqual([1]);
    expect(m.loading).toBe(false);
  });
});
