// The pointer methods: click (button, double, held keys), hover and drag, by
// ref or at a point of the page. A point is in the top viewport's CSS pixels
// (fullPage: the document's; the page is scrolled to it first). It is handed
// down to the frame it falls in: each frame's content script says whether
// the point is its own or a cross-origin child frame's, and where in that
// frame; only then does one frame act, once. Trusted input (chrome.debugger)
// aims at the top viewport's point directly.
import type { PageResult } from '../../protocol.gen';
import { TetherError } from '../../shared/errors';
import type { Modifier } from '../../shared/keys';
import type { MouseButton, ViewportInfo, ViewportPoint } from '../../shared/messages';
import { callContent } from '../content-bridge';
import { documentsIssued } from '../documents';
import { requireTrusted, trustedClick, trustedHover, withDebugger, type Send } from '../trusted';
import { act, checkScriptable, pageAct, scriptableFirst, type ActMessage } from './act';
import { bool, snapShape, str, tabParams, type P } from './params';
import { frameResolver, routeRef } from './route';

const content = 'content' as const;

// A chain of frames deeper than this is refused rather than followed.
const MAX_FRAME_DEPTH = 10;

export async function clickMethod(p: P, d: number): Promise<PageResult> {
  const at = point(p, 'at');
  const ref = at ? '' : str(p, 'ref');
  const opts = { button: button(p), count: clickCount(p), modifiers: modifiers(p) };
  const snap = snapShape(p);
  if (bool(p, 'trusted')) return trustedAct(p, at ? [at] : ref, d, (send, [q]) => trustedClick(send, q!.x, q!.y, opts));
  const msg = { target: content, kind: 'click' as const, ref, docsIssued: 0, snap, ...opts };
  if (!at) return scriptableFirst(p, () => act(tabParams(p).tab, msg, d));
  return pointAct(p, d, { ...msg, at }, [at]);
}

export async function hoverMethod(p: P, d: number): Promise<PageResult> {
  const at = point(p, 'at');
  const ref = at ? '' : str(p, 'ref');
  if (bool(p, 'trusted')) return trustedAct(p, at ? [at] : ref, d, (send, [q]) => trustedHover(send, q!.x, q!.y));
  const msg = { target: content, kind: 'hover' as const, ref, docsIssued: 0, snap: snapShape(p) };
  if (!at) return pageAct(p, msg, d);
  return pointAct(p, d, { ...msg, at }, [at]);
}

export async function dragMethod(p: P, d: number): Promise<PageResult> {
  const from = point(p, 'from');
  const to = point(p, 'to');
  if (!from !== !to) throw new TetherError('bad_request', 'Pass both from and to (points), or fromRef and toRef.');
  const msg = { target: content, kind: 'drag' as const, ref: from ? '' : str(p, 'fromRef'), toRef: from ? '' : str(p, 'toRef'), docsIssued: 0, snap: snapShape(p) };
  if (!from || !to) return pageAct(p, msg, d);
  return pointAct(p, d, { ...msg, from, to }, [from, to]);
}

/**
 * Acts at points (msg holds them; points lists the same objects): once the
 * page is ready, a full-page point is scrolled to, and the points are
 * followed into the frame they fall in and rewritten in place into its
 * viewport. All points must fall in one frame; that frame acts, once.
 */
async function pointAct(p: P, d: number, msg: ActMessage, points: ViewportPoint[]): Promise<PageResult> {
  const tab = tabParams(p).tab;
  await checkScriptable(tab);
  const fullPage = bool(p, 'fullPage');
  return act(tab, msg, d, undefined, async (t) => {
    const top = await toViewport(t.tabId, points, fullPage, d);
    let frameId = -1;
    for (const [i, q] of top.entries()) {
      const got = await follow(t.tabId, q, d);
      if (frameId !== -1 && got.frameId !== frameId) {
        throw new TetherError('bad_request', 'The start and end points of the drag fall in different frames, and a drag cannot leave its frame. Pick two points in the same frame.');
      }
      frameId = got.frameId;
      Object.assign(points[i]!, got.point);
    }
    return frameId;
  });
}

/**
 * The points in the top frame's viewport. Page points (fullPage) are
 * scrolled to first: the page scrolls so that their middle is at the
 * viewport's centre, and all of them must then be in view.
 */
async function toViewport(tabId: number, points: ViewportPoint[], fullPage: boolean, deadline: number): Promise<ViewportPoint[]> {
  if (!fullPage) return points;
  const vp = await viewport(tabId, { target: content, kind: 'viewport', docsIssued: await documentsIssued(tabId) }, deadline);
  const mx = points.reduce((s, q) => s + q.x, 0) / points.length;
  const my = points.reduce((s, q) => s + q.y, 0) / points.length;
  const now = await viewport(tabId, { target: content, kind: 'scroll_to', x: Math.max(0, mx - vp.width / 2), y: Math.max(0, my - vp.height / 2) }, deadline);
  const out = points.map((q) => ({ x: q.x - now.scrollX, y: q.y - now.scrollY }));
  for (const [i, q] of out.entries()) {
    if (q.x < 0 || q.y < 0 || q.x >= now.width || q.y >= now.height) {
      const src = points[i]!;
      throw new TetherError(
        'bad_request',
        `The page point (${src.x}, ${src.y}) cannot be brought into the viewport (${now.width}×${now.height} CSS px; the page is ${now.scrollWidth}×${now.scrollHeight})${points.length > 1 ? ' together with the other point' : ''}. Take a new full-page screenshot and use its coordinates, or drag between closer points.`,
      );
    }
  }
  return out;
}

async function viewport(tabId: number, msg: Parameters<typeof callContent>[1], deadline: number): Promise<ViewportInfo> {
  const reply = await callContent(tabId, msg, deadline);
  if (!reply.ok) throw new TetherError(reply.error.code, reply.error.message);
  if (!('viewport' in reply)) throw new Error('the content script answered without the viewport');
  return reply.viewport;
}

/** Follows a point of the top viewport down through cross-origin frames: the frame it lands in and the point there. */
async function follow(tabId: number, top: ViewportPoint, deadline: number): Promise<{ frameId: number; point: ViewportPoint }> {
  let frameId = 0;
  let at = top;
  for (let depth = 0; depth < MAX_FRAME_DEPTH; depth++) {
    const reply = await callContent(tabId, { target: content, kind: 'hit', x: at.x, y: at.y }, deadline, frameId);
    if (!reply.ok) throw new TetherError(reply.error.code, reply.error.message);
    if (!('hit' in reply)) throw new Error('the content script answered without a hit');
    if (!reply.hit) return { frameId, point: at };
    const child = await frameResolver(tabId, frameId)(reply.hit.frame);
    if (child === undefined) {
      throw new TetherError('not_interactable', `The point (${top.x}, ${top.y}) is on a frame that Chrome lists no document for (it has not loaded yet, or was removed). Call browser_snapshot, then retry.`);
    }
    frameId = child;
    at = { x: reply.hit.x, y: reply.hit.y };
  }
  throw new TetherError('not_interactable', `The point (${top.x}, ${top.y}) is inside frames nested more than ${MAX_FRAME_DEPTH} deep. Act on the element by ref from browser_snapshot.`);
}

/**
 * Trusted click, hover or drag: by ref, the content script scrolls the
 * element into view and checks what covers it; at points, the page is
 * scrolled for page points. The debugger then acts at the top viewport's
 * points.
 */
async function trustedAct(p: P, target: string | ViewportPoint[], d: number, run: (send: Send, points: ViewportPoint[]) => Promise<void>): Promise<PageResult> {
  await requireTrusted();
  const tab = tabParams(p).tab;
  await checkScriptable(tab);
  const snap = snapShape(p);
  if (typeof target !== 'string') {
    const fullPage = bool(p, 'fullPage');
    let points: ViewportPoint[] = target;
    return act(tab, { target: content, kind: 'settle', docsIssued: 0, snap }, d, (tabId) => withDebugger(tabId, (send) => run(send, points)), async (t) => {
      points = await toViewport(t.tabId, target, fullPage, d);
      return 0;
    });
  }
  const ref = target;
  const { t, frameId } = await routeRef(ref, tab);
  if (frameId !== 0) {
    throw new TetherError('not_interactable', `Element ref ${ref} is in a cross-origin frame, where trusted input cannot aim by ref yet. Take a screenshot and pass x/y instead, or call the tool without trusted.`);
  }
  const reply = await callContent(t.tabId, { target: content, kind: 'point', ref, docsIssued: await documentsIssued(t.tabId) }, d);
  if (!reply.ok) throw new TetherError(reply.error.code, reply.error.message);
  if (!('point' in reply)) throw new Error('the content script answered without a point');
  const at = reply.point;
  return act(t.number, { target: content, kind: 'settle', docsIssued: 0, snap }, d, (tabId) => withDebugger(tabId, (send) => run(send, [at])));
}

/** A point param {x, y} (CSS px, 0 or more), or undefined when absent. */
function point(p: P, key: string): ViewportPoint | undefined {
  const v = p[key];
  if (v === undefined || v === null) return undefined;
  const o = v as { x?: unknown; y?: unknown };
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0;
  if (typeof v !== 'object' || !ok(o.x) || !ok(o.y)) throw new TetherError('bad_request', `${key} must be {x, y}: CSS pixels, 0 or more.`);
  return { x: o.x, y: o.y };
}

function button(p: P): MouseButton | undefined {
  const b = p.button;
  if (b === undefined || b === null || b === '') return undefined;
  if (b !== 'left' && b !== 'right' && b !== 'middle') throw new TetherError('bad_request', 'button must be "left", "right" or "middle".');
  return b;
}

function clickCount(p: P): number | undefined {
  const c = p.clickCount;
  if (c === undefined || c === null || c === 0) return undefined;
  if (c !== 1 && c !== 2) throw new TetherError('bad_request', 'clickCount must be 1 or 2.');
  return c;
}

function modifiers(p: P): Modifier[] | undefined {
  const m = p.modifiers;
  if (m === undefined || m === null) return undefined;
  const known = ['Alt', 'Control', 'Meta', 'Shift'];
  if (!Array.isArray(m) || !m.every((k) => typeof k === 'string' && known.includes(k))) {
    throw new TetherError('bad_request', 'modifiers must list keys among "Alt", "Control", "Meta" and "Shift".');
  }
  return m as Modifier[];
}
