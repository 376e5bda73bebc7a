// Element refs: short opaque names for elements, stable for as long as the
// element stays in its document and never reused for another element.
//
// Format: [f<frame>][d<doc>]e<n>.
//   - doc is the document's number in the profile: the service worker numbers
//     every document that asks for refs with one counter across all tabs and
//     frames (chrome.storage.session), so no two documents ever share a number
//     and a ref names its tab too. "d1" is left out: the very first document's
//     refs are "e<n>".
//   - frame is Chrome's frameId of the document's frame; left out for a tab's
//     top frame. Elements of same-origin iframes are reached from the top
//     document and carry its refs; cross-origin frames answer for themselves.
// Examples: e12, d7e12, f3d9e2.
// Parsed and formatted here (the service worker routes a ref by its parts);
// issued and resolved by content/refs.ts.

const REF_PATTERN = /^(?:f(\d+))?(?:d(\d+))?e(\d+)$/;

/** The parts of a well-formed ref. */
export interface ParsedRef {
  frame: number;
  doc: number;
  n: number;
}

/** Parses a ref; undefined when it is not one Tether could have issued. */
export function parseRef(ref: string): ParsedRef | undefined {
  const m = REF_PATTERN.exec(ref.trim());
  if (!m) return undefined;
  const parsed = { frame: m[1] === undefined ? 0 : Number(m[1]), doc: m[2] === undefined ? 1 : Number(m[2]), n: Number(m[3]) };
  // Only the canonical spelling is accepted: "d1e3" and "f0e3" were never issued.
  return formatRef(parsed.frame, parsed.doc, parsed.n) === ref.trim() ? parsed : undefined;
}

export function formatRef(frame: number, doc: number, n: number): string {
  return `${frame === 0 ? '' : `f${frame}`}${doc === 1 ? '' : `d${doc}`}e${n}`;
}
