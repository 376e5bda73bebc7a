// The fake of the generated bindings (wailsjs/go/app/App) for tests
// (vitest.config.ts swaps it in): the same functions, answering from an
// in-memory backend that each test sets up, and recording every call.
import type * as Bindings from '../../wailsjs/go/app/App';
import { apitype, app } from '../../wailsjs/go/models';
import type {
  ClientOutcome,
  ClientView,
  ExtensionState,
  State as StateData,
  TimelineEntry,
  TimelineFacets as FacetsData,
  TimelineFilter,
} from '../types';

export type Method = keyof typeof Bindings;

export interface Backend {
  state: StateData;
  /** Every recorded row; Timeline() filters and pages them like Go does. */
  timeline: TimelineEntry[];
  facets: FacetsData;
  clients: ClientView[];
  extension: ExtensionState;
  /** What Connect/Disconnect answer (per client id); a default otherwise. */
  outcomes: Record<string, ClientOutcome>;
  /** ExportTimeline's answer: the saved path, "" when cancelled. */
  exportPath: string;
  /** Methods that reject, with the error text Go would return. */
  fail: Partial<Record<Method, string>>;
  /** Methods whose answer waits until release(name) is called. */
  hold: Set<Method>;
}

export function emptyBackend(): Backend {
  return {
    state: { version: '0.4.0', paused: false, profiles: [], pairing: [], refused: [], approvals: [], apps: [], connected: true, problem: '' },
    timeline: [],
    facets: { clients: [], profiles: [], outcomes: ['ok', 'error', 'refused', 'denied', 'paused', 'ignored'] },
    clients: [],
    extension: {
      connected: false, known: 0, dir: '/home/me/.config/tether/extension', written: false,
      writtenVersion: '', version: '0.4.0', id: 'abcdefghijklmnopabcdefghijklmnop', outdated: [], steps: [],
    },
    outcomes: {},
    exportPath: '',
    fail: {},
    hold: new Set(),
  };
}

export let backend: Backend = emptyBackend();

/** Every call made, in order. */
export const calls: { method: Method; args: unknown[] }[] = [];

const held = new Map<Method, (() => void)[]>();

export function resetApp(b: Partial<Backend> = {}): Backend {
  backend = { ...emptyBackend(), ...b };
  calls.length = 0;
  held.clear();
  return backend;
}

/** The arguments of each call to method. */
export function callsOf(method: Method): unknown[][] {
  return calls.filter((c) => c.method === method).map((c) => c.args);
}

/** Lets the held calls of method answer. */
export function release(method: Method): void {
  for (const go of held.get(method) ?? []) go();
  held.delete(method);
}

async function answer<T>(method: Method, args: unknown[], value: () => T): Promise<T> {
  calls.push({ method, args });
  if (backend.hold.has(method)) {
    await new Promise<void>((resolve) => {
      held.set(method, [...(held.get(method) ?? []), resolve]);
    });
  }
  const err = backend.fail[method];
  if (err !== undefined) throw err; // Wails rejects with the error's text
  // A copy, as if it had crossed the JSON bridge.
  return structuredClone(value());
}

function query(f: TimelineFilter): TimelineEntry[] {
  const rows = backend.timeline
    .filter((e) => (!f.client || e.client === f.client) && (!f.profile || e.profile === f.profile) &&
      (!f.outcome || e.outcome === f.outcome) && (!f.beforeId || e.id < f.beforeId))
    .sort((a, b) => b.id - a.id);
  return rows.slice(0, f.limit > 0 ? Math.min(f.limit, 1000) : 100);
}

function outcome(id: string, connect: boolean): ClientOutcome {
  const known = backend.outcomes[id];
  if (known) return known;
  const c = backend.clients.find((x) => x.id === id);
  if (!c) throw `unknown client ${id}`;
  return {
    message: `${c.name}: ${connect ? 'added' : 'removed'} Tether in ${c.path}`,
    changed: true,
    client: { ...c, connected: connect, mode: connect ? 'stdio' : '' },
  };
}

export const State: typeof Bindings.State = () =>
  answer('State', [], () => app.State.createFrom(backend.state));
export const SetPaused: typeof Bindings.SetPaused = (paused) => answer('SetPaused', [paused], () => undefined);
export const Answer: typeof Bindings.Answer = (id, a) => answer('Answer', [id, a], () => undefined);
export const ApproveProfile: typeof Bindings.ApproveProfile = (id) => answer('ApproveProfile', [id], () => undefined);
export const DenyProfile: typeof Bindings.DenyProfile = (id) => answer('DenyProfile', [id], () => undefined);
export const Timeline: typeof Bindings.Timeline = (f) =>
  answer('Timeline', [f], () => query(f).map((e) => apitype.TimelineEntry.createFrom(e)));
export const TimelineFacets: typeof Bindings.TimelineFacets = () =>
  answer('TimelineFacets', [], () => apitype.TimelineFacets.createFrom(backend.facets));
export const ExportTimeline: typeof Bindings.ExportTimeline = (f) =>
  answer('ExportTimeline', [f], () => backend.exportPath);
export const Clients: typeof Bindings.Clients = () =>
  answer('Clients', [], () => backend.clients.map((c) => apitype.Client.createFrom(c)));
export const Connect: typeof Bindings.Connect = (id) =>
  answer('Connect', [id], () => apitype.ClientOutcome.createFrom(outcome(id, true)));
export const Disconnect: typeof Bindings.Disconnect = (id) =>
  answer('Disconnect', [id], () => apitype.ClientOutcome.createFrom(outcome(id, false)));
export const Extension: typeof Bindings.Extension = () =>
  answer('Extension', [], () => apitype.ExtensionState.createFrom(backend.extension));
export const WriteExtension: typeof Bindings.WriteExtension = () =>
  answer('WriteExtension', [], () => {
    backend.extension = { ...backend.extension, written: true, writtenVersion: backend.extension.version };
    return apitype.ExtensionState.createFrom(backend.extension);
  });
export const RevealExtension: typeof Bindings.RevealExtension = () => answer('RevealExtension', [], () => undefined);
export const OpenTestBrowser: typeof Bindings.OpenTestBrowser = () => answer('OpenTestBrowser', [], () => undefined);
export const Painted: typeof Bindings.Painted = () => answer('Painted', [], () => undefined);
export const SetTabOwner: typeof Bindings.SetTabOwner = (profile, tab, app) =>
  answer('SetTabOwner', [profile, tab, app], () => undefined);

// Fails to typecheck when the generated bindings gain a method the fake lacks.
const _every: Record<Method, unknown> = {
  State, SetPaused, Answer, ApproveProfile, DenyProfile, Timeline, TimelineFacets, ExportTimeline,
  Clients, Connect, Disconnect, Extension, WriteExtension, RevealExtension, OpenTestBrowser, Painted, SetTabOwner,
};
void _every;
