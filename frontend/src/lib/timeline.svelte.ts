// The timeline page's model: the rows shown (newest first), the filters and
// their choices, paging and the live rows from "timeline" events. It lives
// as long as the window, so calls recorded while another page is open are
// there when the timeline is opened.
import { ExportTimeline, Timeline, TimelineFacets } from '../../wailsjs/go/app/App';
import {
  OUTCOMES,
  type FilterChoice,
  type TimelineEntry,
  type TimelineEvent,
  type TimelineFacets as Facets,
  type TimelineFilter,
} from '../types';

/** Rows per Timeline() call. */
export const PAGE_SIZE = 100;
/** Live rows beyond this many push the oldest out ("Load older" brings them back). */
export const MAX_ROWS = 2000;

/** Where the model reports action errors and results (the status line). */
export interface Reporter {
  fail(err: unknown): void;
  notify(kind: 'info' | 'error', text: string): void;
}

/** a and b as one list, newest (highest id) first, each id once. */
function merge(a: readonly TimelineEntry[], b: readonly TimelineEntry[]): TimelineEntry[] {
  const byId = new Map<number, TimelineEntry>();
  for (const e of [...a, ...b]) if (!byId.has(e.id)) byId.set(e.id, e);
  return [...byId.values()].sort((x, y) => y.id - x.id);
}

export class TimelineModel {
  // Rows, facets and the selection are replaced whole, never changed in
  // place: raw state, no deep proxies over thousands of rows.
  rows: TimelineEntry[] = $state.raw([]);
  facets: Facets = $state.raw({ clients: [], profiles: [], outcomes: [...OUTCOMES] });
  filter: FilterChoice = $state({ client: '', profile: '', outcome: '' });
  /** True until the first load ends, and while the filters reload the list. */
  loading = $state(true);
  loadingOlder = $state(false);
  /** The last page was full: older rows may exist. */
  hasOlder = $state(false);
  selected: TimelineEntry | null = $state.raw(null);
  exporting = $state(false);

  readonly #report: Reporter;
  /** Bumped by every reload: answers to an older request are dropped. */
  #seq = 0;
  /** Rows recorded while a reload is in flight, merged into its answer. */
  #live: TimelineEntry[] | null = null;
  #facetsBusy = false;
  #facetsAgain = false;
  /** Clients and profiles already seen in events, so each asks for facets once. */
  #seen = new Set<string>();

  constructor(report: Reporter) {
    this.#report = report;
  }

  /** The initial load. */
  start(): void {
    void this.reload();
    void this.refreshFacets();
  }

  matches(e: TimelineEntry): boolean {
    const f = this.filter;
    return (
      (f.client === '' || e.client === f.client) &&
      (f.profile === '' || e.profile === f.profile) &&
      (f.outcome === '' || e.outcome === f.outcome)
    );
  }

  /** The filter to send to Timeline/ExportTimeline. */
  query(beforeId = 0, limit = PAGE_SIZE): TimelineFilter {
    const { client, profile, outcome } = this.filter;
    return { client, profile, outcome, beforeId, limit };
  }

  /** Handles a "timeline" event. */
  onEvent(ev: TimelineEvent): void {
    if (ev.kind === 'resync' || ev.dropped > 0) {
      // Missed events (a reconnection, or the daemon dropped some): the
      // list may lack rows, and the filters values.
      void this.reload();
      void this.refreshFacets();
      return;
    }
    // A started call has no row yet; the profiles page shows it (its tab
    // is "acting"), the list shows its row once it finished.
    if (ev.kind !== 'finished') return;
    const e = ev.entry;
    if (this.#isNewFacet('client', e.client, this.facets.clients) ||
        this.#isNewFacet('profile', e.profile, this.facets.profiles)) {
      void this.refreshFacets();
    }
    if (!this.matches(e)) return;
    if (this.#live) {
      this.#live.push(e);
      return;
    }
    let rows = merge([e], this.rows);
    if (rows.length > MAX_ROWS) {
      rows = rows.slice(0, MAX_ROWS);
      this.hasOlder = true;
    }
    this.rows = rows;
  }

  #isNewFacet(kind: string, value: string, known: readonly string[]): boolean {
    if (!value || known.includes(value)) return false;
    const key = `${kind}\u0000${value}`;
    if (this.#seen.has(key)) return false;
    this.#seen.add(key);
    return true;
  }

  /** Reads the newest page for the current filters. */
  async reload(): Promise<void> {
    const seq = ++this.#seq;
    this.loading = true;
    this.loadingOlder = false;
    this.#live = [];
    try {
      const rows = await Timeline(this.query());
      if (seq !== this.#seq) return;
      this.rows = merge(rows, this.#live);
      this.hasOlder = rows.length >= PAGE_SIZE;
      const sel = this.selected;
      if (sel && !this.rows.some((r) => r.id === sel.id)) this.selected = null;
    } catch (err) {
      if (seq === this.#seq) this.#report.fail(err);
    } finally {
      if (seq === this.#seq) {
        this.loading = false;
        this.#live = null;
      }
    }
  }

  /** Appends the page older than the last row. */
  async loadOlder(): Promise<void> {
    const last = this.rows.at(-1);
    if (this.loading || this.loadingOlder || !last) return;
    const seq = this.#seq;
    this.loadingOlder = true;
    try {
      const older = await Timeline(this.query(last.id));
      if (seq !== this.#seq) return;
      this.rows = merge(this.rows, older);
      this.hasOlder = older.length >= PAGE_SIZE;
    } catch (err) {
      if (seq === this.#seq) this.#report.fail(err);
    } finally {
      if (seq === this.#seq) this.loadingOlder = false;
    }
  }

  /** Changes some filters and reloads the list. */
  setFilter(change: Partial<FilterChoice>): Promise<void> {
    this.filter = { ...this.filter, ...change };
    return this.reload();
  }

  async refreshFacets(): Promise<void> {
    if (this.#facetsBusy) {
      this.#facetsAgain = true;
      return;
    }
    this.#facetsBusy = true;
    try {
      do {
        this.#facetsAgain = false;
        const f = await TimelineFacets();
        this.facets = {
          clients: f.clients ?? [],
          profiles: f.profiles ?? [],
          outcomes: f.outcomes?.length ? f.outcomes : [...OUTCOMES],
        };
      } while (this.#facetsAgain);
    } catch (err) {
      this.#report.fail(err);
    } finally {
      this.#facetsBusy = false;
    }
  }

  /** Saves every row matching the filters as JSON Lines, where the user picks. */
  async export(): Promise<void> {
    if (this.exporting) return;
    this.exporting = true;
    try {
      const q = this.query(0, 0);
      const path = await ExportTimeline(q);
      const filtered = q.client !== '' || q.profile !== '' || q.outcome !== '';
      if (path) this.#report.notify('info', `Timeline exported to ${path}${filtered ? ' (only the calls matching the filters)' : ''}`);
    } catch (err) {
      this.#report.fail(err);
    } finally {
      this.exporting = false;
    }
  }
}
