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

/** el's shadow root, open or closed; null when it has none. */
export function shadowRootOf(el: Element): ShadowRoot | null {
  if (el.shadowRoot) return el.shadowRoot;
  const get = api();
  if (!get || !(el instanceof (el.ownerDocument.defaultView ?? globalThis).HTMLElement)) return null;
  try {
    return get(el as HTMLElement) ?? null;
  } catch {
    return null; // Not a possible shadow host.
  }
}
