// The ARIA snapshot of a document, in Playwright's aria-snapshot style:
//
//   - navigation "Main":
//     - link "Docs" [ref=e7]:
//       - /url: /docs
//   - textbox "Email" [ref=e3]: a@b.c
//   - checkbox "Remember me" [checked] [ref=e9]
//   - paragraph: Hello world
//
// One DOM walk builds a tree of role nodes and text runs; roles come from
// dom-accessibility-api during the walk, names (also dom-accessibility-api),
// states and refs only when a node is printed. A capped snapshot stops
// walking at its budget, so a huge page costs what it returns. Within one
// snapshot each element's computed style and box are read at most once
// (readCache). Hidden content is skipped, role-less wrappers are
// flattened, interactive elements and landmarks get a ref from the document's
// RefRegistry. Same-origin iframes are walked into; a cross-origin frame
// leaves a placeholder line (FRAME_MARK + frameId) that the service worker
// replaces with that frame's own snapshot.
import { computeAccessibleName, getRole } from 'dom-accessibility-api';
import { FRAME_MARK } from '../shared/frame-mark';
import type { RefRegistry } from './refs';
import { hoverRevealed, MAX_SHADOW_ROOTS } from './hover';
import { shadowRootOf } from './shadow';

/** Longest text run or name printed before it is cut with "…". */
export const TEXT_LIMIT = 200;
/** What a password field shows instead of its value. */
export const PASSWORD_MASK = '••••';

export interface AriaNode {
  role: string;
  el: Element;
  interactive: boolean;
  /** Hidden now, shown by a CSS :hover rule (hover.ts): printed [hidden until hover]. */
  hoverHidden?: boolean;
  url?: string;
  /**
   * A cross-origin iframe's document, answered by its own content script: its
   * Chrome frameId, or "u<url>" / "u<n> <url>" when the frameId is not
   * known here (the service worker finds the child frame with that URL, the
   * n-th of this document's frames showing it).
   */
  frame?: number | string;
  /** el.tagName and isEditableHost(el), read once by the walk (absent: read when needed). */
  tag?: string;
  editable?: boolean;
  children: Item[];
}
export type Item = string | AriaNode;


export const SKIPPED_TAGS = new Set([
  'SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE',
]);
const INTERACTIVE_ROLES = new Set([
  'button', 'link', 'textbox', 'searchbox', 'combobox', 'checkbox', 'radio', 'switch', 'slider',
  'spinbutton', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'tab', 'treeitem',
  'listbox', 'gridcell', 'scrollbar',
]);
/** Containers that get a ref too, so browser_snapshot {ref} can print just them. */
export const CONTAINER_REF_ROLES = new Set([
  'main', 'navigation', 'region', 'complementary', 'banner', 'contentinfo', 'search', 'form',
  'dialog', 'alertdialog', 'table', 'grid', 'treegrid', 'article', 'iframe',
]);
const VALUE_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider', 'date', 'datetime', 'time', 'color']);
const CHECKABLE_ROLES = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);
/** Roles whose subtree is their value or name: children are not printed. */
const LEAF_ROLES = new Set(['textbox', 'searchbox', 'spinbutton', 'slider', 'img', 'progressbar', 'meter', 'separator', 'scrollbar', 'date', 'datetime', 'time', 'color']);
/**
 * Chromium's roles for the input types that have no ARIA role (its
 * accessibility tree: Date, DateTime, InputTime, ColorWell; a file input is a
 * button). dom-accessibility-api 0.7 gives them none.
 */
const INPUT_ROLES: Record<string, string> = {
  date: 'date', 'datetime-local': 'datetime', month: 'datetime', week: 'datetime', time: 'time', color: 'color', file: 'button',
};
/** The format a date-like input's value takes, printed while it is empty. */
const INPUT_FORMATS: Record<string, string> = {
  date: 'yyyy-mm-dd', 'datetime-local': 'yyyy-mm-ddThh:mm', month: 'yyyy-mm', week: 'yyyy-Www', time: 'hh:mm',
};
/** Implicit roles dom-accessibility-api 0.7 does not map. */
const FALLBACK_ROLES: Record<string, string> = { P: 'paragraph', BLOCKQUOTE: 'blockquote', CAPTION: 'caption', CODE: 'code', IFRAME: 'iframe', FRAME: 'iframe' };
/** The children of a node before its walk gives them, and of a leaf (never added to). */
const NO_ITEMS: Item[] = [];
/** Marks a block-box boundary between text runs: they are printed apart. */
const BREAK = '\u0000';
const INTERACTIVE_TAGS = new Set(['BUTTON', 'SELECT', 'TEXTAREA', 'SUMMARY']);
/**
 * Visual surfaces a page draws on or plays in, targeted by position rather
 * than by their content: they get a ref and print their box. An <svg> is one
 * only when it has a role and is not icon-sized (SURFACE_MIN_SIDE).
 */
const SURFACE_TAGS = new Set(['CANVAS', 'VIDEO', 'EMBED', 'OBJECT']);
const SURFACE_MIN_SIDE = 48;
/** Chromium's roles for surfaces dom-accessibility-api 0.7 gives none. */
const SURFACE_ROLES: Record<string, string> = { CANVAS: 'canvas', VIDEO: 'video', EMBED: 'embed', OBJECT: 'embed' };

/** The default cap of a snapshot's text (SnapshotOptions.maxChars 0). */
export const DEFAULT_MAX_CHARS = 40_000;
/** Room kept under the cap for the note line the service worker appends. */
export const NOTE_RESERVE = 200;

export interface SnapshotOptions {
  /** Cap on the text; past it whole lines are left out and counted. 0/absent: DEFAULT_MAX_CHARS. */
  maxChars?: number;
  /** Levels printed below the root (the page, or root itself at level 0); 0/absent: all. */
  depth?: number;
  /** Print each link's URL as a `- /url:` line under it (off by default: a fifth of the bytes). */
  urls?: boolean;
  /** Print only this element's subtree (the element included). */
  root?: Element;
  /** The Chrome frameId of an iframe whose document this script cannot reach. */
  frameIdOf?: (iframe: Element) => number | undefined;
  /** Date.now() past which the walk and the printing stop and the output is partial; absent: none. */
  until?: number | undefined;
}

export interface SnapshotOutput {
  text: string;
  /** Nodes and text runs left out for size or depth (with more: at least this many). */
  omitted: number;
  /** The walk stopped at its budget: more than omitted were left out. */
  more: boolean;
  /** The deadline (SnapshotOptions.until) cut the snapshot short. */
  partial: boolean;
  /** The cross-origin frame placeholders in text (see AriaNode.frame). */
  frames: Array<number | string>;
}

/** The page's snapshot text, uncapped (tests and small pages). */
export function snapshot(doc: Document, refs: RefRegistry): string {
  return snapshotPage(doc, refs, { maxChars: Number.MAX_SAFE_INTEGER, urls: true }).text;
}

/** The page's (or root's) snapshot, cut at maxChars and depth. */
export function snapshotPage(doc: Document, refs: RefRegistry, opts: SnapshotOptions = {}): SnapshotOutput {
  const maxChars = opts.maxChars && opts.maxChars > 0 ? opts.maxChars : DEFAULT_MAX_CHARS;
  // Each printed line costs at least ~10 characters: past this many nodes the
  // walk stops, and the rest of the page is neither styled, named nor counted.
  const walkBudget = Math.ceil(maxChars / 10) + 50;
  return withReadCache(() => {
    const items = buildTree(doc, { root: opts.root, frameIdOf: opts.frameIdOf, budget: walkBudget, hover: hoverRevealed(doc), until: opts.until });
    const r = new Renderer(refs, Math.max(maxChars - NOTE_RESERVE, 1), opts.depth && opts.depth > 0 ? opts.depth : Infinity, opts.urls === true, opts.until);
    r.renderItems(items.items, '', opts.root ? 0 : 1);
    return { text: r.text(), omitted: r.omitted + items.uncounted, more: items.stopped, frames: r.frames, partial: items.late || r.late };
  });
}

// The read cache: while a snapshot or a search runs, each element's computed
// style (and its pseudo-elements') and its box are read once, and so is each
// property of a style. The page does not change during one synchronous
// snapshot, so a cached value is current.
let styles: Map<Element, Shown | Style> | undefined;
let pseudoStyles: Map<string, Map<Element, Style>> | undefined;
let boxes: Map<Element, DOMRect> | undefined;
/** The <label>s of each control, by tree (document or shadow root), collected once per tree. */
let labelTrees: Map<Node, Map<Element, HTMLLabelElement[]>> | undefined;
/** Per tree (document or shadow root): whether no style rule of it can give an element ::before or ::after content. */
let pseudoFreeTrees: Map<Node, boolean> | undefined;
/** Per tree: what its style sheets say of ::before/::after (sheetScan). */
let sheetScans: Map<Node, 'free' | 'used' | 'part'> | undefined;

/** Runs fn with the read cache on (nested calls share it); it is dropped when the outermost call returns. */
export function withReadCache<T>(fn: () => T): T {
  if (styles) return fn();
  styles = new Map();
  pseudoStyles = new Map();
  boxes = new Map();
  labelTrees = new Map();
  pseudoFreeTrees = new Map();
  sheetScans = new Map();
  try {
    return fn();
  } finally {
    styles = pseudoStyles = boxes = labelTrees = pseudoFreeTrees = sheetScans = undefined;
  }
}

/** The computed-style properties the snapshot reads (each read once per element through Style). */
export interface StyleFacts {
  readonly display: string;
  readonly visibility: string;
  readonly opacity: string;
  readonly content: string;
  getPropertyValue(property: string): string;
}

/**
 * An element's display and visibility, all the walk and most names read of
 * its style: one object per distinct pair (internedShown), shared by every
 * element that has it. A large page has a handful of pairs, and an object
 * per element, kept until the snapshot's end, was much of its garbage.
 */
export interface Shown {
  readonly display: string;
  readonly visibility: string;
}

/** The pairs met so far, by display then visibility (a few dozen at most: keywords). */
const shownPairs = new Map<string, Map<string, Shown>>();

function internedShown(display: string, visibility: string): Shown {
  let byVisibility = shownPairs.get(display);
  if (!byVisibility) shownPairs.set(display, (byVisibility = new Map()));
  let pair = byVisibility.get(visibility);
  if (!pair) byVisibility.set(visibility, (pair = { display, visibility }));
  return pair;
}

/**
 * A computed style whose properties are read from the page once each (a
 * read crosses into the engine). The four the snapshot reads are fields,
 * not a map: one is made per element of the page, and a map each made a
 * large page's snapshot spend much of its time collecting garbage. The ones
 * every element's walk reads (display and visibility; content for a
 * pseudo-element) are read when it is made, and the declaration is not
 * kept: holding one per element until the snapshot's end made each garbage
 * collection during it longer. A property read later asks the page again.
 */
class Style implements StyleFacts {
  private d: string | undefined;
  private v: string | undefined;
  private o: string | undefined;
  private c: string | undefined;
  private others: Map<string, string> | undefined;
  /** The declaration, once a property not read up front is asked for (or always, for a made-up style). */
  private decl: Pick<CSSStyleDeclaration, 'getPropertyValue'> | undefined;

  /**
   * style: el's computed style (of pseudo), or undefined when shown holds
   * el's display and visibility, read before; without el, a made-up style
   * that is kept.
   */
  constructor(
    style: Pick<CSSStyleDeclaration, 'getPropertyValue'> | undefined,
    private readonly el?: Element,
    private readonly pseudo?: string | null,
    shown?: Shown,
  ) {
    if (!el) this.decl = style;
    else if (pseudo) this.c = style!.getPropertyValue('content');
    else if (shown) {
      this.d = shown.display;
      this.v = shown.visibility;
    } else {
      this.d = style!.getPropertyValue('display');
      this.v = style!.getPropertyValue('visibility');
    }
  }
  private style(): Pick<CSSStyleDeclaration, 'getPropertyValue'> {
    return (this.decl ??= (this.el!.ownerDocument.defaultView ?? window).getComputedStyle(this.el!, this.pseudo));
  }
  getPropertyValue(property: string): string {
    switch (property) {
      case 'display':
        return this.display;
      case 'visibility':
        return this.visibility;
      case 'opacity':
        return this.opacity;
      case 'content':
        return this.content;
    }
    this.others ??= new Map();
    let v = this.others.get(property);
    if (v === undefined) this.others.set(property, (v = this.style().getPropertyValue(property)));
    return v;
  }
  get display(): string {
    return (this.d ??= this.style().getPropertyValue('display'));
  }
  get visibility(): string {
    return (this.v ??= this.style().getPropertyValue('visibility'));
  }
  get opacity(): string {
    return (this.o ??= this.style().getPropertyValue('opacity'));
  }
  get content(): string {
    return (this.c ??= this.style().getPropertyValue('content'));
  }
}

/** What a pseudo-element no rule styles computes to (CSS: content 'normal' on ::before/::after computes to 'none'). */
const NO_PSEUDO: StyleFacts = new Style({ getPropertyValue: (p: string) => (p === 'content' ? 'none' : p === 'display' ? 'inline' : '') });

/**
 * el's <label>s, as el.labels lists them, from a per-tree index when the read
 * cache is on: el.labels scans the whole tree on every call, which made
 * naming every button and field of a page quadratic in its size.
 */
export function labelsOf(el: Element): HTMLLabelElement[] {
  if (!labelTrees) return Array.from((el as HTMLInputElement).labels ?? []);
  const root = el.getRootNode();
  let byControl = labelTrees.get(root);
  if (!byControl) {
    byControl = new Map();
    labelTrees.set(root, byControl);
    for (const label of Array.from((root as Document | ShadowRoot).querySelectorAll?.('label') ?? [])) {
      const control = (label as HTMLLabelElement).control;
      if (control) byControl.set(control, [...(byControl.get(control) ?? []), label as HTMLLabelElement]);
    }
  }
  return byControl.get(el) ?? [];
}

/**
 * el's computed style (of pseudo, e.g. "::before"), from the read cache when
 * it is on. A ::before or ::after of an element in a tree no style rule gives
 * them to (pseudoFree) is not computed: it has no content.
 */
export function styleOf(el: Element, pseudo?: string | null): StyleFacts {
  if (!styles) return new Style((el.ownerDocument.defaultView ?? window).getComputedStyle(el, pseudo));
  if (pseudo && (pseudo === '::before' || pseudo === '::after') && el.tagName !== 'Q' && pseudoFree(el)) return NO_PSEUDO;
  if (pseudo) {
    const cache = pseudoStyles!.get(pseudo) ?? pseudoStyles!.set(pseudo, new Map()).get(pseudo)!;
    let style = cache.get(el);
    // The window is looked up on a miss only: most calls are hits.
    if (!style) cache.set(el, (style = new Style((el.ownerDocument.defaultView ?? window).getComputedStyle(el, pseudo), el, pseudo)));
    return style;
  }
  const known = styles.get(el);
  if (known instanceof Style) return known;
  // Asked for more than shownOf gives: an object of el's own from now on.
  const style = known ? new Style(undefined, el, null, known) : new Style((el.ownerDocument.defaultView ?? window).getComputedStyle(el), el);
  styles.set(el, style);
  return style;
}

/** el's display and visibility (as styleOf(el) gives them), without an object per element when the read cache is on. */
export function shownOf(el: Element): Shown {
  if (!styles) return styleOf(el);
  let shown = styles.get(el);
  if (!shown) {
    const style = (el.ownerDocument.defaultView ?? window).getComputedStyle(el);
    styles.set(el, (shown = internedShown(style.getPropertyValue('display'), style.getPropertyValue('visibility'))));
  }
  return shown;
}

/** Style rules looked at per tree for ::before/::after, at most; past it the tree counts as using them. */
const MAX_PSEUDO_RULES = 20_000;
const PSEUDO_SELECTOR = /:(?::)?(before|after)\b/i;

/**
 * Whether no style rule of el's tree (its document or shadow root) can give
 * el a ::before or ::after: every sheet is readable (not cross-origin) and
 * no selector names them. The user agent's own only give them to <q>.
 * A shadow tree also needs its document free of ::part() rules naming them.
 */
function pseudoFree(el: Element): boolean {
  const root = el.getRootNode();
  let free = pseudoFreeTrees!.get(root);
  if (free === undefined) {
    const scan = sheetScan(root as Document | ShadowRoot);
    free = scan === 'free';
    if (free && root.nodeType === 11 /* DOCUMENT_FRAGMENT_NODE */) free = sheetScan(el.ownerDocument) !== 'part';
    pseudoFreeTrees!.set(root, free);
  }
  return free;
}

/** free: no rule names ::before/::after; part: one does through ::part(); used: some does (or a sheet cannot be read). */
function sheetScan(root: Document | ShadowRoot): 'free' | 'used' | 'part' {
  // Within one read cache only: the page's sheets change between snapshots.
  const known = sheetScans!.get(root);
  if (known) return known;
  let seen = 0;
  let result: 'free' | 'used' | 'part' = 'free';
  const scan = (rules: CSSRuleList): boolean => {
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i]!;
      if (++seen > MAX_PSEUDO_RULES) return false;
      const selector = (rule as CSSStyleRule).selectorText;
      if (typeof selector === 'string') {
        if (PSEUDO_SELECTOR.test(selector)) {
          if (!/::part\(/i.test(selector) && result === 'free') result = 'used';
          else if (/::part\(/i.test(selector)) result = 'part';
          if (result === 'part') return false;
        }
        // Nested rules (CSS nesting) are in cssRules too.
        const nested = (rule as CSSStyleRule).cssRules;
        if (nested && nested.length > 0 && !scan(nested)) return false;
      } else if ((rule as CSSImportRule).styleSheet !== undefined && (rule as CSSImportRule).styleSheet !== null) {
        try {
          if (!scan((rule as CSSImportRule).styleSheet!.cssRules)) return false;
        } catch {
          result = 'used';
          return false;
        }
      } else if ('cssRules' in rule) {
        if (!scan((rule as CSSGroupingRule).cssRules)) return false;
      }
    }
    return true;
  };
  for (const sheet of [...Array.from(root.styleSheets ?? []), ...(root.adoptedStyleSheets ?? [])]) {
    let rules: CSSRuleList;
    try {
      rules = sheet.cssRules;
    } catch {
      result = 'used'; // A cross-origin style sheet: its rules cannot be read.
      break;
    }
    if (!scan(rules)) {
      if (result === 'free') result = 'used';
      break;
    }
  }
  sheetScans!.set(root, result);
  return result;
}

/** el's border box (getBoundingClientRect), from the read cache when it is on. */
export function boxOf(el: Element): DOMRect {
  if (!boxes) return el.getBoundingClientRect();
  let box = boxes.get(el);
  if (!box) boxes.set(el, (box = el.getBoundingClientRect()));
  return box;
}

export interface TreeOptions {
  root?: Element | undefined;
  frameIdOf?: ((iframe: Element) => number | undefined) | undefined;
  /** Nodes built before the rest is only counted; absent: no limit. */
  budget?: number;
  /** Elements a CSS :hover rule shows (hoverRevealed); absent: none, and shadow roots' sheets are not scanned either. */
  hover?: Set<Element>;
  /** Date.now() past which the walk stops (the tree is then partial); absent: none. */
  until?: number | undefined;
  /** root lies inside an element hidden now and shown by a :hover rule: it is walked as shown, and marked. */
  inHover?: boolean;
}

export interface Tree {
  items: Item[];
  /** Elements met after the walk stopped (at least one when stopped). */
  uncounted: number;
  /** The walk stopped at the budget: the rest of the page was not walked. */
  stopped: boolean;
  /** The walk stopped at the deadline (TreeOptions.until). */
  late: boolean;
}

/** Walks the page (or root and its subtree) into role nodes and text runs. */
export function buildTree(doc: Document, opts: TreeOptions = {}): Tree {
  const walker = new Walker(opts.frameIdOf, opts.budget ?? Infinity, opts.hover, opts.until ?? Infinity, opts.inHover ? 1 : 0);
  if (opts.root) walker.visit(opts.root, true);
  else {
    const root = doc.body ?? doc.documentElement;
    if (root) walker.visitChildren(root, true);
  }
  return { items: walker.take(0), uncounted: walker.skipped, stopped: walker.stopped, late: walker.late };
}

/**
 * checkVisibility's options for an element shown as it is: it has a box and
 * its visibility is visible (visibilityProperty; checkVisibilityCSS is its
 * earlier name, which Chrome 120 still knows).
 */
const SHOWN = { visibilityProperty: true, checkVisibilityCSS: true };

/** How many elements are walked between two looks at the clock. */
const CLOCK_EVERY = 256;

/**
 * The role printed for el, or null for a role-less wrapper. tag and
 * editable: el.tagName and isEditableHost(el) when the caller has them (a
 * large page's walk reads each once per element).
 */
export function roleOf(el: Element, tag = el.tagName, editable?: boolean): string | null {
  if (tag === 'INPUT' && !el.hasAttribute('role')) {
    const native = INPUT_ROLES[(el as HTMLInputElement).type];
    if (native) return native;
  }
  // A label standing in for a hidden file input is its button (Chromium shows neither).
  if (tag === 'LABEL' && !el.hasAttribute('role') && isFileInput((el as HTMLLabelElement).control) && !isRendered((el as HTMLLabelElement).control!)) {
    return 'button';
  }
  const role = getRole(el) ?? FALLBACK_ROLES[tag] ?? SURFACE_ROLES[tag] ?? null;
  if (role === null && tag === 'INPUT' && (el as HTMLInputElement).type === 'password') return 'textbox';
  if ((role === null || role === 'generic') && (editable ?? isEditableHost(el))) return 'textbox';
  if (role === 'presentation' || role === 'none' || role === 'generic') return null;
  return role;
}

/** A short human description of el for error messages: `button "Sign in"`. */
export function describe(el: Element): string {
  const role = roleOf(el) ?? el.tagName.toLowerCase();
  const name = clip(normalizeSpace(safeName(el)));
  return name ? `${role} ${JSON.stringify(name)}` : role;
}

export function isEditableHost(el: Element): boolean {
  return (el as HTMLElement).isContentEditable === true && !(el.parentElement as HTMLElement | null)?.isContentEditable;
}

class Walker {
  /** Nodes built so far. */
  private built = 0;
  /** Elements met once the walk stopped (only the first is counted). */
  skipped = 0;
  /** The walk stopped: at the budget, or (late) at the deadline. */
  stopped = false;
  late = false;
  /** Elements until the next look at the clock. */
  private tick = CLOCK_EVERY;

  /** How many frames of this document showing each URL were met so far. */
  private readonly frameURLs = new Map<string, number>();

  /** How many hover-hidden elements the walk is inside (their subtrees print as shown). */
  private inHover: number;
  /** Shadow roots whose style sheets were scanned for :hover rules. */
  private shadowScans = 0;
  /**
   * The items met and not yet taken by their node, deepest last: a node's
   * children are pushed here by the walk below it, then copied out once
   * into an array of their own (take). One buffer instead of a growing
   * array per node: a large page's walk spent much of its time collecting
   * the arrays it outgrew.
   */
  private readonly buf: Item[] = [];
  /** Items in buf (past it: stale entries, overwritten as the walk goes on). */
  private top = 0;

  constructor(
    private readonly frameIdOf: ((iframe: Element) => number | undefined) | undefined,
    private readonly budget: number,
    private readonly hover: Set<Element> | undefined,
    private readonly until: number,
    inHover = 0,
  ) {
    this.inHover = inHover;
  }

  /** The rank of a frame showing url among those met so far (0 for the first); counts it. */
  private frameRank(url: string): number {
    const n = this.frameURLs.get(url) ?? 0;
    this.frameURLs.set(url, n + 1);
    return n;
  }

  private put(item: Item): void {
    this.buf[this.top++] = item;
  }

  /** The items pushed since start, merged as normalize does, as a new array; they leave the buffer. */
  take(start: number): Item[] {
    const end = this.top;
    this.top = start;
    return normalizeRange(this.buf, start, end);
  }

  /** tag: el.tagName, when the caller has read it. */
  visitChildren(el: Element, textVisible: boolean, tag?: string): void {
    if (this.stopped) return;
    // Asked once per element: for one that can host a closed root, it is a call into Chrome's extension API.
    const shadow = shadowRootOf(el, tag);
    if (this.hover) {
      // A component's own sheets hold its :hover rules (`:host(:hover) .more`).
      if (shadow && this.shadowScans < MAX_SHADOW_ROOTS && ((shadow.styleSheets?.length ?? 0) > 0 || (shadow.adoptedStyleSheets?.length ?? 0) > 0)) {
        this.shadowScans++;
        for (const found of hoverRevealed(shadow)) this.hover.add(found);
      }
    }
    if (!shadow && el.tagName === 'SLOT') {
      const assigned = (el as HTMLSlotElement).assignedNodes();
      if (assigned.length) {
        for (let i = 0; i < assigned.length; i++) {
          if (this.stopped) return;
          this.visit(assigned[i]!, textVisible);
        }
        return;
      }
    }
    // By sibling links, not el.childNodes: a NodeList per element (kept by
    // the page, and wrapped for this world) was a large share of a big
    // page's garbage.
    for (let kid = shadow ? shadow.firstChild : el.firstChild; kid; kid = kid.nextSibling) {
      if (this.stopped) return;
      this.visit(kid, textVisible);
    }
  }

  visit(node: Node, textVisible: boolean): void {
    if (this.stopped) return;
    if (node.nodeType === 3 /* TEXT_NODE */) {
      if (textVisible) this.put((node as Text).data);
      return;
    }
    if (node.nodeType !== 1 /* ELEMENT_NODE */) return;
    const el = node as Element;
    const tag = el.tagName;
    if (SKIPPED_TAGS.has(tag)) return;
    // Most elements of a large page have no attributes: one call instead of four.
    if (el.hasAttributes()) {
      if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return;
      if (el.hasAttribute('hidden') && el.getAttribute('hidden') !== 'until-found') return;
    }
    if (tag === 'INPUT' && (el as HTMLInputElement).type === 'hidden') return;
    if (tag === 'BR') {
      this.put('\n');
      return;
    }
    if (--this.tick <= 0) {
      this.tick = CLOCK_EVERY;
      if (Date.now() > this.until) this.stopped = this.late = true;
    }
    if (this.built > this.budget) this.stopped = true;
    if (this.stopped) {
      // The rest of the page is not walked: the snapshot says "more than N".
      this.skipped++;
      return;
    }
    if (!el.ownerDocument.defaultView) return;
    // Most elements are shown: when checkVisibility says so (a box, so display
    // is neither none nor contents, and visibility visible), the walk needs
    // no style, and only a role-less wrapper reads its display later. Each
    // computed style read made a declaration object (and a cache entry) per
    // element of a large page, much of the garbage its snapshot collected.
    // Not shown (or an option, which has no box of its own in a drop-down, or
    // one a :hover rule may reveal): the style decides, as below.
    if (tag !== 'OPTION' && tag !== 'OPTGROUP' && typeof el.checkVisibility === 'function' && this.hover?.has(el) !== true && el.checkVisibility(SHOWN)) {
      this.walkElement(el, tag, undefined, true);
      return;
    }
    // Its opacity matters only to an element a :hover rule may reveal.
    const style = this.hover?.has(el) === true ? styleOf(el) : shownOf(el);
    // Hidden now but shown by a :hover rule: walked as shown, and marked.
    const revealed = this.hover?.has(el) === true && (style.display === 'none' || style.visibility === 'hidden' || (style as StyleFacts).opacity === '0' || !visibleNow(el));
    if (revealed) {
      this.inHover++;
      try {
        this.walkElement(el, tag, style, true);
      } finally {
        this.inHover--;
      }
      return;
    }
    if (style.display === 'none') return;
    if (this.inHover === 0 && !visibleNow(el, style)) return;
    this.walkElement(el, tag, style, this.inHover > 0 || (style.visibility !== 'hidden' && style.visibility !== 'collapse'));
  }

  /** style: el's, when the walk read it (else read here if needed). */
  private walkElement(el: Element, tag: string, style: Shown | undefined, selfVisible: boolean): void {
    const editable = isEditableHost(el);
    const role = selfVisible ? roleOf(el, tag, editable) : null;
    const interactive = selfVisible && isInteractive(el, role, tag, editable);

    if (role === null && !interactive) {
      // A wrapper: its children move up. Block boxes separate text runs.
      const display = (style ?? shownOf(el)).display;
      const block = display !== '' && !/^inline/.test(display) && display !== 'contents';
      if (block) this.put(BREAK);
      // Text shown only on hover is left to the names of the controls it is in.
      this.visitChildren(el, selfVisible && this.inHover === 0, tag);
      if (block) this.put(BREAK);
      return;
    }

    this.built++;
    let url: string | undefined;
    if (tag === 'A' && el.hasAttribute('href')) {
      const href = el.getAttribute('href')!.trim();
      if (href && !/^javascript:/i.test(href)) url = clip(href);
    }
    // Every node gets the same properties in the same order (one object shape).
    const aria: AriaNode = { role: role ?? 'generic', el, interactive, tag, editable, children: NO_ITEMS, hoverHidden: this.inHover > 0 ? true : undefined, url, frame: undefined };
    const start = this.top;
    if (tag === 'IFRAME' || tag === 'FRAME') {
      this.visitFrame(el as HTMLIFrameElement, aria);
    } else if (tag === 'SELECT') {
      // The options are the children; the value is the selected one.
      this.visitChildren(el, true, tag);
    } else if (!LEAF_ROLES.has(aria.role) && !editable && tag !== 'INPUT' && tag !== 'TEXTAREA') {
      this.visitChildren(el, selfVisible, tag);
    }
    // A leaf shares the one empty list (no node's children are added to once built).
    aria.children = this.top > start ? this.take(start) : NO_ITEMS;
    this.put(aria);
  }

  private visitFrame(frame: HTMLIFrameElement, aria: AriaNode): void {
    // A srcdoc frame's document is about:srcdoc whatever its src says.
    const url = frame.hasAttribute('srcdoc') ? 'about:srcdoc' : frame.src || 'about:blank';
    let inner: Document | null = null;
    try {
      inner = frame.contentDocument;
    } catch {
      inner = null; // Cross-origin.
    }
    const body = inner?.body ?? inner?.documentElement;
    if (body) {
      this.frameRank(url);
      this.visitChildren(body, true);
      return;
    }
    const id = this.frameIdOf?.(frame);
    if (id !== undefined && id > 0) {
      aria.frame = id;
      return;
    }
    // By URL and rank among the frames showing it (see frameResolver).
    const nth = this.frameRank(url);
    aria.frame = nth === 0 ? `u${url}` : `u${nth} ${url}`;
  }
}

/** Pieces of text, written into a buffer that is reused, never shrunk. */
class Sink {
  readonly buf: string[] = [];
  /** Pieces in buf; past it, stale ones to be overwritten. */
  n = 0;
  w(piece: string): void {
    this.buf[this.n++] = piece;
  }
  /**
   * The pieces, joined. The buffer is cut to them first, not copied: cut
   * by less than half (as between chunks), it keeps its room.
   */
  text(): string {
    if (this.n < this.buf.length) this.buf.length = this.n;
    return this.buf.join('');
  }
}

/** Pieces a renderer gathers before joining them into a chunk of its text. */
const CHUNK_PIECES = 8192;

/**
 * Prints a tree within a character budget and a depth, counting what it
 * leaves out. The text is kept as pieces (mostly shared strings: indents,
 * roles, punctuation) in one reused buffer, joined a chunk of lines at a
 * time: a line built by concatenation left several strings per line, which
 * a large page's snapshot kept until its end and spent much of its time
 * collecting, and one growing array of pieces as much in outgrown copies.
 */
export class Renderer {
  private readonly parts = new Sink();
  /** The text of the lines before those in parts. */
  private readonly chunks: string[] = [];
  readonly frames: Array<number | string> = [];
  omitted = 0;
  /** Printing stopped at the deadline. */
  late = false;
  private chars = 0;
  private lineCount = 0;
  private full = false;
  private tick = CLOCK_EVERY;

  constructor(
    private readonly refs: RefRegistry,
    private readonly maxChars = Infinity,
    private readonly depth = Infinity,
    private readonly urls = false,
    private readonly until = Infinity,
  ) {}

  /** The printed lines, joined by line breaks. */
  text(): string {
    if (this.chunks.length === 0) return this.parts.text();
    return this.chunks.join('') + this.parts.text();
  }

  /** Starts a line (its pieces follow in parts); returns where it starts. */
  private begin(indent: string): number {
    // Between lines only: a line's pieces stay in one chunk (end may take them back).
    if (this.parts.n >= CHUNK_PIECES) {
      this.chunks.push(this.parts.text());
      this.parts.n = 0;
    }
    const mark = this.parts.n;
    if (this.lineCount > 0) this.parts.w('\n');
    this.parts.w(indent);
    return mark;
  }

  /**
   * Ends the line begun at mark: kept when it fits the budget, else taken
   * back and left out, with item (or a count of elements) counted as omitted.
   */
  private end(mark: number, item: Item | number): boolean {
    if (!this.full && --this.tick <= 0) {
      this.tick = CLOCK_EVERY;
      if (Date.now() > this.until) this.full = this.late = true;
    }
    let length = this.lineCount > 0 ? -1 : 0;
    for (let i = mark; i < this.parts.n; i++) length += this.parts.buf[i]!.length;
    if (this.full || this.chars + length + 1 > this.maxChars) {
      this.full = true;
      this.omitted += typeof item === 'number' ? item : countItem(item);
      this.parts.n = mark;
      return false;
    }
    this.chars += length + 1;
    this.lineCount++;
    return true;
  }

  renderItems(items: Item[], indent: string, level: number): void {
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!;
      if (this.full) {
        this.omitted += countItem(item);
        continue;
      }
      if (typeof item === 'string') {
        const mark = this.begin(indent);
        this.parts.w('- text: ');
        this.parts.w(yamlText(clip(item)));
        this.end(mark, item);
        continue;
      }
      const name = nodeName(item);
      let kids = item.children;
      // A name computed from the content repeats it: print only the name.
      if (name && kids.length > 0 && repeatsName(kids, name)) kids = NO_ITEMS;
      const cut = level >= this.depth && (kids.length > 0 || item.frame !== undefined);
      const value = nodeValue(item);
      let mark = this.begin(indent);
      this.parts.w('- ');
      keyParts(item, name, this.refs, cut, this.parts);
      if (cut) {
        if (value !== undefined) {
          this.parts.w(': ');
          this.parts.w(yamlText(value));
        }
        if (this.end(mark, 1)) {
          this.omitted += countItems(kids) + (item.frame !== undefined ? 1 : 0);
        } else {
          this.omitted += countItems(kids);
        }
        continue;
      }
      // A link's URL is a child line only when URLs are printed.
      const url = this.urls ? item.url : undefined;
      if (url === undefined && kids.length === 0 && item.frame === undefined) {
        if (value !== undefined) {
          this.parts.w(': ');
          this.parts.w(yamlText(value));
        }
        this.end(mark, item);
      } else if (url === undefined && item.frame === undefined && kids.length === 1 && typeof kids[0] === 'string' && value === undefined) {
        this.parts.w(': ');
        this.parts.w(yamlText(clip(kids[0])));
        this.end(mark, item);
      } else {
        this.parts.w(':');
        if (!this.end(mark, item)) continue;
        const inner = deeper(indent);
        if (value !== undefined) {
          mark = this.begin(inner);
          this.parts.w('- /value: ');
          this.parts.w(yamlText(value));
          this.end(mark, 0);
        }
        if (url !== undefined) {
          mark = this.begin(inner);
          this.parts.w('- /url: ');
          this.parts.w(yamlText(url));
          this.end(mark, 0);
        }
        if (item.frame !== undefined) {
          mark = this.begin(inner);
          this.parts.w(FRAME_MARK);
          this.parts.w(String(item.frame));
          if (this.end(mark, 0)) this.frames.push(item.frame);
        }
        this.renderItems(kids, inner, level + 1);
      }
    }
  }
}

/** Indents by length: each level's string is made once. */
const INDENTS: string[] = [''];

/** indent and one more level. */
function deeper(indent: string): string {
  const n = indent.length + 2;
  return (INDENTS[n] ??= indent + '  ');
}

/** Whether kids are all text runs that, joined by spaces, are name. */
function repeatsName(kids: Item[], name: string): boolean {
  if (kids.length === 1) return kids[0] === name;
  for (const c of kids) if (typeof c !== 'string') return false;
  return kids.join(' ') === name;
}

/** How many nodes and text runs items hold. */
export function countItems(items: Item[]): number {
  let n = 0;
  for (let i = 0; i < items.length; i++) n += countItem(items[i]!);
  return n;
}

/** How many nodes and text runs item is (with its children). */
function countItem(item: Item): number {
  return typeof item === 'string' ? (item === '' ? 0 : 1) : 1 + countItems(item.children);
}

/** A node's accessible name as printed ('' for role-less nodes). */
export function nodeName(node: AriaNode): string {
  return node.role !== 'generic' ? clip(normalizeSpace(safeName(node.el, node.hoverHidden === true))) : '';
}

/** `role "name" [props] [ref=…]`: a node's line without its "- " and value. withRef issues a ref to any node. */
export function nodeKey(node: AriaNode, name: string, refs: RefRegistry | undefined, withRef = false): string {
  const parts = new Sink();
  keyParts(node, name, refs, withRef, parts);
  return parts.text();
}

/** nodeKey's text, appended to out as pieces. */
function keyParts(node: AriaNode, name: string, refs: RefRegistry | undefined, withRef: boolean, out: Sink): void {
  out.w(node.role);
  if (name) {
    // Quoted as JSON.stringify quotes it; without a new string when nothing needs escaping.
    if (NEEDS_ESCAPE.test(name)) {
      out.w(' ');
      out.w(JSON.stringify(name));
    } else {
      out.w(' "');
      out.w(name);
      out.w('"');
    }
  }
  propsInto(node.el, node.role, node.tag ?? node.el.tagName, out);
  if (node.hoverHidden) out.w(' [hidden until hover]');
  if (refs && (node.interactive || withRef || CONTAINER_REF_ROLES.has(node.role))) {
    out.w(' [ref=');
    out.w(refs.refFor(node.el));
    out.w(']');
  }
}

/** Characters JSON.stringify escapes in a string: quote, backslash, controls, lone surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** The value printed after a node's key, if any. */
export function nodeValue(node: AriaNode): string | undefined {
  const tag = node.tag ?? node.el.tagName;
  if (tag === 'SELECT') return undefined;
  if (tag === 'INPUT' && isFileInput(node.el)) return valueOf(node.el);
  if (VALUE_ROLES.has(node.role) || (node.editable ?? isEditableHost(node.el))) return valueOf(node.el);
  return undefined;
}

/** One line for a node on its own: `- role "name" [props] [ref=…]: value`. */
export function nodeLine(node: AriaNode, refs: RefRegistry): string {
  const name = nodeName(node);
  const key = nodeKey(node, name, refs);
  const value = nodeValue(node);
  if (value !== undefined) return `- ${key}: ${yamlText(value)}`;
  const kids = node.children;
  if (!name && kids.length === 1 && typeof kids[0] === 'string') return `- ${key}: ${yamlText(clip(kids[0]))}`;
  return `- ${key}`;
}

/** One line for a text run. */
export function textLine(text: string): string {
  return `- text: ${yamlText(clip(text))}`;
}

/**
 * checkVisibility, which also catches closed <details> and
 * content-visibility:hidden ancestors; it is false for boxless
 * display:contents elements and for the options of a drop-down <select>, so
 * those skip it.
 */
export function visibleNow(el: Element, style?: Shown): boolean {
  if (style?.display === 'contents' || el.tagName === 'OPTION' || el.tagName === 'OPTGROUP') return true;
  return typeof el.checkVisibility !== 'function' || el.checkVisibility();
}

/** Whether el gets a ref as a control (tag, editable: as in roleOf). */
export function isInteractive(el: Element, role: string | null, tag = el.tagName, editable?: boolean): boolean {
  if (role !== null && INTERACTIVE_ROLES.has(role)) return true;
  if (isSurface(el, role, tag)) return true;
  if (INTERACTIVE_TAGS.has(tag)) return true;
  if (tag === 'A' && el.hasAttribute('href')) return true;
  if (tag === 'INPUT') return true;
  if (el.hasAttributes() && (el.hasAttribute('tabindex') || el.hasAttribute('onclick') || el.getAttribute('draggable') === 'true')) return true;
  return editable ?? isEditableHost(el);
}

/** ` [level=n]` for the usual heading levels, made once. */
const LEVEL_PROPS = [' [level=0]', ' [level=1]', ' [level=2]', ' [level=3]', ' [level=4]', ' [level=5]', ' [level=6]'];

/** Whether el is a visual surface (SURFACE_TAGS, or a sizable <svg> with a role). */
export function isSurface(el: Element, role: string | null, tag = el.tagName): boolean {
  if (SURFACE_TAGS.has(tag)) return true;
  if (tag !== 'svg' || role === null || role === 'generic') return false;
  const r = boxOf(el);
  return r.width >= SURFACE_MIN_SIDE && r.height >= SURFACE_MIN_SIDE;
}

/** `[box=x,y wxh]`: el's border box in its frame's viewport, CSS pixels, rounded. */
export function boxProp(el: Element): string {
  const r = boxOf(el);
  return `[box=${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}x${Math.round(r.height)}]`;
}

/** el's properties (`[checked]`, `[level=2]`…), each appended to out after a space. */
function propsInto(el: Element, role: string, tag: string, out: Sink): void {
  if (isSurface(el, role, tag)) {
    out.w(' ');
    out.w(boxProp(el));
  }
  const files = takesFiles(el, tag);
  if (files !== undefined) out.w(files ? ` [takes files: ${clip(files, 60)}]` : ' [takes files]');
  if (role === 'slider') {
    const input = tag === 'INPUT' ? (el as HTMLInputElement) : undefined;
    const min = input ? input.min || '0' : el.getAttribute('aria-valuemin');
    const max = input ? input.max || '100' : el.getAttribute('aria-valuemax');
    if (min) out.w(` [min=${min}]`);
    if (max) out.w(` [max=${max}]`);
  }
  if (tag === 'INPUT' && !(el as HTMLInputElement).value) {
    const format = INPUT_FORMATS[(el as HTMLInputElement).type];
    if (format) out.w(` [format=${format}]`);
  }
  if (CHECKABLE_ROLES.has(role)) {
    const checked = checkedState(el);
    if (checked === 'mixed') out.w(' [checked=mixed]');
    else if (checked) out.w(' [checked]');
  }
  if (isDisabledEl(el, tag)) out.w(' [disabled]');
  // An element without attributes has none of the ARIA states below.
  const attrs = el.hasAttributes();
  if (attrs && el.getAttribute('aria-expanded') === 'true') out.w(' [expanded]');
  else if (tag === 'SUMMARY' && (el.parentElement as HTMLDetailsElement | null)?.open) out.w(' [expanded]');
  if (role === 'heading') {
    const level = Number(el.getAttribute('aria-level')) || Number(/^H([1-6])$/.exec(tag)?.[1]) || 2;
    out.w(LEVEL_PROPS[level] ?? ` [level=${level}]`);
  }
  const pressed = attrs ? el.getAttribute('aria-pressed') : null;
  if (pressed === 'true') out.w(' [pressed]');
  else if (pressed === 'mixed') out.w(' [pressed=mixed]');
  if ((attrs && el.getAttribute('aria-selected') === 'true') || (tag === 'OPTION' && (el as HTMLOptionElement).selected)) {
    out.w(' [selected]');
  }
}

/**
 * Whether el takes files: a file input, or a label or button that opens one
 * (its label control, one inside it, one it names by aria-controls, or a
 * file input hidden right beside it). undefined: no; otherwise the input's
 * accept list ('' when it takes any file).
 */
export function takesFiles(el: Element, tag = el.tagName): string | undefined {
  const input = fileInputOf(el, tag);
  return input ? (input.getAttribute('accept') ?? '').trim() : undefined;
}

function isFileInput(el: Element | null | undefined): el is HTMLInputElement {
  return !!el && el.tagName === 'INPUT' && (el as HTMLInputElement).type === 'file';
}

function fileInputOf(el: Element, tag: string): HTMLInputElement | undefined {
  if (tag === 'INPUT' && (el as HTMLInputElement).type === 'file') return el as HTMLInputElement;
  if (tag === 'LABEL') {
    const control = (el as HTMLLabelElement).control;
    return isFileInput(control) ? control : undefined;
  }
  if (tag !== 'BUTTON' && tag !== 'A' && el.getAttribute('role') !== 'button') return undefined;
  if (el.firstElementChild) {
    const inside = el.querySelector('input[type=file]');
    if (isFileInput(inside)) return inside;
  }
  const controls = el.getAttribute('aria-controls');
  if (controls) {
    for (const id of controls.split(/\s+/).filter(Boolean)) {
      const named = el.ownerDocument.getElementById(id);
      if (isFileInput(named)) return named;
    }
  }
  // The usual custom upload button: a file input hidden beside it, opened by its click handler.
  // Both siblings asked without an array: this runs for every button and link.
  const next = el.nextElementSibling;
  if (isFileInput(next) && !isRendered(next)) return next;
  const previous = el.previousElementSibling;
  if (isFileInput(previous) && !isRendered(previous)) return previous;
  return undefined;
}

function isRendered(el: Element): boolean {
  if (el.hasAttribute('hidden')) return false;
  if (!el.ownerDocument.defaultView) return false;
  const style = shownOf(el);
  return style.display !== 'none' && style.visibility !== 'hidden';
}

function checkedState(el: Element): boolean | 'mixed' {
  if (el.tagName === 'INPUT') {
    const input = el as HTMLInputElement;
    if (input.indeterminate && input.type === 'checkbox') return 'mixed';
    if (input.type === 'checkbox' || input.type === 'radio') return input.checked;
  }
  const aria = el.getAttribute('aria-checked');
  if (aria === 'mixed') return 'mixed';
  return aria === 'true';
}

/**
 * The elements :disabled can match (HTML "disabled": button, input, select,
 * textarea, optgroup, option, fieldset, and form-associated custom elements,
 * whose names have a hyphen); lower case too, as an XHTML page's tagName is.
 */
const DISABLEABLE_TAGS = new Set(['BUTTON', 'INPUT', 'SELECT', 'TEXTAREA', 'OPTGROUP', 'OPTION', 'FIELDSET', 'button', 'input', 'select', 'textarea', 'optgroup', 'option', 'fieldset']);

/** Disabled natively (including by a disabled fieldset) or by aria-disabled on it or an ancestor. */
export function isDisabledEl(el: Element, tag = el.tagName): boolean {
  if (DISABLEABLE_TAGS.has(tag) || tag.includes('-')) {
    try {
      if (el.matches(':disabled')) return true;
    } catch {
      // Some DOMs do not know :disabled; fall through.
      if ((el as HTMLButtonElement).disabled === true) return true;
    }
  }
  return el.closest('[aria-disabled="true"]') !== null;
}

function valueOf(el: Element): string | undefined {
  if (el.tagName === 'INPUT') {
    const input = el as HTMLInputElement;
    if (input.type === 'password') return input.value ? PASSWORD_MASK : undefined;
    if (input.type === 'checkbox' || input.type === 'radio' || input.type === 'button' || input.type === 'submit' || input.type === 'reset' || input.type === 'image') {
      return undefined;
    }
    if (input.type === 'file') {
      const names = [...(input.files ?? [])].map((f) => f.name).join(', ');
      return names ? clip(names) : undefined;
    }
    return input.value ? clip(normalizeSpace(input.value)) : undefined;
  }
  if (el.tagName === 'TEXTAREA') {
    const v = (el as HTMLTextAreaElement).value;
    return v ? clip(normalizeSpace(v)) : undefined;
  }
  if (isEditableHost(el)) {
    const v = normalizeSpace(el.textContent ?? '');
    return v ? clip(v) : undefined;
  }
  const aria = el.getAttribute('aria-valuetext') ?? el.getAttribute('aria-valuenow');
  return aria ? clip(normalizeSpace(aria)) : undefined;
}

// Chromium leaves <noscript> out of the accessibility tree (its content is
// raw text while scripting is on); dom-accessibility-api would read that text
// (markup such as `<img …>`) into names, so its style lookup sees it hidden.
const HIDDEN_STYLE = { getPropertyValue: (p: string) => (p === 'display' ? 'none' : '') } as CSSStyleDeclaration;
function nameStyle(el: Element, pseudo?: string | null): CSSStyleDeclaration {
  if (el.tagName === 'NOSCRIPT') return HIDDEN_STYLE;
  // dom-accessibility-api reads only getPropertyValue.
  return styleOf(el, pseudo) as unknown as CSSStyleDeclaration;
}

/** el's accessible name; hidden: also from hidden content (an element hidden until hover). */
export function safeName(el: Element, hidden = false): string {
  // accname 2C: a non-empty aria-label names a (shown) element that has no
  // aria-labelledby; dom-accessibility-api would say the same, after
  // reading styles and, for a form field, its labels (a scan of the page).
  if (!hidden && !el.hasAttribute('aria-labelledby')) {
    const label = el.getAttribute('aria-label')?.trim();
    if (label) return label;
  }
  if (!hidden) {
    const content = contentName(el);
    if (content !== undefined) return content;
    const text = ownTextName(el);
    if (text) return text;
    const titled = titleOnlyName(el);
    if (titled !== undefined) return titled;
  }
  // dom-accessibility-api reads el.labels: the index answers instead, through
  // an own property of this script's wrapper (the page never sees it).
  const shadowLabels = labelTrees !== undefined && 'labels' in el && !Object.prototype.hasOwnProperty.call(el, 'labels');
  if (shadowLabels) Object.defineProperty(el, 'labels', { value: labelsOf(el), configurable: true });
  try {
    const name = computeAccessibleName(el, hidden ? { getComputedStyle: nameStyle, hidden: true } : { getComputedStyle: nameStyle });
    if (name) return name;
    // HTML-AAM (accessible name computation for input and textarea): with
    // no label, aria-label or title, the placeholder names the field, as
    // Chromium does; dom-accessibility-api 0.7 stops before that step.
    if (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA') {
      const placeholder = el.getAttribute('placeholder') ?? el.getAttribute('aria-placeholder');
      if (placeholder) return placeholder.trim();
    }
    // A label printed as its hidden file input's button (roleOf) is named by its text.
    if (el.tagName === 'LABEL') return el.textContent ?? '';
    return name;
  } catch {
    return el.getAttribute('aria-label') ?? '';
  } finally {
    if (shadowLabels) delete (el as { labels?: unknown }).labels;
  }
}

const PSEUDOS = ['::before', '::after'];

/** Elements named by their content whose name, with only text inside, is that text (accname 2F). */
const TEXT_NAMED_TAGS = new Set(['A', 'BUTTON', 'TD', 'TH', 'TR', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6']);

/**
 * The name of a shown link, button, cell or heading whose children are all
 * text, with no aria-labelledby, no <label> and no ::before/::after content:
 * that text, as dom-accessibility-api would compute it (2F), without its
 * walk. '' when the shortcut does not apply.
 */
function ownTextName(el: Element): string {
  if (!TEXT_NAMED_TAGS.has(el.tagName) || el.hasAttribute('aria-labelledby')) return '';
  const role = el.getAttribute('role');
  if (role !== null && role.trim() !== '') return '';
  if (el.tagName === 'A' && !el.hasAttribute('href')) return '';
  let text = '';
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 3 /* TEXT_NODE */) text += (c as Text).data;
    else if (c.nodeType !== 8 /* COMMENT_NODE */) return '';
  }
  text = text.trim().replace(/\s\s+/g, ' ');
  if (!text || shadowRootOf(el)) return '';
  if (el.tagName === 'BUTTON' && labelsOf(el).length > 0) return '';
  for (const pseudo of PSEUDOS) {
    const content = styleOf(el, pseudo).content;
    if (content && content !== 'none' && content !== 'normal') return '';
  }
  return text;
}

/**
 * Elements whose implicit role (dom-accessibility-api's getRole) never takes
 * its name from content (ARIA 1.2 "name from: author" roles such as list,
 * listitem, paragraph, the landmarks, rowgroup), and that HTML-AAM names by
 * nothing of their own (not labelable, no caption, legend or alt): with no
 * role, aria-label or aria-labelledby, their name is their title or nothing.
 */
const TITLE_ONLY_TAGS = new Set([
  'LI', 'UL', 'OL', 'P', 'MAIN', 'HEADER', 'FOOTER', 'NAV', 'SECTION', 'ARTICLE', 'ASIDE', 'TBODY', 'THEAD', 'TFOOT',
  'FORM', 'DL', 'DT', 'DD', 'FIGURE', 'BLOCKQUOTE', 'DETAILS', 'DIALOG', 'HR', 'PRE', 'CODE', 'ADDRESS',
]);

/**
 * The name of a shown TITLE_ONLY_TAGS element without role, aria-label or
 * aria-labelledby, as dom-accessibility-api computes it (accname: 2C and 2D
 * give nothing, 2F does not apply, then the tooltip attribute): its title,
 * flattened, else ''. undefined when the shortcut does not apply. Saves the
 * library's role look-ups, which were most of a long list's naming.
 */
function titleOnlyName(el: Element): string | undefined {
  if (!styles || !TITLE_ONLY_TAGS.has(el.tagName) || el.hasAttribute('aria-labelledby') || el.hasAttribute('role')) return undefined;
  const title = el.getAttribute('title');
  return title !== null && title.trim() !== '' ? title.trim().replace(/\s\s+/g, ' ') : '';
}

/**
 * Elements that, inside a name made of content, add only their own content
 * (no role that is a control, no label, caption, legend or alt of theirs).
 */
const PLAIN_TAGS = new Set([
  'SPAN', 'B', 'I', 'EM', 'STRONG', 'SMALL', 'CODE', 'MARK', 'SUB', 'SUP', 'U', 'S', 'TIME', 'A', 'DIV', 'P',
  'TD', 'TH', 'TR', 'TBODY', 'THEAD', 'TFOOT', 'LI', 'UL', 'OL', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6',
  'SECTION', 'ARTICLE', 'HEADER', 'FOOTER', 'NAV', 'ASIDE', 'MAIN', 'FIGCAPTION', 'ABBR', 'CITE', 'KBD', 'SAMP', 'VAR', 'DFN', 'DEL', 'INS', 'BDI', 'BDO', 'DATA', 'LABEL',
]);
/** Attributes that make an element's part of a name more than its content. */
const NAMING_ATTRS = ['aria-label', 'aria-labelledby', 'aria-hidden', 'aria-owns', 'hidden', 'role', 'title'];
/** Attributes that make a control's part of a name other than its content or value (a control skips 2C and 2D inside a name). */
const CONTROL_NAMING_ATTRS = ['aria-labelledby', 'aria-hidden', 'aria-owns', 'hidden', 'role'];
/** Whether el has one of names (a loop: a callback would be a closure per element named). */
function hasAnyAttribute(el: Element, names: readonly string[]): boolean {
  for (let i = 0; i < names.length; i++) if (el.hasAttribute(names[i]!)) return true;
  return false;
}
/** Input types whose role is textbox (dom-accessibility-api's getRole, without a list attribute). */
const TEXTBOX_TYPES = new Set(['text', 'email', 'tel', 'url']);

/**
 * The name of a shown link, button, cell, row or heading made of its
 * content, as dom-accessibility-api computes it (accname 2F: each child's
 * text alternative, a space around those that are not inline, trimmed at
 * each level), without its walk, when that content is only text, plain
 * elements (PLAIN_TAGS, no NAMING_ATTRS), buttons and text fields, in a tree
 * no style rule gives ::before or ::after. An empty content names it ''
 * when it has no title (dom-accessibility-api's next step, 2I, reads only
 * that: a cell holding just a text field is one of every row of a large
 * table). undefined when the shortcut does not apply, or the content is
 * empty and a title may name it.
 */
function contentName(el: Element): string | undefined {
  if (!styles || !TEXT_NAMED_TAGS.has(el.tagName) || el.hasAttribute('aria-labelledby') || el.hasAttribute('aria-owns')) return undefined;
  const role = el.getAttribute('role');
  if (role !== null && role.trim() !== '') return undefined;
  if (el.tagName === 'A' && !el.hasAttribute('href')) return undefined;
  if (shadowRootOf(el) || !pseudoFree(el)) return undefined;
  if (el.tagName === 'BUTTON' && labelsOf(el).length > 0) return undefined;
  let text: string | undefined;
  nameTop = 0;
  if (plainPieces(el)) {
    // Joined once: most names are one piece (a link's text), which is the name as it is.
    let only: string | undefined;
    let count = 0;
    for (let i = 0; i < nameTop; i++) {
      if (namePieces[i] !== '') {
        only = namePieces[i];
        count++;
      }
    }
    text = count > 1 ? namePieces.slice(0, nameTop).join('') : (only ?? '');
  }
  nameTop = 0;
  // A rare huge name's pieces are not kept.
  if (namePieces.length > MAX_KEPT_PIECES) namePieces.length = 0;
  if (text === undefined) return undefined;
  return text.trim().replace(/\s\s+/g, ' ') || (el.hasAttribute('title') ? undefined : '');
}

/**
 * The pieces of the name contentName is making (text runs, values and
 * separators), in a buffer that is reused: the name is joined once, where
 * concatenating and trimming at each level of its content made several
 * strings per level, a table row's name a dozen.
 */
const namePieces: string[] = [];
/** Pieces in namePieces (past it: stale ones). */
let nameTop = 0;
const MAX_KEPT_PIECES = 1024;

/**
 * Appends el's content to namePieces as dom-accessibility-api's
 * computeMiscTextAlternative gives it inside a name (recursion), trimmed;
 * false when a child is not one the shortcut knows. A hidden child (hidden,
 * display none, visibility hidden) adds nothing but its separator. A button
 * adds its own content (a control skips aria-label inside a name: 2C), a
 * text field its value (2E).
 */
function plainPieces(el: Element): boolean {
  const start = nameTop;
  for (let c = el.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 3 /* TEXT_NODE */) {
      namePieces[nameTop++] = (c as Text).data;
      continue;
    }
    if (c.nodeType !== 1 /* ELEMENT_NODE */) continue;
    const e = c as Element;
    if (shadowRootOf(e)) return false;
    const tag = e.tagName;
    if (tag === 'BUTTON' || tag === 'INPUT' || tag === 'TEXTAREA') {
      if (e.hasAttributes() && hasAnyAttribute(e, CONTROL_NAMING_ATTRS)) return false;
      if (tag === 'INPUT' && (!TEXTBOX_TYPES.has((e as HTMLInputElement).type) || e.hasAttribute('list'))) return false;
    } else if (!PLAIN_TAGS.has(tag) || (e.hasAttributes() && hasAnyAttribute(e, NAMING_ATTRS))) {
      return false;
    }
    const style = shownOf(e);
    const block = style.display !== 'inline';
    if (block) namePieces[nameTop++] = ' ';
    if (style.display === 'none' || style.visibility === 'hidden') {
      // Nothing but the separators.
    } else if (tag === 'INPUT' || tag === 'TEXTAREA') namePieces[nameTop++] = (e as HTMLInputElement).value;
    else if (!plainPieces(e)) return false;
    if (block) namePieces[nameTop++] = ' ';
  }
  // Trimmed as the pieces' concatenation would be: white space is cut from
  // the first pieces until one keeps some text, and likewise from the last.
  for (let i = start; i < nameTop; i++) {
    const t = namePieces[i]!.trimStart();
    namePieces[i] = t;
    if (t !== '') break;
  }
  for (let i = nameTop - 1; i >= start; i--) {
    const t = namePieces[i]!.trimEnd();
    namePieces[i] = t;
    if (t !== '') break;
  }
  return true;
}

/**
 * items[start..end) with adjacent text runs merged, white space collapsed
 * and empty runs dropped, as a new array of just that length. Called for
 * every node's children; it compacts the range in place (the output is
 * never longer), so the only allocation is the result.
 */
function normalizeRange(items: Item[], start: number, end: number): Item[] {
  let w = start;
  let text: string | undefined;
  for (let i = start; i < end; i++) {
    const item = items[i]!;
    if (typeof item === 'string' && item !== BREAK) {
      text = text === undefined ? item : text + item;
      continue;
    }
    if (text !== undefined) {
      const t = normalizeSpace(text);
      if (t) items[w++] = t;
      text = undefined;
    }
    if (item !== BREAK) items[w++] = item;
  }
  if (text !== undefined) {
    const t = normalizeSpace(text);
    if (t) items[w++] = t;
  }
  return w === start ? NO_ITEMS : items.slice(start, w);
}

/**
 * White space other than a lone space between words (what normalizeSpace
 * changes), and U+0085 (next line), which JavaScript's \s leaves out but
 * some clients split lines at: page text never starts a line of its own.
 */
const UNTIDY_SPACE = /[^\S ]|\u0085|  |^ | $/;

export function normalizeSpace(s: string): string {
  // Most runs are tidy already: testing allocates nothing, replacing does.
  if (!UNTIDY_SPACE.test(s)) return s;
  return s.replace(/[\s\u00a0\u0085]+/g, ' ').trim();
}

export function clip(s: string, limit = TEXT_LIMIT): string {
  return s.length > limit ? s.slice(0, limit - 1).trimEnd() + '…' : s;
}

/**
 * Quotes a scalar when plain YAML would misread it, or when it holds a
 * bracket: unquoted, page text such as "Archive [ref=e12]" would read as
 * Tether's own marks (a ref, [level=2], [selected]) after its words.
 */
export function yamlText(s: string): string {
  if (s === '' || s.includes('[') || /^[\s\-?:,[\]{}#&*!|>'"%@`]/.test(s) || /: | #|:$/.test(s) || /^(true|false|null|~|[-+.\d][\d.eE+-]*)$/i.test(s)) {
    return JSON.stringify(s);
  }
  return s;
}
