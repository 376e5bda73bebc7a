// The content script's request handler, its one dispatcher of the service
// worker's messages: one instance per document, owning the document's refs. It learns the document's number in the profile from the
// service worker the first time it needs refs, and tells it with every answer
// from then on: a document restored from the back/forward cache keeps its
// number and refs, and the service worker must route them here again.
import { TetherError, toWireError } from '../shared/errors';
import { parseKey } from '../shared/keys';
import type { ContentMessage, ContentReply, PageSnapshot, SnapshotShape } from '../shared/messages';
import type { PageControl } from '../shared/page-hooks';
import { DEFAULT_SETTLE, click, clickAt, clickablePoint, hover, hoverAt, selectOption, settle, typeFocused, typeText, viewportPoint, type SettleOptions, type SettleResult } from './actions';
import { drag, dragPoints } from './dnd';
import { find } from './find';
import { packPage } from './pack';
import { pressKey } from './keys';
import { elementAtPoint } from './pointer';
import { readDocument } from './read';
import { RefRegistry } from './refs';
import { scroll } from './scroll';
import { snapshotPage } from './snapshot';
import { uploadFiles } from './upload';
import { scrollViewportTo, viewportOf } from './viewport';
import { waitFor } from './wait';

type Registered = number | { doc: number; frame: number };

export class ContentAgent {
  private refs?: Promise<RefRegistry>;
  /** The document's number, once the service worker gave one. */
  private docNumber?: number;
  /** The snapshot shape of the request being handled (snapshot options ride on every request). */
  private snap: SnapshotShape = {};
  /** The current request's read deadline (ContentMessage until). */
  private until: number | undefined;

  constructor(
    private readonly doc: Document,
    /**
     * Asks the service worker for this document's number in the profile (and
     * its frameId); claim: the number it had, asked back after a restore.
     */
    private readonly registerDocument: (claim?: number) => Promise<Registered>,
    private readonly settleOptions: SettleOptions = DEFAULT_SETTLE,
    /** The Chrome frameId of a cross-origin iframe (chrome.runtime.getFrameId). */
    private readonly frameIdOf?: (iframe: Element) => number | undefined,
    /** Passes page-state to the page-world hooks (content.ts: through the hook relay). */
    private readonly pageState?: (control: PageControl) => void,
    /**
     * Tells the service worker that an action's follow-up read starts (the
     * action itself, and the dialogs it opens at once, are done): a page
     * busy from here to the reply is busy with our read, not blocked.
     */
    private readonly reading: () => Promise<void> = async () => undefined,
    /**
     * Tells the service worker that this script's own work before an
     * action's dispatch starts (on) or ends (off): a page busy then is busy
     * with us (a large page's layout for the hit test), not blocked.
     */
    private readonly preparing: (on: boolean) => Promise<void> = async () => undefined,
    /** Resolves after ms, timed by the service worker (a hidden page's own timers fire on whole seconds). */
    private readonly delay?: (ms: number) => Promise<void>,
  ) {}

  /**
   * Handles every content message; the answer says the document's number
   * once it has one. page-state goes to the page-world hooks and is answered
   * at once, without the number: the service worker also uses it to see that
   * the page is not blocked.
   */
  async handle(msg: ContentMessage): Promise<ContentReply> {
    if (msg.kind === 'page-state') {
      const { target: _t, kind: _k, ...control } = msg;
      this.pageState?.(control);
      return { ok: true, pong: true };
    }
    const reply = await this.answer(msg);
    return this.docNumber === undefined ? reply : { ...reply, doc: this.docNumber };
  }

  /**
   * The document is shown again (the back/forward cache restored it, or its
   * tab is shared again): asks the service worker to count it as its frame's
   * document once more, under the number it has. Requests wait for the
   * answer. A number it no longer knows is replaced by a new one, and the old
   * refs are stale; when the service worker does not answer, they are kept.
   */
  reclaim(): void {
    const before = this.refs;
    if (!before) return;
    const after = before.then(async (refs) => {
      const got = await this.registerDocument(refs.doc).catch(() => undefined);
      if (got === undefined) return refs;
      const { doc, frame } = typeof got === 'number' ? { doc: got, frame: refs.frame } : got;
      return doc === refs.doc && frame === refs.frame ? refs : this.registered(new RefRegistry(doc, frame));
    });
    this.refs = after;
    after.catch(() => {
      if (this.refs === after) this.refs = undefined;
    });
  }

  private async answer(msg: Exclude<ContentMessage, { kind: 'page-state' }>): Promise<ContentReply> {
    this.snap = (msg as { snap?: SnapshotShape }).snap ?? {};
    this.until = msg.until;
    try {
      switch (msg.kind) {
        case 'ping':
          return { ok: true, pong: true };
        case 'snapshot':
          return { ok: true, page: await this.page(msg.docsIssued) };
        case 'find': {
          const refs = await this.registry();
          const out = find(this.doc, refs, { text: msg.text, role: msg.role, limit: msg.limit, frameIdOf: this.frameIdOf, until: msg.until });
          const reply: ContentReply = { ok: true, found: out.matches, frames: out.frames, url: this.doc.location.href, title: this.doc.title };
          if (out.partial) reply.partial = true;
          if (out.more) reply.more = true;
          return reply;
        }
        case 'read':
          return { ok: true, html: readDocument(this.doc), url: this.doc.location.href, title: this.doc.title };
        case 'click': {
          const opts = { button: msg.button, count: msg.count, modifiers: msg.modifiers };
          const el = msg.at ? undefined : await this.resolve(msg.ref, msg.docsIssued);
          return await this.act(() => (el ? click(el, opts) : clickAt(this.doc, msg.at!, opts)), el);
        }
        case 'hit': {
          // Where a point of this frame's viewport lands: here, or in a cross-origin frame (its frameId and the point there).
          const hit = elementAtPoint(this.doc, msg.x, msg.y);
          if (hit.kind === 'element') return { ok: true, hit: null };
          return { ok: true, hit: { frame: frameKey(hit.frame, this.frameIdOf), x: hit.x, y: hit.y } };
        }
        case 'type': {
          // No ref: type into the focused element at its caret.
          const el = msg.ref === '' ? undefined : await this.resolve(msg.ref, msg.docsIssued);
          return await this.act(() => (el ? typeText(el, msg.text, msg.submit) : typeFocused(this.doc, msg.text, msg.submit)));
        }
        case 'select_option': {
          const el = await this.resolve(msg.ref, msg.docsIssued);
          return await this.act(() => selectOption(el, msg.values));
        }
        case 'hover': {
          const refs = await this.registry();
          if (msg.at) {
            const at = msg.at;
            return await this.act(() => hoverAt(this.doc, at), null);
          }
          const el = refs.resolve(msg.ref, msg.docsIssued);
          return await this.act(() => hover(el), el);
        }
        case 'drag': {
          const refs = await this.registry();
          if (msg.from && msg.to) {
            const { from, to } = msg;
            return await this.act(() => dragPoints(this.doc, from, to), null);
          }
          const from = refs.resolve(msg.ref, msg.docsIssued);
          const to = refs.resolve(msg.toRef, msg.docsIssued);
          return await this.act(() => drag(from, to), from);
        }
        case 'press_key': {
          await this.registry();
          const spec = parseKey(msg.key);
          return await this.act(() => pressKey(this.doc, spec));
        }
        case 'file_upload': {
          const el = await this.resolve(msg.ref, msg.docsIssued);
          return await this.act(() => void uploadFiles(el, msg.files));
        }
        case 'wait_for':
          await this.registry();
          await waitFor(this.doc, { text: msg.text, textGone: msg.textGone, timeMs: msg.timeMs, limitMs: msg.limitMs });
          return await this.afterAction({ navigating: false });
        case 'settle':
          await this.registry();
          return await this.act(() => undefined);
        case 'scroll': {
          const refs = await this.registry();
          const el = msg.ref ? refs.resolve(msg.ref, msg.docsIssued) : undefined;
          // scroll waits for the page to draw what scrolled in.
          const scrolled = await scroll(this.doc, { el, to: msg.to, dx: msg.dx, dy: msg.dy });
          const reply = await this.afterAction({ navigating: false });
          if (scrolled && reply.ok && 'page' in reply) reply.page.scrolled = scrolled;
          return reply;
        }
        case 'point':
          return { ok: true, point: viewportPoint(await this.resolve(msg.ref, msg.docsIssued)) };
        case 'viewport': {
          const refs = await this.registry();
          const el = msg.ref ? refs.resolve(msg.ref, msg.docsIssued) : undefined;
          return { ok: true, viewport: await viewportOf(this.doc, el) };
        }
        case 'scroll_to':
          await this.registry();
          return { ok: true, viewport: await scrollViewportTo(this.doc, msg.x, msg.y, msg.hideFixed) };
        default: {
          const kind: never = msg;
          throw new TetherError('bad_request', `Unknown content request ${JSON.stringify(kind)}.`);
        }
      }
    } catch (err) {
      return { ok: false, error: toWireError(err) };
    }
  }

  /**
   * Runs action and answers with the page once it settled. aim: the element
   * the action hits (null: a point of the viewport); its hit test is done
   * first while the service worker knows the page is busy with us.
   */
  private async act(action: () => void, aim?: Element | null): Promise<ContentReply> {
    // A hit test that brought a stale rendering up to date slowly: the redraw of the action's change will be slow too.
    const aimMs = aim !== undefined ? await this.aimFirst(aim) : 0;
    return this.afterAction(await settle(this.doc, action, this.settleOptions, { slowHint: aimMs >= this.settleOptions.quietMs, delay: this.delay }));
  }

  /**
   * Brings the page's layout up to date for the hit test of an action (el
   * scrolled into view, as the action will): after a change, a large page
   * can take seconds, during which it does not answer pings. Then the action's
   * own hit test finds it clean. Errors are the action's to report. Returns
   * how long the hit test took (ms).
   */
  private async aimFirst(el: Element | null): Promise<number> {
    await this.preparing(true).catch(() => undefined);
    const start = performance.now();
    try {
      if (el) clickablePoint(el);
      else this.doc.elementFromPoint(0, 0);
    } catch {
      // The action throws it again.
    }
    // Not awaited: the action must run in this same task, right after its
    // hit test, before an animation frame can redraw what was scrolled into
    // view (a virtual list replaces its rows then, and the click would hit a
    // removed element). The message is sent before the action runs, so pings
    // during the action's dispatch count again.
    void this.preparing(false).catch(() => undefined);
    return performance.now() - start;
  }

  /** The element of a ref of this document (throws stale_ref / unknown_ref). */
  private async resolve(ref: string, docsIssued: number): Promise<Element> {
    return (await this.registry()).resolve(ref, docsIssued);
  }

  private async afterAction(settled: SettleResult): Promise<ContentReply> {
    // While a navigation replaces this document, a snapshot of it is useless:
    // the service worker waits for the new page and snapshots that. Otherwise
    // the message is sent at once and its answer not awaited: on a page that
    // redraws slowly, awaiting it would let the redraw of the action's
    // change run first (settle's early end would be lost).
    const told = this.reading().catch(() => undefined);
    if (settled.navigating) await told;
    const reply: ContentReply = { ok: true, page: await this.page(), navigating: settled.navigating };
    if (settled.redrawing) reply.redrawing = true;
    return reply;
  }

  /** The page's snapshot, shaped by the request's snapshot options (docsIssued: for a subtree ref). */
  async page(docsIssued = 0): Promise<PageSnapshot> {
    const refs = await this.registry();
    const shape = this.snap;
    const root = shape.ref ? refs.resolve(shape.ref, docsIssued) : undefined;
    const out = snapshotPage(this.doc, refs, { maxChars: shape.maxChars, depth: shape.depth, urls: shape.urls === true, root, frameIdOf: this.frameIdOf, until: this.until });
    const page: PageSnapshot = { url: this.doc.location.href, title: this.doc.title, snapshot: out.text };
    if (out.omitted > 0) page.omitted = out.omitted;
    if (out.more) page.omittedMore = true;
    if (out.partial) page.partial = true;
    if (out.frames.length > 0) page.frames = out.frames;
    return packPage(page, shape);
  }

  private registry(): Promise<RefRegistry> {
    if (!this.refs) {
      const refs = this.registerDocument().then((r) => this.registered(typeof r === 'number' ? new RefRegistry(r) : new RefRegistry(r.doc, r.frame)));
      this.refs = refs;
      // A failed registration is retried on the next request.
      refs.catch(() => {
        if (this.refs === refs) this.refs = undefined;
      });
    }
    return this.refs;
  }

  private registered(refs: RefRegistry): RefRegistry {
    this.docNumber = refs.doc;
    return refs;
  }
}

/**
 * Names a cross-origin frame for the service worker as snapshots do: its
 * Chrome frameId when known, else its URL and its rank among this document's
 * frames showing that URL (background/methods/route.ts frameResolver).
 */
function frameKey(frame: HTMLIFrameElement | HTMLFrameElement, frameIdOf?: (iframe: Element) => number | undefined): number | string {
  const id = frameIdOf?.(frame);
  if (id !== undefined && id > 0) return id;
  const urlOf = (f: Element) => (f.hasAttribute('srcdoc') ? 'about:srcdoc' : (f as HTMLIFrameElement).src || 'about:blank');
  const url = urlOf(frame);
  const same = Array.from(frame.ownerDocument.querySelectorAll('iframe, frame')).filter((f) => urlOf(f) === url);
  const nth = Math.max(0, same.indexOf(frame));
  return nth === 0 ? `u${url}` : `u${nth} ${url}`;
}
