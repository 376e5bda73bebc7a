// Controls hidden until CSS :hover. Script cannot set :hover, so a row's
// "More options" button that a `.row:hover .more { visibility: visible }`
// rule reveals would be missing from the snapshot. When a snapshot is taken,
// the document's style sheets are scanned (a bounded number of rules) for
// :hover rules that change display, visibility or opacity; the elements their
// selectors name with :hover left out are the ones a hover reveals. The
// walker lists those that are hidden now, marked [hidden until hover].

/** Style rules looked at per snapshot, at most. */
export const MAX_RULES = 5000;
/** Revealing selectors run per snapshot, at most. */
export const MAX_SELECTORS = 200;

/** Shadow roots whose own style sheets are scanned per snapshot, at most. */
export const MAX_SHADOW_ROOTS = 50;

/**
 * The elements of doc (a document, or a shadow root with its own style
 * sheets) that a :hover rule shows: a set, empty when there are none.
 */
export function hoverRevealed(doc: Document | ShadowRoot): Set<Element> {
  const selectors = new Set<string>();
  let seen = 0;
  const scan = (rules: CSSRuleList) => {
    for (const rule of Array.from(rules)) {
      if (seen >= MAX_RULES || selectors.size >= MAX_SELECTORS) return;
      seen++;
      const style = (rule as CSSStyleRule).style;
      const selectorText = (rule as CSSStyleRule).selectorText;
      if (typeof selectorText === 'string' && style) {
        if (selectorText.includes(':hover') && reveals(style)) {
          for (const part of splitSelectors(selectorText)) {
            const stripped = withoutHover(part, doc.nodeType === 11 /* DOCUMENT_FRAGMENT_NODE */);
            if (stripped) selectors.add(stripped);
          }
        }
      } else if ('cssRules' in rule) {
        // @media, @supports, @layer, @container: their rules apply to this page too (close enough).
        scan((rule as CSSGroupingRule).cssRules);
      }
    }
  };
  for (const sheet of [...Array.from(doc.styleSheets ?? []), ...(doc.adoptedStyleSheets ?? [])]) {
    let rules: CSSRuleList;
    try {
      rules = sheet.cssRules;
    } catch {
      continue; // A cross-origin style sheet: its rules cannot be read.
    }
    scan(rules);
  }
  const out = new Set<Element>();
  for (const sel of selectors) {
    try {
      for (const el of Array.from(doc.querySelectorAll(sel))) out.add(el);
    } catch {
      // A selector this engine does not take (vendor pseudo-classes).
    }
  }
  return out;
}

function reveals(style: CSSStyleDeclaration): boolean {
  const display = style.getPropertyValue('display');
  const visibility = style.getPropertyValue('visibility');
  const opacity = style.getPropertyValue('opacity');
  return (display !== '' && display !== 'none') || visibility === 'visible' || (opacity !== '' && Number(opacity) > 0);
}

/** Splits a selector list at its top-level commas. */
function splitSelectors(list: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const c = list[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === ',' && depth === 0) {
      out.push(list.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(list.slice(start).trim());
  return out.filter((s) => s.includes(':hover'));
}

/**
 * The selector with :hover removed (`.row:hover .more` → `.row .more`); ''
 * for pseudo-element targets. In a shadow root's sheet (inShadow) a leading
 * :host(…) goes too: the host is outside the root's querySelectorAll.
 */
export function withoutHover(selector: string, inShadow = false): string {
  if (selector.includes('::') || /:(before|after)\b/.test(selector)) return '';
  if (inShadow) {
    if (!/^:host\b/.test(selector)) return withoutHover(selector);
    selector = selector.replace(/^:host(\([^)]*\))?\s*>?\s*/, '');
    if (!selector) return '';
  }
  return selector
    .replace(/(^|[\s>+~(,]):hover\b/g, '$1*')
    .replace(/:hover\b/g, '')
    .trim();
}
