// Sample data for the tests, shaped like what the Go side sends.
import type { ApprovalView, ProfileView, State, TimelineEntry } from '../types';

export const NOW = Date.now();

export function profile(over: Partial<ProfileView> = {}): ProfileView {
  return {
    id: 'p-work', label: 'Work', slug: 'work', status: 'connected', extVersion: '0.4.0',
    lastSeenMs: NOW, acting: false, tabs: [], ...over,
  };
}

export function state(over: Partial<State> = {}): State {
  return { version: '0.4.0', paused: false, profiles: [], pairing: [], refused: [], approvals: [], apps: [], connected: true, problem: '', ...over };
}

let nextId = 1;

export function entry(over: Partial<TimelineEntry> = {}): TimelineEntry {
  const id = over.id ?? nextId++;
  return {
    id, callId: `c${id}`, timeMs: NOW - 60_000 + id * 1000, client: 'claude-ai', token: '', rttMs: 0, profile: 'work', tab: 1, tool: 'browser_snapshot',
    args: '{}', class: 'read', site: 'example.com', decision: 'allow (read)', durationMs: 12.5,
    outcome: 'ok', error: '', ...over,
  };
}

export function approval(over: Partial<ApprovalView> = {}): ApprovalView {
  return {
    id: 'r1', tool: 'browser_type', class: 'sensitive', client: 'claude-ai', profile: 'work', tab: 2,
    sites: ['bank.example'], summary: 'ref=e12 text=«redacted»', sinceMs: NOW - 5_000, deadlineMs: NOW + 55_000,
    ...over,
  };
}
