// scroll: the page or a container, by pixels or to an edge, or an element into view.
import type { PageResult } from '../../protocol.gen';
import { TetherError } from '../../shared/errors';
import { act, checkScriptable } from './act';
import { snapShape, str, tabParams, type P } from './params';

const content = 'content' as const;

const SCROLL_TO = ['top', 'bottom', 'left', 'right', 'view'] as const;
type ScrollTo = (typeof SCROLL_TO)[number];
/** The farthest one scroll may move, in CSS pixels (Chrome's own limit on layout sizes is about 33 million). */
const SCROLL_MAX_PX = 10_000_000;

/**
 * Scrolls the page or a container (ref) by dx/dy pixels or to an edge, or
 * brings ref into view. It never brings a background tab to the front:
 * the result says when the tab was hidden (and so did not render).
 */
export async function scrollMethod(p: P, d: number): Promise<PageResult> {
  const to = p.to === undefined || p.to === null || p.to === '' ? undefined : p.to;
  if (to !== undefined && !SCROLL_TO.includes(to as ScrollTo)) throw new TetherError('bad_request', 'to must be "top", "bottom", "left", "right" or "view".');
  const px = (key: string): number => {
    const v = p[key] ?? 0;
    if (typeof v !== 'number' || !Number.isInteger(v) || Math.abs(v) > SCROLL_MAX_PX) throw new TetherError('bad_request', `${key} must be a whole number of pixels (negative: up or left).`);
    return v;
  };
  const dx = px('dx');
  const dy = px('dy');
  const ref = p.ref === undefined || p.ref === null || p.ref === '' ? undefined : str(p, 'ref');
  if (to === 'view' && !ref) throw new TetherError('bad_request', 'to "view" needs ref: the element to bring into view.');
  if (to === undefined && dx === 0 && dy === 0) throw new TetherError('bad_request', 'Pass dy or dx (pixels; negative scrolls up or left), or to: top, bottom, left, right or view.');
  const tab = tabParams(p).tab;
  await checkScriptable(tab);
  return act(tab, { target: content, kind: 'scroll', ref, to: to as ScrollTo | undefined, dx, dy, docsIssued: 0, snap: snapShape(p) }, d);
}
