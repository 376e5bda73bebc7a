// browser_read: the rendered DOM as HTML, for the daemon to turn into
// Markdown. Unlike outerHTML it serializes what the user sees: shadow
// roots, open or closed, are inlined (slots filled with their assigned nodes), same-origin
// iframes are inlined, form controls carry their current values, links and
// images are absolute, and scripts, styles, templates, noscript, event-handler
// and style attributes and hidden elements are left out. A password field's
// value never appears.

import { shadowRootOf } from './shadow';

const DROPPED_TAGS = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'LINK', 'BASE', 'OBJECT', 'EMBED', 'CANVAS', 'SVG']);
const VOID_TAGS = new Set(['AREA', 'BR', 'COL', 'HR', 'IMG', 'INPUT', 'META', 'SOURCE', 'TRACK', 'WBR']);
const RAW_TEXT_TAGS = new Set(['TEXTAREA', 'TITLE']);
/** Attributes whose value is a URL made absolute. */
const URL_ATTRS = new Set(['href', 'src', 'action', 'poster', 'cite']);
/** Stops a runaway page (about 8 MB of text). */
export const READ_LIMIT = 8_000_000;

export function readDocument(doc: Document): string {
  const w = new HtmlWriter(doc);
  const root = doc.documentElement;
  if (!root) return '';
  w.out.push('<!DOCTYPE html>');
  w.element(root);
  return w.out.join('');
}

class HtmlWriter {
  readonly out: string[] = [];
  private size = 0;

  constructor(private readonly doc: Document) {}

  private push(s: string): void {
    this.size += s.length;
    this.out.push(s);
  }

  element(el: Element, inHead = false): void {
    if (this.size > READ_LIMIT) return;
    const tag = el.tagName.toUpperCase();
    if (DROPPED_TAGS.has(tag)) return;
    if (tag === 'HEAD') inHead = true;
    if (!inHead && tag !== 'HTML' && tag !== 'BODY' && this.hidden(el)) return;
    if (tag === 'INPUT' && (el as HTMLInputElement).type === 'hidden') return;
    const name = el.localName;
    this.push(`<${name}${this.attributes(el)}>`);
    if (VOID_TAGS.has(tag)) return;
    if (tag === 'TEXTAREA') {
      this.push(escapeText((el as HTMLTextAreaElement).value));
    } else if (tag === 'TITLE') {
      this.push(escapeText(el.textContent ?? ''));
    } else if (tag === 'IFRAME' || tag === 'FRAME') {
      this.frame(el as HTMLIFrameElement);
    } else if (!RAW_TEXT_TAGS.has(tag)) {
      this.children(el, inHead);
    }
    this.push(`</${name}>`);
  }

  private children(el: Element, inHead: boolean): void {
    let kids: Iterable<Node> = el.childNodes;
    const shadow = shadowRootOf(el);
    if (shadow) kids = shadow.childNodes;
    else if (el.tagName === 'SLOT') {
      const assigned = (el as HTMLSlotElement).assignedNodes();
      if (assigned.length) kids = assigned;
    }
    for (const node of Array.from(kids)) {
      if (node.nodeType === 3) this.push(escapeText((node as Text).data));
      else if (node.nodeType === 1) this.element(node as Element, inHead);
    }
  }

  private frame(frame: HTMLIFrameElement): void {
    let inner: Document | null = null;
    try {
      inner = frame.contentDocument;
    } catch {
      inner = null;
    }
    if (inner?.body) this.children(inner.body, false);
  }

  private hidden(el: Element): boolean {
    if (el.hasAttribute('hidden') && el.getAttribute('hidden') !== 'until-found') return true;
    if (el.getAttribute('aria-hidden') === 'true') return true;
    const view = el.ownerDocument.defaultView;
    if (!view) return false;
    const style = view.getComputedStyle(el);
    if (style.display === 'none' || style.visibility === 'hidden' || style.visibility === 'collapse') return true;
    return false;
  }

  private attributes(el: Element): string {
    let s = '';
    const tag = el.tagName.toUpperCase();
    const isInput = tag === 'INPUT';
    const input = el as HTMLInputElement;
    for (const a of Array.from(el.attributes)) {
      const n = a.name.toLowerCase();
      if (n.startsWith('on') || n === 'style' || n === 'srcdoc') continue;
      if (isInput && (n === 'value' || n === 'checked')) continue;
      if (tag === 'OPTION' && n === 'selected') continue;
      let v = a.value;
      if (URL_ATTRS.has(n)) v = this.absolute(v);
      s += ` ${a.name}="${escapeAttr(v)}"`;
    }
    if (isInput) {
      if (input.type === 'checkbox' || input.type === 'radio') {
        if (input.checked) s += ' checked';
      } else if (input.type !== 'password' && input.type !== 'file' && input.value !== '') {
        s += ` value="${escapeAttr(input.value)}"`;
      }
    }
    if (tag === 'OPTION' && (el as HTMLOptionElement).selected) s += ' selected';
    return s;
  }

  private absolute(v: string): string {
    const t = v.trim();
    if (!t || /^(javascript|data):/i.test(t)) return /^javascript:/i.test(t) ? '' : v;
    try {
      return new URL(t, this.doc.baseURI).href;
    } catch {
      return v;
    }
  }
}

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
