// The content script's request handler: one instance per document, owning the
// document's refs. It learns the document's number in its tab from the
// service worker the first time it needs refs.
import { TetherError, toWireError } from '../shared/errors';
import type { ContentMessage, ContentReply, PageSnapshot } from '../shared/messages';
import { DEFAULT_SETTLE, click, settle, typeText, type SettleOptions } from './actions';
import { RefRegistry } from './refs';
import { snapshot } from './snapshot';

export class ContentAgent {
  private refs?: Promise<RefRegistry>;

  constructor(
    private readonly doc: Document,
    /** Asks the service worker for this document's number in its tab. */
    private readonly registerDocument: () => Promise<number>,
    private readonly settleOptions: SettleOptions = DEFAULT_SETTLE,
  ) {}

  async handle(msg: ContentMessage): Promise<ContentReply> {
    try {
      switch (msg.kind) {
        case 'ping':
          return { ok: true, pong: true };
        case 'snapshot':
          return { ok: true, page: await this.page() };
        case 'click': {
          const el = (await this.registry()).resolve(msg.ref, msg.docsIssued);
          const settled = settle(this.doc, this.settleOptions);
          click(el);
          return await this.afterAction(await settled);
        }
        case 'type': {
          const el = (await this.registry()).resolve(msg.ref, msg.docsIssued);
          const settled = settle(this.doc, this.settleOptions);
          typeText(el, msg.text, msg.submit);
          return await this.afterAction(await settled);
        }
        default: {
          const kind: never = msg;
          throw new TetherError('bad_request', `Unknown content request ${JSON.stringify(kind)}.`);
        }
      }
    } catch (err) {
      return { ok: false, error: toWireError(err) };
    }
  }

  private async afterAction(settled: { navigating: boolean }): Promise<ContentReply> {
    // While a navigation replaces this document, a snapshot of it is useless:
    // the service worker waits for the new page and snapshots that.
    return { ok: true, page: await this.page(), navigating: settled.navigating };
  }

  async page(): Promise<PageSnapshot> {
    const refs = await this.registry();
    return { url: this.doc.location.href, title: this.doc.title, snapshot: snapshot(this.doc, refs) };
  }

  private registry(): Promise<RefRegistry> {
    this.refs ??= this.registerDocument().then((n) => new RefRegistry(n));
    // A failed registration is retried on the next request.
    this.refs.catch(() => (this.refs = undefined));
    return this.refs;
  }
}
