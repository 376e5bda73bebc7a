// The window's state: what the daemon last said (State and the "state"
// event), the page shown, the status line, and the timeline's model. One
// Store lives as long as the window; start() subscribes to the events and
// does the initial load. Nothing here polls: after the first read, every
// change arrives as an event.
import { Painted, State as readState } from '../../wailsjs/go/app/App';
import { EventsOn } from '../../wailsjs/runtime/runtime';
import type { Notice, Page, State, TimelineEvent } from '../types';
import { errorText } from './format';
import { TimelineModel, type Reporter } from './timeline.svelte';

export interface ShownNotice extends Notice {
  id: number;
}

/** How long an info notice stays in the status line; errors stay until dismissed. */
export const INFO_NOTICE_MS = 12_000;

/** The result of an action run through Store.run. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: string };

export function emptyState(): State {
  return { version: '', paused: false, profiles: [], pairing: [], refused: [], approvals: [], apps: [], connected: false, problem: '' };
}

/** The pages in the nav's order: Ctrl+1 … Ctrl+5 (⌘ on macOS) open them. */
export const PAGES: readonly Page[] = ['profiles', 'timeline', 'approvals', 'connect', 'extension'];

export class Store implements Reporter {
  /** Replaced whole by each State() answer and "state" event, never changed in place. */
  state: State = $state.raw(emptyState());
  /** False until the first State() answer or "state" event. */
  ready = $state(false);
  page: Page = $state('profiles');
  notice: ShownNotice | null = $state(null);
  /** The clock for "last seen" and "time left", ticking each second. */
  now = $state(Date.now());
  /** Midnight of today, local time: changes once a day, not every tick. */
  today = $derived(new Date(this.now).setHours(0, 0, 0, 0));
  readonly timeline: TimelineModel;
  /** Held calls plus profiles waiting to pair: the Approvals badge. */
  waiting = $derived(this.state.approvals.length + this.state.pairing.length);

  #stateEvents = 0;
  /** The connection problem last shown; "" while connected. */
  #problem = '';
  #noticeSeq = 0;
  #noticeTimer: ReturnType<typeof setTimeout> | undefined;

  constructor() {
    this.timeline = new TimelineModel(this);
  }

  /** Subscribes to the daemon's events and loads; returns the teardown. */
  start(): () => void {
    const off = [
      EventsOn('state', (s: State) => {
        this.#stateEvents++;
        this.#showNewApprovals(s);
        this.#showConnection(s);
        this.state = s;
        this.ready = true;
      }),
      EventsOn('timeline', (ev: TimelineEvent) => this.timeline.onEvent(ev)),
      EventsOn('notice', (n: Notice) => this.notify(n.kind === 'error' ? 'error' : 'info', n.text)),
    ];
    void this.loadState();
    this.timeline.start();
    // The first painted frame, for the daemon's startup figures.
    const frame = requestAnimationFrame(() => void Painted().catch(() => {}));
    const clock = setInterval(() => (this.now = Date.now()), 1000);
    return () => {
      for (const f of off) f();
      cancelAnimationFrame(frame);
      clearInterval(clock);
      clearTimeout(this.#noticeTimer);
    };
  }

  async loadState(): Promise<void> {
    const events = this.#stateEvents;
    try {
      const s = await readState();
      // A "state" event that came meanwhile is newer than this answer.
      if (events === this.#stateEvents) {
        this.state = s;
        this.ready = true;
      }
    } catch (err) {
      this.fail(err);
    }
  }

  /**
   * A call held for approval brings the window up (the daemon shows it);
   * the queue is what the user needs then, so a held call that was not
   * there before opens the Approvals page.
   */
  #showNewApprovals(next: State): void {
    const known = new Set(this.state.approvals.map((a) => a.id));
    if (next.approvals.some((a) => !known.has(a.id))) this.page = 'approvals';
  }

  /**
   * While the daemon cannot be reached, the status line says why and what
   * to do (once per problem); once it is back, that error goes away.
   */
  #showConnection(next: State): void {
    if (!next.connected && next.problem && next.problem !== this.#problem) {
      this.#problem = next.problem;
      this.notify('error', next.problem);
    } else if (next.connected && this.#problem) {
      if (this.notice?.text === this.#problem) this.dismissNotice();
      this.#problem = '';
    }
  }

  /** Handles the page shortcuts; returns whether the key was one. */
  shortcut(e: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey'>): boolean {
    if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey) return false;
    const i = Number(e.key) - 1;
    if (!Number.isInteger(i) || i < 0 || i >= PAGES.length) return false;
    this.page = PAGES[i];
    return true;
  }

  notify(kind: 'info' | 'error', text: string): void {
    const id = ++this.#noticeSeq;
    this.notice = { id, kind, text };
    clearTimeout(this.#noticeTimer);
    if (kind === 'info') {
      this.#noticeTimer = setTimeout(() => {
        if (this.notice?.id === id) this.notice = null;
      }, INFO_NOTICE_MS);
    }
  }

  fail(err: unknown): void {
    this.notify('error', errorText(err));
  }

  dismissNotice(): void {
    clearTimeout(this.#noticeTimer);
    this.notice = null;
  }

  /** Runs an action; a rejection is shown in the status line and returned. */
  async run<T>(action: () => Promise<T>): Promise<Outcome<T>> {
    try {
      return { ok: true, value: await action() };
    } catch (err) {
      const error = errorText(err);
      this.notify('error', error);
      return { ok: false, error };
    }
  }
}
