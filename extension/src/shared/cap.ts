// The snapshot size cap, applied by the service worker to the stitched
// snapshot of a tab (its frames included): whole lines past the cap are left
// out and counted, and one last line says how to reach them.

/** SnapshotOptions.maxChars when 0 or absent. */
export const DEFAULT_MAX_CHARS = 40_000;

/** The last line of a cut snapshot; more: omitted is a lower bound (the walk stopped at its budget). */
export function noteLine(omitted: number, more = false): string {
  const what = more ? `more than ${omitted} elements not shown` : `${omitted} more elements left out`;
  return `- note: ${what}; use browser_find {text|role} or browser_snapshot {ref} on a landmark to see them`;
}

/**
 * Cuts text to at most maxChars (the note line included) at a line boundary.
 * omitted counts what was already left out (by the content scripts); every
 * cut line that is a node or a text run adds one. A note line ends the text
 * whenever anything was left out.
 */
export function capSnapshot(text: string, maxChars: number, omitted = 0, more = false): { text: string; omitted: number } {
  const cap = maxChars > 0 ? maxChars : DEFAULT_MAX_CHARS;
  const room = cap - noteLine(Math.max(omitted, 1) * 1000, true).length - 1;
  if (text.length <= cap && omitted === 0) return { text, omitted: 0 };
  let end = text.length;
  if (text.length > room) {
    end = text.lastIndexOf('\n', Math.max(room, 0));
    if (end < 0) end = 0;
    for (const line of text.slice(end).split('\n')) {
      const t = line.trimStart();
      if (t.startsWith('- ') && !t.startsWith('- /url:') && !t.startsWith('- /value:')) omitted++;
    }
  }
  if (omitted === 0) return { text, omitted: 0 };
  const kept = text.slice(0, end);
  const note = noteLine(omitted, more);
  return { text: kept ? `${kept}\n${note}` : note, omitted };
}
