// screenshot: the viewport, the full page or one element (captureScreenshot
// in ../screenshot.ts does the capturing).
import type { ScreenshotResult } from '../../protocol.gen';
import { TetherError } from '../../shared/errors';
import { captureScreenshot } from '../screenshot';
import { requireTab } from '../shared-tabs';
import { pageReady } from '../tab-hooks';
import { checkScriptable } from './act';
import { bool, str, tabParams, type P } from './params';
import { routeRef } from './route';

export async function screenshotMethod(p: P, d: number): Promise<ScreenshotResult> {
  const format = p.format === undefined || p.format === null || p.format === '' ? 'png' : p.format;
  if (format !== 'png' && format !== 'jpeg') throw new TetherError('bad_request', 'format must be "png" or "jpeg".');
  const maxBytes = p.maxBytes ?? 0;
  if (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes < 0) throw new TetherError('bad_request', 'maxBytes must be a whole number of bytes (0: no cap).');
  const ref = p.ref === undefined || p.ref === null || p.ref === '' ? undefined : str(p, 'ref');
  const tab = tabParams(p).tab;
  await checkScriptable(tab);
  let t = await requireTab(tab);
  if (ref) {
    const routed = await routeRef(ref, tab);
    if (routed.frameId !== 0) throw new TetherError('not_interactable', `Element ref ${ref} is in a cross-origin frame; capture the page (no ref) instead.`);
    t = routed.t;
  }
  await pageReady(t.tabId);
  return captureScreenshot(t, { fullPage: bool(p, 'fullPage'), ref, format, bringToFront: bool(p, 'bringToFront'), maxBytes }, d);
}
