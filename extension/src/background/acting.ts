// When the AI is acting on each tab: from the start of a tool call on the
// tab until its result is returned plus ACT_GRACE_MS. Only then (or while an
// answer is armed) do the page-world hooks answer dialogs by the AI's policy;
// otherwise dialogs are the browser's own (shared/page-hooks.ts). Kept in
// memory: a call does not outlive the service worker.

/** How long after a tool call's result the AI still counts as acting, in ms. */
export const ACT_GRACE_MS = 500;

const until = new Map<number, number>();
/** Tab id → the last acting-until value set (kept after stopActing: downloads look back). */
const lastSet = new Map<number, number>();

/** The Date.now() value until which the AI acts on tabId (0: it does not). */
export function actingUntil(tabId: number): number {
  const t = until.get(tabId) ?? 0;
  if (t !== 0 && t <= Date.now()) until.delete(tabId);
  return t > Date.now() ? t : 0;
}

/** Records that the AI acts on tabId until t (a Date.now() value). */
export function setActingUntil(tabId: number, t: number): void {
  until.set(tabId, t);
  lastSet.set(tabId, t);
}

/** Whether the AI acts on tabId, or stopped less than ms milliseconds ago. */
export function actedWithin(tabId: number, ms: number): boolean {
  const t = lastSet.get(tabId);
  return t !== undefined && Date.now() <= t + ms;
}

/** Forgets tabId (unshared or closed). */
export function stopActing(tabId: number): void {
  until.delete(tabId);
}
