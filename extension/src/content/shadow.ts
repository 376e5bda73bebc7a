// Shadow roots as the content script sees them: open ones through
// el.shadowRoot, closed ones (attachShadow({mode: "closed"})) through
// chrome.dom.openOrClosedShadowRoot, which Chrome gives content scripts
// (Chrome 88+, no permission). Outside an extension (unit tests) only open
// roots are found.

type OpenOrClosed = (el: HTMLElement) => ShadowRoot | null;

function api(): OpenOrClosed | undefined {
  const c = (globalThis as { chrome?: { dom?: { openOrClosedShadowRoot?: OpenOrClosed } } }).chrome;
  return c?.dom?.openOrClosedShadowRoot;
}

/**
 * The elements attachShadow accepts besides custom elements (whose names
 * have a hyphen): no other element can host a shadow root, so no other is
 * asked for a closed one (a call per element costs a large page dearly).
 */
const HOSTS = ['article', 'aside', 'blockquote', 'body', 'div', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'main', 'nav', 'p', 'section', 'span'];
/** HOSTS as local names and as tag names (upper case in an HTML document, as they are in XHTML). */
const HOST_NAMES = new Set([...HOSTS, ...HOSTS.map((h) => h.toUpperCase())]);

/**
 * el's shadow root, open or closed; null when it has none. tag, when the
 * caller has read it, is el.tagName: no other name is read of an element
 * that cannot host a shadow root (most of a page's), and it is asked
 * nothing else.
 */
export function shadowRootOf(el: Element, tag = el.localName): ShadowRoot | null {
  if (!HOST_NAMES.has(tag) && !tag.includes('-')) return null;
  const open = el.shadowRoot;
  if (open) return open;
  const get = api();
  if (!get || !(el instanceof (el.ownerDocument.defaultView ?? globalThis).HTMLElement)) return null;
  try {
    return get(el as HTMLElement) ?? null;
  } catch {
    return null; // Not a possible shadow host.
  }
}
