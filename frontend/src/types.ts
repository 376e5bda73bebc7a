// The shapes the window works with. The Go types come from the generated
// models (wailsjs/go/models.ts, namespace `app`), as plain JSON data: the
// bound methods and the events deliver plain objects, not the generated
// classes, so only their fields are kept here.
import type { app } from '../wailsjs/go/models';

/** The JSON shape of a generated model: its fields, without the class's methods. */
export type Data<T> = T extends readonly (infer U)[]
  ? Data<U>[]
  : T extends object
    ? { [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: Data<T[K]> }
    : T;

export type State = Data<app.State>;
export type ProfileView = Data<app.ProfileView>;
export type TabView = Data<app.TabView>;
export type PairingView = Data<app.PairingView>;
export type ApprovalView = Data<app.ApprovalView>;
export type TimelineEntry = Data<app.TimelineEntry>;
export type TimelineFacets = Data<app.TimelineFacets>;
export type TimelineFilter = Data<app.TimelineFilter>;
export type ClientView = Data<app.ClientView>;
export type ClientOutcome = Data<app.ClientOutcome>;
export type ExtensionState = Data<app.ExtensionState>;

/** A timeline row's outcome; "" for a call still running. */
export type Outcome = 'ok' | 'error' | 'refused' | 'denied' | 'paused' | 'ignored';

export const OUTCOMES: readonly Outcome[] = ['ok', 'error', 'refused', 'denied', 'paused', 'ignored'];

/** The payload of the "timeline" event (Go: app.TimelineEvent). */
export interface TimelineEvent {
  /** "started": a call runs now (no id yet); "recorded": it is on the timeline; "resync": reload (sent with dropped > 0). */
  kind: 'started' | 'recorded' | 'resync';
  entry: TimelineEntry;
  /** Events missed just before this one; when > 0 the list is reloaded. */
  dropped: number;
}

/** The payload of the "notice" event (Go: app.Notice). */
export interface Notice {
  kind: 'info' | 'error';
  text: string;
}

/** An answer to a held call (Go: policy.Answer). */
export type Answer = 'allow_once' | 'always_allow_site' | 'deny';

/** The window's pages. */
export type Page = 'profiles' | 'timeline' | 'approvals' | 'connect' | 'extension';

/** The timeline's filters, as the user picks them ("" matches everything). */
export interface FilterChoice {
  client: string;
  profile: string;
  outcome: '' | Outcome;
}
