// The snapshot's placeholder for a cross-origin frame: content/snapshot.ts
// writes it, the service worker stitches the frame's own snapshot in its
// place (background/methods/page-result.ts).

/** Starts a placeholder line for a cross-origin frame: "<indent>\u0001frame=<frameId>". */
export const FRAME_MARK = '\u0001frame=';
