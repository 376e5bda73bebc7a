// Element refs: short opaque names for elements, stable for as long as the
// element stays in its document and never reused for another element.
//
// Format: "e<n>" in the first document a tab loads, "d<doc>e<n>" in later ones.
// The service worker numbers each document of a tab (chrome.storage.session),
// so a ref from an earlier document of the same tab can never name an element
// of the current one.
import { staleRef, unknownRef } from '../shared/errors';

const REF_PATTERN = /^(?:d(\d+))?e(\d+)$/;

export class RefRegistry {
  private readonly byElement = new WeakMap<Element, number>();
  private readonly byIndex = new Map<number, WeakRef<Element>>();
  private issued = 0;

  /** doc is this document's number in its tab, starting at 1. */
  constructor(readonly doc: number) {}

  /** Returns el's ref, issuing a new one the first time. */
  refFor(el: Element): string {
    let n = this.byElement.get(el);
    if (n === undefined) {
      n = ++this.issued;
      this.byElement.set(el, n);
      this.byIndex.set(n, new WeakRef(el));
    }
    return this.format(n);
  }

  format(n: number): string {
    return this.doc === 1 ? `e${n}` : `d${this.doc}e${n}`;
  }

  /**
   * Returns the element named by ref, or throws stale_ref / unknown_ref.
   * docsIssued is how many documents the tab has had, so a ref of another
   * document can be told apart from one that was never issued.
   */
  resolve(ref: string, docsIssued: number): Element {
    const m = REF_PATTERN.exec(ref.trim());
    if (!m) throw unknownRef(ref);
    const doc = m[1] === undefined ? 1 : Number(m[1]);
    const n = Number(m[2]);
    if (doc !== this.doc) {
      if (doc >= 1 && doc <= Math.max(docsIssued, this.doc)) throw staleRef(ref);
      throw unknownRef(ref);
    }
    if (n < 1 || n > this.issued || this.format(n) !== ref.trim()) throw unknownRef(ref);
    const el = this.byIndex.get(n)?.deref();
    if (!el || !el.isConnected) {
      if (!el) this.byIndex.delete(n);
      throw staleRef(ref);
    }
    return el;
  }
}
