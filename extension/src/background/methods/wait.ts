// wait_for: waits in the page for text to appear or disappear, or for a time.
import type { PageResult } from '../../protocol.gen';
import { TetherError } from '../../shared/errors';
import { SNAPSHOT_RESERVE_MS, pageAct } from './act';
import { optString, snapShape, type P } from './params';

/** The longest wait_for (the daemon's documented limit). */
export const WAIT_FOR_MAX_MS = 60_000;

const content = 'content' as const;

export async function waitForMethod(p: P, d: number): Promise<PageResult> {
  const text = optString(p, 'text');
  const textGone = optString(p, 'textGone');
  const t = p.timeMs;
  if (t !== undefined && t !== null && (typeof t !== 'number' || !Number.isFinite(t) || t < 0)) {
    throw new TetherError('bad_request', 'timeMs must be a number of milliseconds (0 or more).');
  }
  const timeMs = typeof t === 'number' && t > 0 ? t : undefined;
  if (!text && !textGone && timeMs === undefined) throw new TetherError('bad_request', 'Pass text, textGone or timeMs (at least one).');
  if (timeMs !== undefined && timeMs > WAIT_FOR_MAX_MS) {
    throw new TetherError('bad_request', `timeMs is at most ${WAIT_FOR_MAX_MS} (60 s); wait in several calls for longer.`);
  }
  const budget = d - Date.now() - SNAPSHOT_RESERVE_MS;
  const limitMs = Math.max(0, Math.min(budget, WAIT_FOR_MAX_MS, text || textGone ? (timeMs ?? WAIT_FOR_MAX_MS) : timeMs!));
  return pageAct(p, { target: content, kind: 'wait_for', text, textGone, timeMs, limitMs, docsIssued: 0, snap: snapShape(p) }, d);
}
