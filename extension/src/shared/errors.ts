// Errors that travel to the daemon as a response's error: a protocol error
// code plus a message that tells the agent what to do next.
import type { Error as WireError } from '../protocol.gen';

export type ErrorCode = WireError['code'];

/** An error the agent can act on; code and message go on the wire as is. */
export class TetherError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'TetherError';
  }

  toWire(): WireError {
    return { code: this.code, message: this.message };
  }
}

/** Converts anything thrown into a wire error; unexpected ones become "internal". */
export function toWireError(err: unknown): WireError {
  if (err instanceof TetherError) return err.toWire();
  const detail = err instanceof Error ? err.message : String(err);
  return {
    code: 'internal',
    message: `The browser extension failed unexpectedly (${detail}). Retry once; if it fails again, call browser_snapshot and try another approach.`,
  };
}

/** The wire shape of an error, for replies between extension contexts. */
export function isWireError(v: unknown): v is WireError {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as WireError).code === 'string' &&
    typeof (v as WireError).message === 'string'
  );
}

// Message builders shared by several modules, so the wording stays the same.

export function staleRef(ref: string): TetherError {
  return new TetherError(
    'stale_ref',
    `Element ref ${ref} is no longer in the page (it was re-rendered or the page navigated). Call browser_snapshot again and use a fresh ref.`,
  );
}

export function unknownRef(ref: string): TetherError {
  return new TetherError(
    'unknown_ref',
    `Element ref ${ref} was never issued in this tab. Use a ref exactly as it appears in the latest snapshot of this tab (call browser_snapshot to get one).`,
  );
}

export function noSharedTab(): TetherError {
  return new TetherError(
    'no_shared_tab',
    'No tab is shared with Tether yet. Call browser_navigate with a URL to open one.',
  );
}

export function restrictedPage(url: string): TetherError {
  return new TetherError(
    'restricted_page',
    `Chrome does not let extensions read or control ${url || 'this page'} (browser-internal pages, the Chrome Web Store and other extensions are protected). Call browser_navigate with an http(s) URL instead.`,
  );
}
