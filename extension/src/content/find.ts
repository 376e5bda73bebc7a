// browser_find: searches the page's ARIA tree (the same tree the snapshot
// prints, uncapped) by role and/or text, and names the heading or table row
// each match sits under. Nodes are filtered by role, then by a cheap text
// test (their text, labelling attributes and labels), before any name is
// computed, so a search of a huge page stays cheap.
import type { FindMatch } from '../protocol.gen';
import type { RefRegistry } from './refs';
import { hoverRevealed } from './hover';
import { shadowRootOf } from './shadow';
import { buildTree, nodeKey, nodeLine, nodeName, normalizeSpace, textLine, labelsOf, withReadCache, type AriaNode, type Item } from './snapshot';

export interface FindQuery {
  /** Matched case-insensitively against names and text. */
  text?: string | undefined;
  /** Matched exactly against the role. */
  role?: string | undefined;
  frameIdOf?: ((iframe: Element) => number | undefined) | undefined;
  /** Date.now() past which the search stops and reports what it found (partial); absent: none. */
  until?: number | undefined;
}

export interface FindOutput {
  /** Every match, in document order (the caller applies the limit). */
  matches: FindMatch[];
  /** Cross-origin frames the search could not enter (see AriaNode.frame); the caller searches them. */
  frames: Array<number | string>;
  /** The search ran into its deadline: the matches are those found by then. */
  partial?: boolean;
}

/** The matches of q in doc, in document order; each name and style is read at most once. */
export function find(doc: Document, refs: RefRegistry, q: FindQuery): FindOutput {
  return withReadCache(() => search(doc, refs, q));
}

function search(doc: Document, refs: RefRegistry, q: FindQuery): FindOutput {
  const needle = q.text ? normalizeSpace(q.text).toLowerCase() : '';
  const role = q.role?.trim().toLowerCase() || '';
  const tree = buildTree(doc, { frameIdOf: q.frameIdOf, hover: hoverRevealed(doc), until: q.until });
  const items = tree.items;
  const out: FindOutput = { matches: [], frames: [] };
  if (tree.late) out.partial = true;
  let heading: string | undefined;
  const rows: AriaNode[] = [];

  // Row names are computed only for rows that hold a match, once each.
  const rowKeys = new Map<AriaNode, string>();
  const context = (): string | undefined => {
    const row = rows[rows.length - 1];
    if (!row) return heading;
    let key = rowKeys.get(row);
    // The row gets a ref, so browser_snapshot {ref} can show the whole row.
    if (key === undefined) rowKeys.set(row, (key = nodeKey(row, nodeName(row), refs, true)));
    return key;
  };

  const reported = new Set<AriaNode>();
  const walk = (list: Item[], parentMatched: boolean, parent?: AriaNode): void => {
    for (const item of list) {
      if (typeof item === 'string') {
        if (!role && needle && !parentMatched && normalizeSpace(item).toLowerCase().includes(needle)) {
          const ctx = context();
          // Text inside an element that has a ref (a draggable card, a
          // clickable generic): report that element, so the match can be acted on.
          const owner = parent && /\[ref=/.test(nodeLine(parent, refs)) ? parent : undefined;
          if (owner && reported.has(owner)) continue;
          let m: FindMatch = { line: textLine(normalizeSpace(item)) };
          if (owner) {
            reported.add(owner);
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
      if (item.frame !== undefined) out.frames.push(item.frame);
      let matched = false;
      if (!role || item.role === role) {
        if (!needle) matched = true;
        else if (mightContain(item.el, needle, NAME_FROM_CONTENT.has(item.role))) matched = nodeName(item).toLowerCase().includes(needle) || valueMatches(item, needle);
      }
      const headingBefore = heading;
      if (item.role === 'heading') heading = nodeKey(item, nodeName(item), undefined);
      const at = out.matches.length;
      const isRow = item.role === 'row';
      if (isRow) rows.push(item);
      walk(item.children, matched, item);
      // A name made of its content (a row, a cell) matches through the element inside: report that one.
      const inner = out.matches.length > at;
      if (matched && !(needle && inner)) {
        const line = nodeLine(item, refs);
        const ref = /\[ref=([^\]]+)\]/.exec(line)?.[1];
        const m: FindMatch = { line };
        if (ref) m.ref = ref;
        if (isRow) rows.pop();
        const ctx = item.role === 'heading' ? headingBefore : context();
        if (isRow) rows.push(item);
        if (ctx) m.context = ctx;
        out.matches.splice(at, 0, m);
      }
      if (isRow) rows.pop();
    }
  };
  walk(items, false);
  return out;
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
