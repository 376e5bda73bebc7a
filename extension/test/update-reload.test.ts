import { describe, expect, it } from 'vitest';
import { applyCarry, CARRY_MAX_AGE_MS, carryOf, parseCarry } from '../src/background/update-reload';
import type { TabState } from '../src/background/state';

function state(over: Partial<TabState> = {}): TabState {
  return { nextNumber: 1, shared: {}, numbers: {}, recent: [], owners: {}, nextDoc: 1, docs: {}, issued: {}, dialogs: {}, armed: {}, open: {}, ...over };
}

const NOW = 1_700_000_000_000;

describe('the state carried across an update reload', () => {
  const before = state({
    nextNumber: 4, nextDoc: 9,
    shared: { '11': 1, '12': 3 }, numbers: { '11': 1, '12': 3, '13': 2 }, recent: [12, 11],
    owners: { '12': { app: 'Claude', session: 's1' } },
    docs: { '11': { '0': 7 } }, issued: { '11': { '7': 0 } },
  });

  it('comes back with the same tab numbers and a document counter that continues', () => {
    const c = parseCarry(JSON.parse(JSON.stringify(carryOf(before, NOW, '0.3.0 build a'))), NOW + 2_000, new Set([11, 12, 13]));
    expect(c).toBeDefined();
    const after = state();
    applyCarry(after, c!);
    expect(after.shared).toEqual({ '11': 1, '12': 3 });
    expect(after.numbers).toEqual({ '11': 1, '12': 3, '13': 2 });
    expect(after.nextNumber).toBe(4);
    expect(after.nextDoc).toBe(9);
    expect(after.recent).toEqual([12, 11]);
    expect(after.owners).toEqual({ '12': { app: 'Claude', session: 's1' } });
    // Documents are not carried: every ref given out before names a gone document (stale_ref).
    expect(after.docs).toEqual({});
    expect(after.issued).toEqual({});
  });

  it('carries the idempotency records as they were (checked when put back)', () => {
    const idem = { 'idem:k1': { tool: 'browser_click', call: 'fp', at: NOW - 1_000, steps: { click: { params: '{}', done: true } } } };
    const c = parseCarry(JSON.parse(JSON.stringify({ ...carryOf(before, NOW, 'x'), idem })), NOW, new Set([11]));
    expect(c?.idem).toEqual(idem);
    expect(parseCarry({ ...carryOf(before, NOW, 'x'), idem: 'junk' }, NOW, new Set([11]))?.idem).toBeUndefined();
  });

  it('drops tabs that were closed meanwhile', () => {
    const c = parseCarry(carryOf(before, NOW, 'x'), NOW, new Set([11]))!;
    expect(c.shared).toEqual({ '11': 1 });
    expect(c.recent).toEqual([11]);
    expect(c.owners).toEqual({});
    expect(c.nextNumber).toBe(4); // numbers are never reused
  });

  it('is ignored when stale, from the future or malformed', () => {
    const live = new Set([11, 12]);
    expect(parseCarry(carryOf(before, NOW, 'x'), NOW + CARRY_MAX_AGE_MS + 1, live)).toBeUndefined();
    expect(parseCarry(carryOf(before, NOW + 60_000, 'x'), NOW, live)).toBeUndefined();
    expect(parseCarry({ at: NOW, nextNumber: 'x', nextDoc: 1 }, NOW, live)).toBeUndefined();
    expect(parseCarry(null, NOW, live)).toBeUndefined();
  });

  it('never lowers counters or takes numbers already in use', () => {
    const after = state({ nextNumber: 6, nextDoc: 20, shared: { '11': 5 }, numbers: { '11': 5 } });
    applyCarry(after, parseCarry(carryOf(before, NOW, 'x'), NOW, new Set([11, 12]))!);
    expect(after.nextNumber).toBe(6);
    expect(after.nextDoc).toBe(20);
    expect(after.shared).toEqual({ '11': 5, '12': 3 });
  });
});
