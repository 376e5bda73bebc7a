// The shapes the window works with. The Go types come from the generated
// models (wailsjs/go/models.ts: namespace `apitype`, the daemon's local API
// contract, and `app`, the window's own State with which tabs the AI acts
// on), as plain JSON data: the
// bound methods and the events deliver plain objects, not the generated
// classes, so only their fields are kept here.
import type { apitype, app } from '../wailsjs/go/models';

/** The JSON shape of a generated model: its fields, without the class's methods. */
export type Data<T> = T extends readonly (infer U)[]
  ? Data<U>[]
  : T extends object
    ? { [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: Data<T[K]> }
    : T;

export type State = Data<app.State>;
export type ProfileView = Data<app.ProfileView>;
export type TabView = Data<app.TabView>;
export type PairingView = Data<apitype.PairingView>;
/** A browser refused recently that stopped asking (Go: apitype.RefusedView). */
export type RefusedView = Data<apitype.RefusedView>;
/** A held call (Go: apitype.Approval). */
export type ApprovalView = Data<apitype.Approval>;
export type TimelineEntry = Data<apitype.TimelineEntry>;
export type TimelineFacets = Data<apitype.TimelineFacets>;
export type TimelineFilter = Data<apitype.TimelineFilter>;
/** An MCP client on the Connect page (Go: apitype.Client). */
export type ClientView = Data<apitype.Client>;
export type ClientOutcome = Data<apitype.ClientOutcome>;
export type ExtensionState = Data<apitype.ExtensionState>;

/** A timeline row's outcome; "" for a call still running. */
export type Outcome = 'ok' | 'error' | 'refused' | 'denied' | 'paused' | 'interrupted' | 'ignored' | 'unrecorded';

export const OUTCOMES: readonly Outcome[] = ['ok', 'error', 'refused', 'denied', 'paused', 'interrupted', 'ignored', 'unrecorded'];

/** The payload of the "timeline" event (Go: app.TimelineEvent). */
export interface TimelineEvent {
  /** "started": a call runs now (no id yet); "finished": it is on the timeline; "resync": events may have been missed, reload. */
  kind: 'started' | 'finished' | 'resync';
  entry: TimelineEntry;
  /** On "resync", how many events the daemon dropped (0 after a reconnection). */
  dropped: number;
}

/** The payload of the "notice" event (Go: apitype.Notice). */
export interface Notice {
  kind: 'info' | 'error';
  text: string;
}

/** An answer to a held call (Go: apitype.AllowOnce, AlwaysAllowSite, Deny). */
export type Answer = 'allow_once' | 'always_allow_site' | 'deny';

/** The window's pages. */
export type Page = 'profiles' | 'timeline' | 'approvals' | 'connect' | 'extension';

/** The timeline's filters, as the user picks them ("" matches everything). */
export interface FilterChoice {
  client: string;
  profile: string;
  outcome: '' | Outcome;
}
