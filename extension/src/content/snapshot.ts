// The ARIA snapshot of a document, in Playwright's aria-snapshot style:
//
//   - navigation "Main":
//     - link "Docs" [ref=e7]:
//       - /url: /docs
//   - textbox "Email" [ref=e3]: a@b.c
//   - checkbox "Remember me" [checked] [ref=e9]
//   - paragraph: Hello world
//
// One DOM walk builds a tree of role nodes and text runs; roles and names come
// from dom-accessibility-api and are computed only for nodes that are printed.
// Hidden content is skipped, role-less wrappers are flattened, and interactive
// elements get a ref from the document's RefRegistry.
import { computeAccessibleName, getRole } from 'dom-accessibility-api';
import type { RefRegistry } from './refs';

/** Longest text run or name printed before it is cut with "…". */
export const TEXT_LIMIT = 200;
/** What a password field shows instead of its value. */
export const PASSWORD_MASK = '••••';

interface AriaNode {
  role: string;
  name: string;
  props: string[];
  ref?: string;
  value?: string;
  url?: string;
  children: Item[];
}
type Item = string | AriaNode;

const SKIPPED_TAGS = new Set([
  'SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'TITLE', 'BASE',
]);
const INTERACTIVE_ROLES = new Set([
  'button', 'link', 'textbox', 'searchbox', 'combobox', 'checkbox', 'radio', 'switch', 'slider',
  'spinbutton', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'option', 'tab', 'treeitem',
  'listbox', 'gridcell', 'scrollbar',
]);
const VALUE_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider']);
const CHECKABLE_ROLES = new Set(['checkbox', 'radio', 'switch', 'menuitemcheckbox', 'menuitemradio']);
/** Roles whose subtree is their value or name: children are not printed. */
const LEAF_ROLES = new Set(['textbox', 'searchbox', 'spinbutton', 'slider', 'img', 'progressbar', 'meter', 'separator', 'scrollbar']);
/** Implicit roles dom-accessibility-api 0.7 does not map. */
const FALLBACK_ROLES: Record<string, string> = { P: 'paragraph', BLOCKQUOTE: 'blockquote', CAPTION: 'caption', CODE: 'code' };
/** Marks a block-box boundary between text runs: they are printed apart. */
const BREAK = '\u0000';
const INTERACTIVE_TAGS = new Set(['BUTTON', 'SELECT', 'TEXTAREA', 'SUMMARY']);

export function snapshot(doc: Document, refs: RefRegistry): string {
  const root = doc.body ?? doc.documentElement;
  if (!root) return '';
  const items: Item[] = [];
  const walker = new Walker(doc, refs);
  walker.visitChildren(root, items, true);
  const lines: string[] = [];
  render(normalize(items), '', lines);
  return lines.join('\n');
}

/** The role printed for el, or null for a role-less wrapper. */
export function roleOf(el: Element): string | null {
  const role = getRole(el) ?? FALLBACK_ROLES[el.tagName] ?? null;
  if (role === null && el.tagName === 'INPUT' && (el as HTMLInputElement).type === 'password') return 'textbox';
  if (isEditableHost(el) && (role === null || role === 'generic')) return 'textbox';
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
  private readonly view: Window & typeof globalThis;

  constructor(
    doc: Document,
    private readonly refs: RefRegistry,
  ) {
    this.view = doc.defaultView as Window & typeof globalThis;
  }

  visitChildren(el: Element, out: Item[], textVisible: boolean): void {
    const kids = childNodesOf(el);
    for (const child of kids) this.visit(child, out, textVisible);
  }

  private visit(node: Node, out: Item[], textVisible: boolean): void {
    if (node.nodeType === 3 /* TEXT_NODE */) {
      if (textVisible) out.push((node as Text).data);
      return;
    }
    if (node.nodeType !== 1 /* ELEMENT_NODE */) return;
    const el = node as Element;
    if (SKIPPED_TAGS.has(el.tagName)) return;
    if (el.getAttribute('aria-hidden') === 'true' || el.hasAttribute('inert')) return;
    if (el.hasAttribute('hidden') && el.getAttribute('hidden') !== 'until-found') return;
    if (el.tagName === 'INPUT' && (el as HTMLInputElement).type === 'hidden') return;
    if (el.tagName === 'BR') {
      out.push('\n');
      return;
    }
    const style = this.view.getComputedStyle(el);
    if (style.display === 'none') return;
    const isOption = el.tagName === 'OPTION' || el.tagName === 'OPTGROUP';
    // checkVisibility also catches closed <details> and content-visibility:hidden
    // ancestors; it is false for boxless display:contents elements and for the
    // options of a drop-down <select>, so those skip it.
    if (style.display !== 'contents' && !isOption && typeof el.checkVisibility === 'function' && !el.checkVisibility()) {
      return;
    }
    const selfVisible = style.visibility !== 'hidden' && style.visibility !== 'collapse';
    const role = selfVisible ? roleOf(el) : null;
    const interactive = selfVisible && isInteractive(el, role);

    if (role === null && !interactive) {
      // A wrapper: its children move up. Block boxes separate text runs.
      const block = style.display !== '' && !/^inline/.test(style.display) && style.display !== 'contents';
      if (block) out.push(BREAK);
      this.visitChildren(el, out, selfVisible);
      if (block) out.push(BREAK);
      return;
    }

    const aria: AriaNode = { role: role ?? 'generic', name: '', props: [], children: [] };
    if (role !== null && role !== 'generic') aria.name = clip(normalizeSpace(safeName(el)));
    if (interactive) aria.ref = this.refs.refFor(el);
    addProps(el, aria);

    if (el.tagName === 'A' && el.hasAttribute('href')) {
      const href = el.getAttribute('href')!.trim();
      if (href && !/^javascript:/i.test(href)) aria.url = clip(href);
    }

    if (VALUE_ROLES.has(aria.role) || isEditableHost(el)) {
      const value = valueOf(el);
      if (value !== undefined) aria.value = value;
    }
    if (el.tagName === 'SELECT') {
      // The options are the children; the value is the selected one.
      aria.value = undefined;
      this.visitChildren(el, aria.children, true);
    } else if (!LEAF_ROLES.has(aria.role) && !isEditableHost(el) && el.tagName !== 'INPUT' && el.tagName !== 'TEXTAREA') {
      this.visitChildren(el, aria.children, selfVisible);
    }
    aria.children = normalize(aria.children);
    // A name computed from the content repeats it: print only the name.
    if (aria.name && aria.children.every((c) => typeof c === 'string') && aria.children.join(' ') === aria.name) {
      aria.children = [];
    }
    out.push(aria);
  }
}

function childNodesOf(el: Element): Iterable<Node> {
  if (el.shadowRoot) return el.shadowRoot.childNodes;
  if (el.tagName === 'SLOT') {
    const assigned = (el as HTMLSlotElement).assignedNodes();
    if (assigned.length) return assigned;
  }
  return el.childNodes;
}

function isInteractive(el: Element, role: string | null): boolean {
  if (role !== null && INTERACTIVE_ROLES.has(role)) return true;
  if (INTERACTIVE_TAGS.has(el.tagName)) return true;
  if (el.tagName === 'A' && el.hasAttribute('href')) return true;
  if (el.tagName === 'INPUT') return true;
  if (el.hasAttribute('tabindex') || el.hasAttribute('onclick')) return true;
  return isEditableHost(el);
}

function addProps(el: Element, node: AriaNode): void {
  const { role, props } = node;
  if (CHECKABLE_ROLES.has(role)) {
    const checked = checkedState(el);
    if (checked === 'mixed') props.push('[checked=mixed]');
    else if (checked) props.push('[checked]');
  }
  if (isDisabledEl(el)) props.push('[disabled]');
  if (el.getAttribute('aria-expanded') === 'true') props.push('[expanded]');
  else if (el.tagName === 'SUMMARY' && (el.parentElement as HTMLDetailsElement | null)?.open) props.push('[expanded]');
  if (role === 'heading') {
    const level = Number(el.getAttribute('aria-level')) || Number(/^H([1-6])$/.exec(el.tagName)?.[1]) || 2;
    props.push(`[level=${level}]`);
  }
  const pressed = el.getAttribute('aria-pressed');
  if (pressed === 'true') props.push('[pressed]');
  else if (pressed === 'mixed') props.push('[pressed=mixed]');
  if (el.getAttribute('aria-selected') === 'true' || (el.tagName === 'OPTION' && (el as HTMLOptionElement).selected)) {
    props.push('[selected]');
  }
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

/** Disabled natively (including by a disabled fieldset) or by aria-disabled on it or an ancestor. */
export function isDisabledEl(el: Element): boolean {
  try {
    if (el.matches(':disabled')) return true;
  } catch {
    // Some DOMs do not know :disabled; fall through.
    if ((el as HTMLButtonElement).disabled === true) return true;
  }
  return el.closest('[aria-disabled="true"]') !== null;
}

function valueOf(el: Element): string | undefined {
  if (el.tagName === 'INPUT') {
    const input = el as HTMLInputElement;
    if (input.type === 'password') return input.value ? PASSWORD_MASK : undefined;
    if (input.type === 'checkbox' || input.type === 'radio' || input.type === 'button' || input.type === 'submit' || input.type === 'reset' || input.type === 'file' || input.type === 'image') {
      return undefined;
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

function safeName(el: Element): string {
  try {
    return computeAccessibleName(el);
  } catch {
    return el.getAttribute('aria-label') ?? '';
  }
}

/** Merges adjacent text runs, collapses white space and drops empty runs. */
function normalize(items: Item[]): Item[] {
  const out: Item[] = [];
  let text = '';
  const flush = () => {
    const t = normalizeSpace(text);
    if (t) out.push(t);
    text = '';
  };
  for (const item of items) {
    if (item === BREAK) flush();
    else if (typeof item === 'string') text += item;
    else {
      flush();
      out.push(item);
    }
  }
  flush();
  return out;
}

function normalizeSpace(s: string): string {
  return s.replace(/[\s\u00a0]+/g, ' ').trim();
}

export function clip(s: string, limit = TEXT_LIMIT): string {
  return s.length > limit ? s.slice(0, limit - 1).trimEnd() + '…' : s;
}

function render(items: Item[], indent: string, lines: string[]): void {
  for (const item of items) {
    if (typeof item === 'string') {
      lines.push(`${indent}- text: ${yamlText(clip(item))}`);
      continue;
    }
    let key = item.role;
    if (item.name) key += ' ' + JSON.stringify(item.name);
    for (const p of item.props) key += ' ' + p;
    if (item.ref) key += ` [ref=${item.ref}]`;
    const kids = item.children;
    if (item.url === undefined && kids.length === 0) {
      lines.push(item.value !== undefined ? `${indent}- ${key}: ${yamlText(item.value)}` : `${indent}- ${key}`);
    } else if (item.url === undefined && kids.length === 1 && typeof kids[0] === 'string' && item.value === undefined) {
      lines.push(`${indent}- ${key}: ${yamlText(clip(kids[0]))}`);
    } else {
      lines.push(`${indent}- ${key}:`);
      if (item.value !== undefined) lines.push(`${indent}  - /value: ${yamlText(item.value)}`);
      if (item.url !== undefined) lines.push(`${indent}  - /url: ${yamlText(item.url)}`);
      render(kids, indent + '  ', lines);
    }
  }
}

/** Quotes a scalar only when plain YAML would misread it. */
function yamlText(s: string): string {
  if (s === '' || /^[\s\-?:,[\]{}#&*!|>'"%@`]/.test(s) || /: | #|:$/.test(s) || /^(true|false|null|~|[-+.\d][\d.eE+-]*)$/i.test(s)) {
    return JSON.stringify(s);
  }
  return s;
}
