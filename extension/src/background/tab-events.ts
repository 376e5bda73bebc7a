// tabs_changed: every change to the shared tabs is pushed to the daemon
// (through the offscreen document, which owns the socket). Bursts are
// coalesced: within a short window the changes of one tab collapse into the
// most significant one, and every frame carries the complete list of shared
// tabs as it is when the burst is flushed, so the final state always arrives.
import type { TabInfo, TabsChanged } from '../protocol.gen';

export type TabChange = TabsChanged['change'];

/** Later changes of a tab replace earlier ones unless the earlier one ranks higher. */
const RANK: Record<TabChange, number> = {
  opened: 3,
  closed: 3,
  shared: 3,
  unshared: 3,
  navigated: 2,
  owner: 2,
  title: 1,
  activated: 1,
};

/** How long a burst may grow before it is flushed. */
export const COALESCE_MS = 100;

export interface CoalescerDeps {
  listTabs(): Promise<TabInfo[]>;
  send(frame: TabsChanged): Promise<void> | void;
}

export class TabsChangedCoalescer {
  /** Tab number → its pending change, in first-change order. */
  private pending = new Map<number, TabChange>();
  private timer?: ReturnType<typeof setTimeout>;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: CoalescerDeps,
    private readonly windowMs = COALESCE_MS,
  ) {}

  add(change: TabChange, tab: number): void {
    const prev = this.pending.get(tab);
    if (prev === undefined || RANK[change] >= RANK[prev]) {
      // Keep the tab's place in the order; only its change moves on.
      this.pending.set(tab, change);
    }
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flushing = this.flushing.then(() => this.flush()).catch((err: unknown) => console.error('tether: tabs_changed', err));
    }, this.windowMs);
  }

  /**
   * Sends the pending changes now, after any flush under way, and resolves
   * when they are handed to the offscreen document. Called before every
   * response to the daemon, so the daemon's registry of shared tabs is never
   * behind a reply (a tab an action closed is gone from browser_tabs at once).
   */
  flushNow(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.flushing = this.flushing.then(() => this.flush()).catch((err: unknown) => console.error('tether: tabs_changed', err));
    return this.flushing;
  }

  /** Sends the pending changes now (also used by tests). */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending];
    this.pending.clear();
    const tabs = await this.deps.listTabs();
    for (const [tab, change] of batch) await this.deps.send({ type: 'tabs_changed', change, tab, tabs });
  }
}
