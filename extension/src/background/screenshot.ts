// Screenshots with chrome.tabs.captureVisibleTab: the visible viewport, one
// element's box (cropped at the device pixel ratio), or the full page
// (scrolled and stitched in an OffscreenCanvas, captures spaced to stay under
// Chrome's limit of about two a second), scaled down to fit maxBytes.
import type { ScreenshotGeometry, ScreenshotResult } from '../protocol.gen';
import { TetherError, restrictedPage } from '../shared/errors';
import type { ContentMessage, ViewportInfo } from '../shared/messages';
import { callContent, isRestrictedUrl } from './content-bridge';
import { documentsIssued } from './documents';
import { touch, type SharedTab } from './shared-tabs';

export interface ScreenshotOptions {
  fullPage: boolean;
  ref?: string;
  format: 'png' | 'jpeg';
  bringToFront: boolean;
  maxBytes: number;
}

/** Chrome allows about 2 captureVisibleTab calls a second per extension. */
export const CAPTURE_SPACING_MS = 550;
/** The tallest stitched image, in device pixels (canvas limits). */
const MAX_STITCH_HEIGHT = 16_384;
const JPEG_QUALITY = 0.9;

let lastCapture = 0;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One captureVisibleTab call, spaced from the previous one; retried once when over the rate limit. */
async function capture(windowId: number): Promise<ImageBitmap> {
  for (let attempt = 0; ; attempt++) {
    const wait = lastCapture + CAPTURE_SPACING_MS - Date.now();
    if (wait > 0) await sleep(wait);
    lastCapture = Date.now();
    try {
      const dataUrl = await chrome.tabs.captureVisibleTab(windowId, { format: 'png' });
      const blob = await (await fetch(dataUrl)).blob();
      return await createImageBitmap(blob);
    } catch (err) {
      const text = String(err instanceof Error ? err.message : err);
      if (attempt === 0 && /MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND/.test(text)) {
        await sleep(1000);
        continue;
      }
      if (/cannot be scripted|Cannot access|permission/i.test(text)) throw new TetherError('restricted_page', `Chrome did not let Tether capture this tab (${text}).`);
      throw err;
    }
  }
}

async function content(tabId: number, msg: ContentMessage, deadline: number): Promise<ViewportInfo> {
  const reply = await callContent(tabId, msg, deadline);
  if (!reply.ok) throw new TetherError(reply.error.code, reply.error.message);
  if (!('viewport' in reply)) throw new Error('the content script answered without the viewport');
  return reply.viewport;
}

export async function captureScreenshot(t: SharedTab, o: ScreenshotOptions, deadline: number): Promise<ScreenshotResult> {
  await touch(t.tabId);
  let tab = await chrome.tabs.get(t.tabId);
  const url = tab.url || tab.pendingUrl || '';
  if (isRestrictedUrl(url)) throw restrictedPage(url);
  const win = await chrome.windows.get(tab.windowId);
  if (!tab.active || win.state === 'minimized') {
    if (!o.bringToFront) {
      throw new TetherError(
        'not_interactable',
        `Tab ${t.number} is not visible (${tab.active ? 'its window is minimized' : 'another tab is in front of it in its window'}), and Chrome can only capture the visible tab. Pass bring_to_front: true to bring it to the front for the capture, or select it first with browser_tabs {action: "select", tab: ${t.number}}.`,
      );
    }
    if (win.state === 'minimized') await chrome.windows.update(tab.windowId, { state: 'normal' });
    tab = await chrome.tabs.update(t.tabId, { active: true }) ?? tab;
    await sleep(200); // let it paint
  }
  const docs = await documentsIssued(t.tabId);
  let canvas: OffscreenCanvas;
  let geometry: ScreenshotGeometry;
  if (o.fullPage) {
    const stitched = await stitch(t.tabId, tab.windowId, deadline);
    canvas = stitched.canvas;
    geometry = geometryOf(stitched.viewport, stitched.scale, 0, 0, true);
  } else if (o.ref) {
    const vp = await content(t.tabId, { target: 'content', kind: 'viewport', ref: o.ref, docsIssued: docs }, deadline);
    const shot = await capture(tab.windowId);
    canvas = crop(shot, vp);
    const box = vp.box!;
    geometry = geometryOf(vp, vp.width > 0 ? shot.width / vp.width : vp.dpr, Math.max(0, box.x), Math.max(0, box.y), false);
  } else {
    const vp = await content(t.tabId, { target: 'content', kind: 'viewport', docsIssued: docs }, deadline);
    const shot = await capture(tab.windowId);
    canvas = new OffscreenCanvas(shot.width, shot.height);
    canvas.getContext('2d')!.drawImage(shot, 0, 0);
    geometry = geometryOf(vp, vp.width > 0 ? shot.width / vp.width : vp.dpr, 0, 0, false);
  }
  const mime = o.format === 'jpeg' ? 'image/jpeg' : 'image/png';
  const out = await encode(canvas, mime, o.maxBytes);
  // Scaling down to fit maxBytes shrinks image pixels per CSS pixel too.
  geometry.scale *= out.width / canvas.width;
  return { tab: t.number, mime, dataBase64: await base64(out.blob), width: out.width, height: out.height, geometry };
}

function geometryOf(vp: ViewportInfo, scale: number, originX: number, originY: number, fullPage: boolean): ScreenshotGeometry {
  const g: ScreenshotGeometry = { viewportWidth: vp.width, viewportHeight: vp.height, dpr: vp.dpr, scale, originX, originY };
  if (fullPage) g.fullPage = true;
  return g;
}

/** The element's box (CSS pixels, viewport coordinates) cut out of a viewport capture. */
export function cropRect(vp: ViewportInfo, imageWidth: number, imageHeight: number): { sx: number; sy: number; sw: number; sh: number } {
  const box = vp.box!;
  // Image pixels per CSS pixel: the device pixel ratio, as the capture really came out.
  const scale = vp.width > 0 ? imageWidth / vp.width : vp.dpr;
  const left = Math.max(0, box.x);
  const top = Math.max(0, box.y);
  const right = Math.min(vp.width, box.x + box.width);
  const bottom = Math.min(vp.height, box.y + box.height);
  if (right <= left || bottom <= top) {
    throw new TetherError('not_interactable', 'The element has no visible area to capture (it is empty, hidden or off-screen). Call browser_snapshot and pick a visible element, or capture the page.');
  }
  const sx = Math.floor(left * scale);
  const sy = Math.floor(top * scale);
  return { sx, sy, sw: Math.min(imageWidth - sx, Math.ceil((right - left) * scale)), sh: Math.min(imageHeight - sy, Math.ceil((bottom - top) * scale)) };
}

function crop(shot: ImageBitmap, vp: ViewportInfo): OffscreenCanvas {
  const { sx, sy, sw, sh } = cropRect(vp, shot.width, shot.height);
  const canvas = new OffscreenCanvas(Math.max(1, sw), Math.max(1, sh));
  canvas.getContext('2d')!.drawImage(shot, sx, sy, sw, sh, 0, 0, sw, sh);
  return canvas;
}

/** Scrolls through the page and stitches the captures; fixed and sticky elements show once. */
async function stitch(tabId: number, windowId: number, deadline: number): Promise<{ canvas: OffscreenCanvas; viewport: ViewportInfo; scale: number }> {
  const first = await content(tabId, { target: 'content', kind: 'scroll_to', x: 0, y: 0 }, deadline);
  const startX = first.scrollX;
  try {
    const shot0 = await capture(windowId);
    const scale = first.width > 0 ? shot0.width / first.width : first.dpr;
    const height = Math.min(Math.ceil(first.scrollHeight * scale), MAX_STITCH_HEIGHT);
    const canvas = new OffscreenCanvas(shot0.width, Math.max(height, shot0.height));
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(shot0, 0, 0);
    let covered = shot0.height;
    for (let i = 1; covered < height; i++) {
      // Keep time for encoding and the answer.
      if (Date.now() + CAPTURE_SPACING_MS + 2000 > deadline) break;
      const vp = await content(tabId, { target: 'content', kind: 'scroll_to', x: 0, y: Math.round(covered / scale), hideFixed: true }, deadline);
      const shot = await capture(windowId);
      const y = Math.round(vp.scrollY * scale);
      ctx.drawImage(shot, 0, y);
      const next = y + shot.height;
      if (next <= covered) break; // the page did not scroll further
      covered = next;
    }
    if (covered < canvas.height) {
      // Stopped early (time or a shorter page than reported): cut the image there.
      const cut = new OffscreenCanvas(canvas.width, covered);
      cut.getContext('2d')!.drawImage(canvas, 0, 0);
      return { canvas: cut, viewport: first, scale };
    }
    return { canvas, viewport: first, scale };
  } finally {
    await content(tabId, { target: 'content', kind: 'scroll_to', x: startX, y: first.scrollY, hideFixed: false }, Date.now() + 2000).catch(() => undefined);
  }
}

/** Encodes the canvas; while over maxBytes, scales it down (and lowers JPEG quality). */
async function encode(source: OffscreenCanvas, mime: string, maxBytes: number): Promise<{ blob: Blob; width: number; height: number }> {
  let canvas = source;
  let quality = JPEG_QUALITY;
  let blob = await canvas.convertToBlob({ type: mime, quality });
  for (let i = 0; maxBytes > 0 && blob.size > maxBytes && i < 10; i++) {
    const factor = Math.min(0.9, Math.sqrt(maxBytes / blob.size) * 0.95);
    const w = Math.max(1, Math.floor(canvas.width * factor));
    const h = Math.max(1, Math.floor(canvas.height * factor));
    const next = new OffscreenCanvas(w, h);
    const ctx = next.getContext('2d')!;
    ctx.imageSmoothingQuality = 'high';
    ctx.drawImage(canvas, 0, 0, w, h);
    canvas = next;
    if (mime === 'image/jpeg') quality = Math.max(0.5, quality - 0.1);
    blob = await canvas.convertToBlob({ type: mime, quality });
  }
  if (maxBytes > 0 && blob.size > maxBytes) {
    throw new TetherError('bad_request', `The screenshot does not fit in ${maxBytes} bytes even scaled down. Allow more bytes, use format jpeg, or capture one element with ref.`);
  }
  return { blob, width: canvas.width, height: canvas.height };
}

export async function base64(blob: Blob): Promise<string> {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}
