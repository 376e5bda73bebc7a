// The registry of a document's element refs (the format: shared/refs.ts).
import { staleRef, unknownRef } from '../shared/errors';
import { formatRef, parseRef } from '../shared/refs';

export class RefRegistry {
  private readonly byElement = new WeakMap<Element, number>();
  private readonly byIndex = new Map<number, WeakRef<Element>>();
  private issued = 0;

  /** doc is this document's number in the profile (from 1); frame its frameId (0: top). */
  constructor(
    readonly doc: number,
    readonly frame = 0,
  ) {}

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

  /** el's ref if it has one; never issues. */
  existingRef(el: Element): string | undefined {
    const n = this.byElement.get(el);
    return n === undefined ? undefined : this.format(n);
  }

  format(n: number): string {
    return formatRef(this.frame, this.doc, n);
  }

  /**
   * Returns the element named by ref, or throws stale_ref / unknown_ref.
   * docsIssued is how many documents the profile has numbered, so a ref of
   * another (earlier) document can be told apart from one never issued.
   */
  resolve(ref: string, docsIssued: number): Element {
    const parsed = parseRef(ref);
    if (!parsed) throw unknownRef(ref);
    const { doc, n } = parsed;
    if (doc !== this.doc) {
      if (doc >= 1 && doc <= Math.max(docsIssued, this.doc)) throw staleRef(ref);
      throw unknownRef(ref);
    }
    if (parsed.frame !== this.frame || n < 1 || n > this.issued) throw unknownRef(ref);
    const el = this.byIndex.get(n)?.deref();
    if (!el || !el.isConnected) {
      if (!el) this.byIndex.delete(n);
      throw staleRef(ref);
    }
    return el;
  }
}
