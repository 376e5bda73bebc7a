// The fake clock of the connection tests, and waiting for the connection's
// attempt under way: a paired socket opens only after WebCrypto computed
// its named proof, which runs outside vitest's fake timers
// (DaemonConnection.settled).
import { vi } from 'vitest';
import type { DaemonConnection } from '../../src/offscreen/connection';

let current: DaemonConnection | undefined;

/** Makes conn the connection whose attempts advance and flush wait for. */
export function track(conn: DaemonConnection): void {
  current = conn;
}

/** Advances the fake clock by ms, then waits for the attempt under way. */
export async function advance(ms: number): Promise<void> {
  await vi.advanceTimersByTimeAsync(ms);
  await current?.settled();
  await vi.advanceTimersByTimeAsync(0);
}

/** Runs the timers due now, then waits for the attempt under way. */
export function flush(): Promise<void> {
  return advance(0);
}
