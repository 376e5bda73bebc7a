// browser_find: searches the page's ARIA tree (the same tree the snapshot
// prints, uncapped) by role and/or text, and names the heading or table row
// each match sits under.
//
// A search with text does not build the page's tree. One pass over the DOM
// (shadow roots and same-origin frames included, no style read, no name
// computed) finds the candidates: text that contains the needle (also across
// the inline elements of one run of text), elements whose labelling
// attributes or value contain it, the controls of <label>s that contain it,
// and elements named by aria-labelledby. Only then is each candidate's
// nearest node with a role built, styled and named, as the snapshot would,
// and matched; so a search of a huge page costs about one cheap DOM pass.
// The pass skims: below a block among many siblings (a row, an item, a
// card) whose textContent cannot match, it visits elements only, not their
// text nodes (Scanner.textOn), which on a page where the text is rare
// spares a wrapper for most text nodes.
// A search by role alone makes the same pass, taking the elements of that
// role (by their attributes and tag, no style read) as candidates, and stops
// once it has more matches than its limit: on a page with 30 000 buttons,
// role=button costs the first few dozen, not the whole tree.
import type { FindMatch } from '../protocol.gen';
import type { RefRegistry } from './refs';
import { hoverRevealed } from './hover';
import { shadowRootOf } from './shadow';
import {
  buildTree, isInteractive, nodeKey, nodeLine, nodeName, normalizeSpace, roleOf, styleOf, textLine, labelsOf, visibleNow, withReadCache,
  CONTAINER_REF_ROLES, SKIPPED_TAGS, type AriaNode, type Item,
} from './snapshot';

export interface FindQuery {
  /** Matched case-insensitively against names and text. */
  text?: string | undefined;
  /** Matched exactly against the role. */
  role?: string | undefined;
  frameIdOf?: ((iframe: Element) => number | undefined) | undefined;
  /** Date.now() past which the search stops and reports what it found (partial); absent: none. */
  until?: number | undefined;
  /** A search by role alone stops once it has more matches than this (FindOutput.more); absent: it finds them all. */
  limit?: number | undefined;
  /** false: a search with text looks at every text node, skipping no block (what the skipping must equal; tests). */
  skim?: boolean | undefined;
}

export interface FindOutput {
  /** Every match, in document order (the caller applies the limit). */
  matches: FindMatch[];
  /** Cross-origin frames the search could not enter (see AriaNode.frame); the caller searches them. */
  frames: Array<number | string>;
  /** The search ran into its deadline: the matches are those found by then. */
  partial?: boolean;
  /** The search stopped past FindQuery.limit: there are more matches than those listed. */
  more?: boolean;
}

/** The matches of q in doc, in document order; each name and style is read at most once. */
export function find(doc: Document, refs: RefRegistry, q: FindQuery): FindOutput {
  const needle = q.text ? normalizeSpace(q.text).toLowerCase() : '';
  const role = q.role?.trim().toLowerCase() || '';
  if (needle) return withReadCache(() => searchText(doc, refs, needle, role, q));
  if (q.limit === undefined) return withReadCache(() => searchTree(doc, refs, role, q));
  return withReadCache(() => searchRole(doc, refs, role, q, q.limit!));
}

/**
 * A search by role alone, up to limit matches and one more (then more is
 * set): the candidates of a DOM pass (Scanner with a role), each matched as
 * in searchText. The pass stops after a number of candidates (some may turn
 * out hidden); when they gave too few matches, it runs again with four times
 * as many, so the whole cost stays within about 4/3 of the last pass's.
 */
function searchRole(doc: Document, refs: RefRegistry, role: string, q: FindQuery, limit: number): FindOutput {
  for (let cap = 2 * (limit + 1) + 16; ; cap *= 4) {
    const scan = new Scanner('', q.until ?? Infinity, role, cap);
    const out = matchCandidates(doc, refs, scan, '', role, q, limit + 1);
    if (out.matches.length > limit) {
      out.matches.length = limit + 1;
      out.more = true;
      return out;
    }
    if (!scan.full || out.partial) return out;
  }
}

/** A search by role only: the page's whole tree, names computed for the matches. */
function searchTree(doc: Document, refs: RefRegistry, role: string, q: FindQuery): FindOutput {
  const tree = buildTree(doc, { frameIdOf: q.frameIdOf, hover: hoverRevealed(doc), until: q.until });
  const out: FindOutput = { matches: [], frames: [] };
  if (tree.late) out.partial = true;
  const m = new Matcher(refs, '', role, out, q.until);
  m.walk(tree.items, false);
  if (m.late) out.partial = true;
  return out;
}

/**
 * Matches the nodes of a tree (the page's, or a candidate's subtree) against
 * the needle and role, adding them to out with their context: the heading
 * above, or the table row around.
 */
class Matcher {
  /** The key of the heading last met, in document order. */
  heading: string | undefined;
  /** The rows the walk is in. */
  rows: AriaNode[] = [];
  /** Row names are computed only for rows that hold a match, once each. */
  private readonly rowKeys = new Map<Element, string>();
  /** Elements reported for text inside them (one line each). */
  private readonly reported = new Set<Element>();
  /** The walk stopped at the deadline. */
  late = false;
  private tick = 0;

  constructor(
    private readonly refs: RefRegistry,
    private readonly needle: string,
    private readonly role: string,
    private readonly out: FindOutput,
    private readonly until = Infinity,
    /** Whether cross-origin frames met in the tree are listed in out.frames (a text search lists them from its scan). */
    private readonly listFrames = true,
  ) {}

  private context(): string | undefined {
    const row = this.rows[this.rows.length - 1];
    if (!row) return this.heading;
    let key = this.rowKeys.get(row.el);
    // The row gets a ref, so browser_snapshot {ref} can show the whole row.
    if (key === undefined) this.rowKeys.set(row.el, (key = nodeKey(row, nodeName(row), this.refs, true)));
    return key;
  }

  walk(list: Item[], parentMatched: boolean, parent?: AriaNode): void {
    const { needle, role, refs, out } = this;
    for (const item of list) {
      if (this.late || (++this.tick % 64 === 0 && Date.now() > this.until && (this.late = true))) return;
      if (typeof item === 'string') {
        if (!role && needle && !parentMatched && normalizeSpace(item).toLowerCase().includes(needle)) {
          const ctx = this.context();
          // Text inside an element that has a ref (a draggable card, a
          // clickable generic): report that element, so the match can be acted on.
          const owner = parent && /\[ref=/.test(nodeLine(parent, refs)) ? parent : undefined;
          if (owner && this.reported.has(owner.el)) continue;
          let m: FindMatch = { line: textLine(normalizeSpace(item)) };
          if (owner) {
            this.reported.add(owner.el);
            const line = nodeLine(owner, refs);
            m = { line };
            const ref = /\[ref=([^\]]+)\]/.exec(line)?.[1];
            if (ref) m.ref = ref;
          }
          if (ctx) m.context = ctx;
          out.matches.push(m);
        }
        continue;
      }
      if (item.frame !== undefined && this.listFrames) out.frames.push(item.frame);
      let matched = false;
      if (!role || item.role === role) {
        if (!needle) matched = true;
        else if (mightContain(item.el, needle, NAME_FROM_CONTENT.has(item.role))) matched = nodeName(item).toLowerCase().includes(needle) || valueMatches(item, needle);
      }
      const headingBefore = this.heading;
      if (item.role === 'heading') this.heading = nodeKey(item, nodeName(item), undefined);
      const at = out.matches.length;
      const isRow = item.role === 'row';
      if (isRow) this.rows.push(item);
      this.walk(item.children, matched, item);
      // A name made of its content (a row, a cell) matches through the element inside: report that one.
      const inner = out.matches.length > at;
      if (matched && !(needle && inner)) {
        const line = nodeLine(item, refs);
        const ref = /\[ref=([^\]]+)\]/.exec(line)?.[1];
        const m: FindMatch = { line };
        if (ref) m.ref = ref;
        if (isRow) this.rows.pop();
        const ctx = item.role === 'heading' ? headingBefore : this.context();
        if (isRow) this.rows.push(item);
        if (ctx) m.context = ctx;
        out.matches.splice(at, 0, m);
      }
      if (isRow) this.rows.pop();
    }
  }
}

/** A search with text: candidates from one DOM pass, then each candidate's node built and matched. */
function searchText(doc: Document, refs: RefRegistry, needle: string, role: string, q: FindQuery): FindOutput {
  return matchCandidates(doc, refs, new Scanner(needle, q.until ?? Infinity, '', Infinity, q.skim !== false), needle, role, q, Infinity);
}

/** Runs scan over doc, then builds and matches each candidate's node, until enough matches (or all). */
function matchCandidates(doc: Document, refs: RefRegistry, scan: Scanner, needle: string, role: string, q: FindQuery, enough: number): FindOutput {
  const until = q.until ?? Infinity;
  const top = doc.body ?? doc.documentElement;
  if (top) scan.tree(doc, top);
  const out: FindOutput = { matches: [], frames: [] };
  const hover = hoverRevealed(doc);
  const frames = new FrameKeys(q.frameIdOf);
  for (const f of scan.frames) {
    const key = frames.keyOf(f.el, f.inner, shown(f.el, hover) !== undefined);
    if (key !== undefined) out.frames.push(key);
  }
  const matcher = new Matcher(refs, needle, role, out, until, false);
  const headings = new Headings(scan.headings);
  /** The subtrees walked so far, last first out: a later candidate inside one is already covered. */
  const done: Array<{ root: Element; at: number }> = [];
  let late = scan.late;
  let tick = 0;
  for (const { el, pos } of scan.candidates()) {
    if (out.matches.length >= enough) break;
    if (++tick % 16 === 0 && Date.now() > until) {
      late = true;
      break;
    }
    const found = rootOf(el, role);
    if (!found) continue;
    const { root, parent } = found;
    const last = done[done.length - 1];
    if (last && composedContains(last.root, root)) continue;
    // A root around earlier ones (a row after its cells' labels): walk it instead of them.
    while (done.length > 0 && composedContains(root, done[done.length - 1]!.root)) out.matches.length = done.pop()!.at;
    const hoverState = shown(root, hover);
    if (hoverState === undefined) continue;
    const at = out.matches.length;
    const tree = buildTree(doc, { root, frameIdOf: q.frameIdOf, hover, until, inHover: hoverState });
    if (tree.late) late = true;
    matcher.heading = headings.before(root, pos);
    const row = rowAround(root);
    matcher.rows = row ? [row] : [];
    matcher.walk(tree.items, false, parent);
    done.push({ root, at });
  }
  if (late || matcher.late) out.partial = true;
  return out;
}

/** Tags whose elements lie inside a line of text: a run of text goes on across them. */
const INLINE_TAGS = new Set([
  'A', 'ABBR', 'B', 'BDI', 'BDO', 'CITE', 'CODE', 'DATA', 'DFN', 'EM', 'FONT', 'I', 'KBD', 'LABEL', 'MARK', 'Q', 'S', 'SAMP',
  'SMALL', 'SPAN', 'STRONG', 'SUB', 'SUP', 'TIME', 'U', 'VAR',
]);
/** How many nodes are scanned between two looks at the clock. */
const CLOCK_EVERY = 512;

/**
 * One pass over the composed DOM in document order, without styles or names:
 * it skips what the snapshot never shows by its attributes alone (aria-hidden,
 * inert, hidden, <script> and the like) and collects the candidates.
 */
class Scanner {
  /** Elements met so far: each one's position in document order. */
  private pos = 0;
  private tick = CLOCK_EVERY;
  late = false;
  private readonly found = new Map<Element, number>();
  /**
   * The controls of <label>s whose text matched, each with a position next
   * to its label's: just before it when the control comes first in the
   * document, else just after (no position is kept for every field met).
   */
  private readonly controls: Array<{ el: Element; pos: number }> = [];
  readonly headings: Array<{ el: Element; pos: number }> = [];
  readonly frames: Array<{ el: Element; inner: boolean }> = [];
  /** Elements of every tree entered that one querySelectorAll per tree picked: hidden, headings by role, attribute matches. */
  private readonly marked = new Set<Element>();
  /** The needle, white space matching any run of it, case folded. */
  private readonly re: RegExp;
  /**
   * The end of the current run of text (inline elements do not end it): its
   * last text nodes, those that reach into its last tailLength characters,
   * and their length. Kept without joining their text: most runs are one node.
   */
  private readonly runNodes: Text[] = [];
  private runLength = 0;
  /** How much of a run's end is kept to find a match across its text nodes. */
  private readonly tailLength: number;
  private readonly selector: string;
  /** The elements the pass is in, in the composed tree (a slotted node's parent is its slot). */
  private readonly open: Element[] = [];
  /** The needle is ASCII: the per-tree querySelectorAll found the attribute matches. */
  private readonly ascii: boolean;
  /**
   * Whether the text nodes met now are looked at (with a needle). A block
   * (an element not of INLINE_TAGS, where runs of text end; children says
   * which are checked) whose textContent does not match the needle holds no
   * match in its text, and no run of text crosses its edges: below it only
   * elements are visited
   * (firstElementChild, no wrapper made for its text nodes), for their
   * values and attributes, headings, frames and shadow trees, whose text is
   * looked at again. textContent is a superset of what the pass reads
   * (script text, hidden text, text across blocks run together), so a block
   * is never skimmed that holds a match. On the 100k page of
   * bench/pagesize.go, `Open row 19993` end to end: 368 ms (median of 5)
   * against 526 without skimming; a needle in most rows (`row 1`) costs
   * their textContent reads as well (when every block was checked, 575 ms
   * against 514 for the pass, one profiled run each).
   */
  private textOn = true;

  /** A pass with a role stopped at its cap of candidates (there may be more). */
  full = false;

  /**
   * needle: the text searched for ('' with a role: no text is matched).
   * role: with no needle, the candidates are the elements of this role
   * (roleOf, by attributes and tag), at most cap of them.
   */
  constructor(
    private readonly needle: string,
    private readonly until: number,
    private readonly role = '',
    private readonly cap = Infinity,
    /** Whether blocks whose text cannot match are skimmed (textOn). */
    private readonly skim = true,
  ) {
    this.re = new RegExp(needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/ /g, '[\\s\\u00a0]+'), 'iu');
    this.tailLength = needle.length * 2 + 16;
    const marks = ['[aria-hidden="true"]', '[inert]', '[hidden]:not([hidden="until-found"])', '[role~="heading" i]', '[aria-labelledby]'];
    // CSS's i flag folds ASCII case only: other needles are matched in script, on every element.
    this.ascii = /^[\x20-\x7e]*$/.test(needle);
    if (this.ascii && needle) {
      const v = JSON.stringify(needle);
      for (const a of ATTRS) marks.push(`[${a}*=${v} i]`);
    }
    this.selector = marks.join(',');
  }

  /** The candidates in document order, with their positions. */
  candidates(): Array<{ el: Element; pos: number }> {
    for (const { el, pos } of this.controls) if (!this.found.has(el)) this.found.set(el, pos);
    return [...this.found].map(([el, pos]) => ({ el, pos })).sort((a, b) => a.pos - b.pos);
  }

  /**
   * Scans the tree whose root is root (a document or a shadow root), from
   * its element start (or its children). inlineHost: root is the shadow root
   * of an inline element, so a run of text may cross into it and out again.
   */
  tree(root: Document | ShadowRoot, start?: Element, inlineHost = false): void {
    for (const el of Array.from(root.querySelectorAll(this.selector))) this.marked.add(el);
    // A frame's document and a shadow tree hold text that is in no
    // textContent read outside them: it is looked at anew.
    const was = this.textOn;
    try {
      if (start) {
        this.textOn = true;
        this.element(start, true);
      } else if (inlineHost || !this.needle) {
        this.children(root);
      } else {
        this.textOn = !this.skim || this.re.test(root.textContent ?? '');
        if (this.textOn) this.children(root);
        else this.skimming(() => this.children(root));
      }
    } finally {
      this.textOn = was;
    }
    this.breakRun();
  }

  private children(parent: Element | Document | ShadowRoot): void {
    if (this.textOn && this.needle) {
      // Only the blocks among many siblings (rows, items, cards) are
      // checked: each is small, most hold no match, and a large block's
      // textContent (the body's, a table's) made a string of the page's
      // text per level, garbage that slowed the search down.
      const check = this.skim && parent.childElementCount >= CHECKED_SIBLINGS;
      for (let c = parent.firstChild; c && !this.late && !this.full; c = c.nextSibling) {
        if (c.nodeType === 1 /* ELEMENT_NODE */) this.element(c as Element, false, check);
        else this.node(c);
      }
    } else {
      // A search by role alone looks at no text.
      for (let c = parent.firstElementChild; c && !this.late && !this.full; c = c.nextElementSibling) this.element(c, false);
    }
  }

  /**
   * Runs scan with text skipped (textOn false, set by the caller). Should it
   * meet a shadow tree of an inline element, whose text may join the
   * skipped text around it in one run, what it found is dropped and it runs
   * again with the text looked at.
   */
  private skimming(scan: () => void): void {
    const at = { pos: this.pos, controls: this.controls.length, headings: this.headings.length, frames: this.frames.length };
    try {
      scan();
    } catch (e) {
      if (e !== INLINE_HOST) throw e;
      for (const [el, pos] of this.found) if (pos > at.pos) this.found.delete(el);
      this.controls.length = at.controls;
      this.headings.length = at.headings;
      this.frames.length = at.frames;
      this.breakRun();
      this.textOn = true;
      scan();
    }
  }

  private node(n: Node): void {
    const type = n.nodeType;
    if (type === 3 /* TEXT_NODE */) this.text(n as Text);
    else if (type === 1 /* ELEMENT_NODE */) this.element(n as Element, false);
  }

  /** check: whether el, if a block, is skimmed when its textContent cannot match (children). */
  private element(el: Element, isStart: boolean, check = false): void {
    if (this.full) return;
    const tag = el.tagName;
    if (!isStart && SKIPPED_TAGS.has(tag)) return;
    const marked = this.marked.has(el);
    if (marked && !isStart && isHiddenByAttr(el)) return;
    if (--this.tick <= 0) {
      this.tick = CLOCK_EVERY;
      if (Date.now() > this.until) {
        this.late = true;
        return;
      }
    }
    const pos = ++this.pos;
    if (!this.needle) {
      // A search by role: its elements are the candidates.
      if (roleOf(el, tag) === this.role) {
        this.found.set(el, pos);
        if (this.found.size >= this.cap) this.full = true;
      }
    } else if (tag === 'BR') return this.breakRun();
    else if (tag === 'INPUT' || tag === 'TEXTAREA') {
      // A field's typed value names it; a hidden input is never shown.
      const type = (el as HTMLInputElement).type;
      if (type === 'hidden') return;
      if (type !== 'password' && this.re.test((el as HTMLInputElement).value)) this.found.set(el, pos);
    }
    if (marked) {
      if (this.needle && (el.hasAttribute('aria-labelledby') || (this.ascii && attrsContain(el, this.needle)))) this.found.set(el, pos);
      if (/\bheading\b/i.test(el.getAttribute('role') ?? '')) this.headings.push({ el, pos });
    } else if (this.needle && !this.ascii && attrsContain(el, this.needle)) {
      this.found.set(el, pos);
    }
    if (HEADING_TAGS.has(tag) && !marked) this.headings.push({ el, pos });
    const inline = INLINE_TAGS.has(tag);
    if (!inline) this.breakRun();
    const was = this.textOn;
    this.open.push(el);
    try {
      if (check && !inline && was && !this.re.test(el.textContent ?? '')) {
        this.textOn = false;
        this.skimming(() => this.inside(el, tag));
      } else {
        this.inside(el, tag);
      }
    } finally {
      this.open.pop();
      this.textOn = was;
    }
    if (!inline) this.breakRun();
  }

  /** Scans what el holds: its frame's document, its shadow tree, its slot's assigned nodes, or its children. */
  private inside(el: Element, tag: string): void {
    if (tag === 'IFRAME' || tag === 'FRAME') {
      let inner: Document | null = null;
      try {
        inner = (el as HTMLIFrameElement).contentDocument;
      } catch {
        inner = null; // Cross-origin.
      }
      const body = inner?.body ?? inner?.documentElement;
      this.frames.push({ el, inner: !!body });
      if (inner && body) this.tree(inner, body);
      return;
    }
    const shadow = shadowRootOf(el, tag);
    if (shadow) {
      const inline = INLINE_TAGS.has(tag);
      if (inline && !this.textOn) throw INLINE_HOST;
      this.tree(shadow, undefined, inline);
    } else if (tag === 'SLOT') {
      const assigned = (el as HTMLSlotElement).assignedNodes();
      if (assigned.length) {
        // Light nodes: their text is in no textContent read on the way here.
        const was = this.textOn;
        this.textOn = true;
        try {
          for (const n of assigned) this.node(n);
        } finally {
          this.textOn = was;
        }
      } else this.children(el);
    } else {
      this.children(el);
    }
  }

  private breakRun(): void {
    this.runNodes.length = 0;
    this.runLength = 0;
  }

  private text(t: Text): void {
    if (!this.needle) return;
    const data = t.data;
    const parent = this.open[this.open.length - 1] ?? t.parentElement;
    if (this.re.test(data)) {
      if (parent) this.candidate(parent);
    } else if (this.runLength > 0 && this.crosses(data)) {
      // Across text nodes of one run (`Open <b>row</b> 5`): the element around them.
      let el: Element | null = parent;
      for (const n of this.runNodes) el = el && commonAncestor(n, el);
      if (el) this.candidate(el);
    }
    if (data.length === 0) return;
    this.runNodes.push(t);
    this.runLength += data.length;
    // Drop the nodes that no longer reach into the tail.
    let drop = 0;
    while (this.runLength - this.runNodes[drop]!.data.length >= this.tailLength) this.runLength -= this.runNodes[drop++]!.data.length;
    if (drop > 0) this.runNodes.splice(0, drop);
  }

  /** Whether a match starts in the run's tail (its last tailLength characters) and ends in data. */
  private crosses(data: string): boolean {
    let tail = '';
    for (const n of this.runNodes) tail += n.data;
    tail = tail.slice(-this.tailLength);
    const m = this.re.exec(tail + data.slice(0, this.tailLength));
    return m !== null && m.index < tail.length && m.index + m[0].length > tail.length;
  }

  private candidate(el: Element): void {
    if (!this.found.has(el)) this.found.set(el, this.pos);
    // The control of a <label> around the text is named by it.
    const label = el.closest('label');
    const control = label?.control;
    if (control) this.controls.push({ el: control, pos: this.pos + (label.compareDocumentPosition(control) & 2 /* PRECEDING */ ? -0.5 : 0.5) });
  }
}

const HEADING_TAGS = new Set(['H1', 'H2', 'H3', 'H4', 'H5', 'H6']);

/** How many element children a parent has for each of them to be checked for skimming (Scanner.children). */
const CHECKED_SIBLINGS = 8;

/** Thrown by a Scanner skipping text that meets an inline shadow host (Scanner.skimming). */
const INLINE_HOST = new Error('an inline shadow host where text is skipped');

/** What the snapshot skips by attributes alone (with SKIPPED_TAGS): aria-hidden, inert, hidden (but until-found). */
function isHiddenByAttr(el: Element): boolean {
  return el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert') || (el.hasAttribute('hidden') && el.getAttribute('hidden') !== 'until-found');
}

/** The attributes whose text may name an element (accname: aria-label, title, alt, placeholder; a value). */
const ATTRS = ['aria-label', 'title', 'alt', 'placeholder', 'aria-placeholder', 'value', 'aria-valuetext'];

function attrsContain(el: Element, needle: string): boolean {
  if (!el.hasAttributes()) return false;
  if (el.hasAttribute('aria-labelledby')) return true;
  for (const a of ATTRS) if ((el.getAttribute(a) ?? '').toLowerCase().includes(needle)) return true;
  return false;
}

/** n's parent in the composed tree: its slot, a shadow root's host, a frame document's frame element. */
function composedParent(n: Node): Element | null {
  const slot = (n as Element).assignedSlot;
  if (slot) return slot;
  const p = n.parentNode;
  if (!p) return null;
  if (p.nodeType === 11 /* DOCUMENT_FRAGMENT_NODE */) return (p as ShadowRoot).host ?? null;
  if (p.nodeType === 9 /* DOCUMENT_NODE */) {
    try {
      return (p as Document).defaultView?.frameElement ?? null;
    } catch {
      return null;
    }
  }
  return p as Element;
}

function composedContains(a: Element, b: Element): boolean {
  for (let n: Element | null = b; n; n = composedParent(n)) if (n === a) return true;
  return false;
}

function commonAncestor(a: Node, b: Node): Element | null {
  const up = new Set<Node>();
  for (let n: Node | null = a; n; n = composedParent(n)) up.add(n);
  for (let n: Node | null = b; n; n = composedParent(n)) if (up.has(n) && n.nodeType === 1 /* ELEMENT_NODE */) return n as Element;
  return null;
}

/** Roles that can hold much of a page: text met in one is matched by the block around it, not by walking all of it. */
const WIDE_ROLES = new Set([
  ...CONTAINER_REF_ROLES, 'list', 'group', 'tabpanel', 'document', 'application', 'feed', 'rowgroup', 'tree', 'menu', 'menubar',
  'tablist', 'listbox', 'toolbar', 'radiogroup', 'figure', 'blockquote', 'log', 'status', 'alert', 'note', 'directory',
]);

/**
 * Where a candidate is matched: the node it is (or is in) that the search
 * walks, and that node's parent node (for text in it). With a role, the
 * nearest element of that role around it; otherwise its nearest node with a
 * role, or the block around it when that node is a wide container.
 */
function rootOf(el: Element, role: string): { root: Element; parent?: AriaNode } | undefined {
  let block: Element | undefined;
  for (let n: Element | null = el; n; n = composedParent(n)) {
    if (n.tagName === 'BODY' || n.tagName === 'HTML') break;
    const r = roleOf(n);
    if (role) {
      if (r === role) return { root: n };
      continue;
    }
    if (r !== null || isInteractive(n, r)) {
      if (n === el || !WIDE_ROLES.has(r ?? '') || !block) return { root: n };
      return { root: block, parent: { role: r ?? 'generic', el: n, interactive: isInteractive(n, r), children: [] } };
    }
    if (!block || INLINE_TAGS.has(block.tagName)) block = n;
  }
  return role || !block ? undefined : { root: block };
}

/**
 * Whether root can be shown: undefined when it is not (hidden by a style of
 * its own or of an element around it); true when it is hidden now but shown
 * on hover (the snapshot marks it so); false when it is shown.
 */
function shown(root: Element, hover: Set<Element>): boolean | undefined {
  for (let n = composedParent(root); n; n = composedParent(n)) {
    if (hover.size > 0 && hover.has(n) && hiddenNow(n)) return true;
    if ((n.tagName === 'IFRAME' || n.tagName === 'FRAME') && !boxShown(n)) return undefined;
  }
  // Hidden now and shown on hover itself: the walk reveals it; its parent must be shown.
  let t: Element | null = hover.size > 0 && hover.has(root) && hiddenNow(root) ? composedParent(root) : root;
  // A box-less element (display: contents) is as shown as its parent; an option as its select.
  while (t && styleOf(t).display === 'contents') t = composedParent(t);
  if (t && (t.tagName === 'OPTION' || t.tagName === 'OPTGROUP')) t = t.closest('select');
  return !t || boxShown(t) ? false : undefined;
}

function boxShown(el: Element): boolean {
  return typeof el.checkVisibility !== 'function' || el.checkVisibility();
}

function hiddenNow(el: Element): boolean {
  const style = styleOf(el);
  return style.display === 'none' || style.visibility === 'hidden' || style.opacity === '0' || !visibleNow(el, style);
}

const NO_HOVER = new Set<Element>();

/** The row around root, as a node. */
function rowAround(root: Element): AriaNode | undefined {
  for (let n = composedParent(root); n; n = composedParent(n)) {
    if (n.tagName === 'BODY') return undefined;
    if ((n.tagName === 'TR' || n.hasAttribute('role')) && roleOf(n) === 'row') return { role: 'row', el: n, interactive: false, children: [] };
  }
  return undefined;
}

/** The headings of the page in document order; each one's key computed once. */
class Headings {
  private readonly keys = new Map<Element, string | null>();
  constructor(private readonly list: Array<{ el: Element; pos: number }>) {}

  /** The key of the last shown heading before position pos, other than root. */
  before(root: Element, pos: number): string | undefined {
    let lo = 0;
    let hi = this.list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.list[mid]!.pos <= pos) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo - 1; i >= 0; i--) {
      const h = this.list[i]!.el;
      if (h === root) continue;
      const key = this.keyOf(h);
      if (key !== null) return key;
    }
    return undefined;
  }

  private keyOf(h: Element): string | null {
    let key = this.keys.get(h);
    if (key === undefined) {
      key = null;
      if (roleOf(h) === 'heading' && shown(h, NO_HOVER) === false) {
        const style = styleOf(h);
        if (style.display !== 'none' && style.visibility !== 'hidden' && style.visibility !== 'collapse') {
          key = nodeKey({ role: 'heading', el: h, interactive: false, children: [] }, nodeName({ role: 'heading', el: h, interactive: false, children: [] }), undefined);
        }
      }
      this.keys.set(h, key);
    }
    return key;
  }
}

/** Names cross-origin frames as the snapshot does: by frameId, else by URL and rank among the shown frames showing it. */
class FrameKeys {
  private readonly urls = new Map<string, number>();
  constructor(private readonly frameIdOf: ((iframe: Element) => number | undefined) | undefined) {}

  keyOf(frame: Element, inner: boolean, isShown: boolean): number | string | undefined {
    if (!isShown) return undefined;
    const url = frame.hasAttribute('srcdoc') ? 'about:srcdoc' : (frame as HTMLIFrameElement).src || 'about:blank';
    const nth = this.urls.get(url) ?? 0;
    if (inner) {
      this.urls.set(url, nth + 1);
      return undefined;
    }
    const id = this.frameIdOf?.(frame);
    if (id !== undefined && id > 0) return id;
    this.urls.set(url, nth + 1);
    return nth === 0 ? `u${url}` : `u${nth} ${url}`;
  }
}

/** Roles named from their content (WAI-ARIA 1.2); others only by attributes or labels. */
const NAME_FROM_CONTENT = new Set([
  'button', 'cell', 'checkbox', 'columnheader', 'gridcell', 'heading', 'link', 'menuitem', 'menuitemcheckbox',
  'menuitemradio', 'option', 'radio', 'row', 'rowheader', 'switch', 'tab', 'tooltip', 'treeitem', 'caption',
  'code', 'paragraph', 'blockquote', 'listitem', 'term', 'definition', 'status', 'iframe',
]);

/** A cheap test that el's name could contain needle: its text (for roles named from content), labelling attributes or labels do. */
function mightContain(el: Element, needle: string, fromContent: boolean): boolean {
  if (el.hasAttribute('aria-labelledby')) return true;
  // Content in shadow trees or slotted from the light DOM is not in textContent.
  if (fromContent && (shadowRootOf(el) !== null || el.querySelector('slot') || el.tagName === 'SLOT')) return true;
  if (fromContent && (el.textContent ?? '').toLowerCase().includes(needle)) return true;
  for (const a of ['aria-label', 'title', 'alt', 'placeholder', 'value']) {
    if ((el.getAttribute(a) ?? '').toLowerCase().includes(needle)) return true;
  }
  // labelsOf: a per-tree index, not el.labels (a scan of the page per field).
  for (const l of labelsOf(el)) if ((l.textContent ?? '').toLowerCase().includes(needle)) return true;
  if (el.tagName === 'INPUT' && (el as HTMLInputElement).type !== 'password') {
    return (el as HTMLInputElement).value.toLowerCase().includes(needle);
  }
  return false;
}

function valueMatches(node: AriaNode, needle: string): boolean {
  const el = node.el;
  if (el.tagName === 'INPUT' && (el as HTMLInputElement).type !== 'password') return (el as HTMLInputElement).value.toLowerCase().includes(needle);
  return false;
}
