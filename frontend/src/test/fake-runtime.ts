// The fake of wailsjs/runtime/runtime for tests (vitest.config.ts swaps it
// in): EventsOn registers handlers, emit() plays an event from the "Go
// side".
import type * as Runtime from '../../wailsjs/runtime/runtime';

type Handler = (...data: unknown[]) => void;

const handlers = new Map<string, Set<Handler>>();

export const EventsOn: typeof Runtime.EventsOn = (eventName, callback) => {
  let set = handlers.get(eventName);
  if (!set) handlers.set(eventName, (set = new Set()));
  const h: Handler = (...data) => callback(...data);
  set.add(h);
  return () => {
    set.delete(h);
  };
};

/** Delivers an event to every handler registered for it. */
export function emit(eventName: string, data: unknown): void {
  for (const h of [...(handlers.get(eventName) ?? [])]) h(data);
}

/** How many handlers listen to eventName. */
export function listeners(eventName: string): number {
  return handlers.get(eventName)?.size ?? 0;
}

export function resetRuntime(): void {
  handlers.clear();
}
