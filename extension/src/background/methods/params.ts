// Params validation shared by the methods: the wire types say what is
// allowed; these check it, and say what is wrong in words the agent can act on.
import type { TabOwner, TabParams } from '../../protocol.gen';
import { TetherError } from '../../shared/errors';
import type { SnapshotShape } from '../../shared/messages';

/** A method's params object, as the daemon sent it (unchecked). */
export type P = Record<string, unknown>;

export function tabParams(p: P): TabParams {
  const tab = p.tab;
  if (tab === undefined || tab === null) return {};
  if (typeof tab !== 'number' || !Number.isInteger(tab) || tab < 0) {
    throw new TetherError('bad_request', `tab must be a tab number from browser_tabs (a positive integer), not ${JSON.stringify(tab)}.`);
  }
  return tab === 0 ? {} : { tab };
}

export function str(p: P, key: string, allowEmpty = false): string {
  const v = p[key];
  if (typeof v !== 'string' || (!allowEmpty && v.trim() === '')) {
    throw new TetherError('bad_request', `${key} must be a ${allowEmpty ? '' : 'non-empty '}string.`);
  }
  return v;
}

export function bool(p: P, key: string): boolean {
  const v = p[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw new TetherError('bad_request', `${key} must be true or false.`);
  return v;
}

/** The owner param: the AI app (and session) a tab belongs to; undefined when absent. */
export function ownerParam(p: P): TabOwner | undefined {
  const o = p.owner;
  if (o === undefined || o === null) return undefined;
  if (typeof o !== 'object' || Array.isArray(o)) throw new TetherError('bad_request', 'owner must be an object {app, session?}.');
  const { app, session } = o as Record<string, unknown>;
  if (typeof app !== 'string' || (session !== undefined && typeof session !== 'string')) {
    throw new TetherError('bad_request', 'owner must be an object {app: string, session?: string}.');
  }
  return session ? { app, session } : { app };
}

/** A string param, or undefined when absent or "". */
export function optString(p: P, key: string): string | undefined {
  const v = p[key];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') throw new TetherError('bad_request', `${key} must be a string.`);
  return v;
}

/** A whole number param from 0 to max, or undefined when absent or 0. */
export function count(p: P, key: string, max: number): number | undefined {
  const v = p[key];
  if (v === undefined || v === null || v === 0) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) {
    throw new TetherError('bad_request', `${key} must be a whole number from 0 to ${max}, not ${JSON.stringify(v)}.`);
  }
  return v;
}

/** The snapshot options of any method's params (maxChars, urls, packOver; snapshot also ref and depth). */
export function snapShape(p: P): SnapshotShape {
  const shape: SnapshotShape = {};
  const maxChars = count(p, 'maxChars', 10_000_000);
  if (maxChars !== undefined) shape.maxChars = maxChars;
  if (p['urls'] === true) shape.urls = true;
  const packOver = count(p, 'packOver', 10_000_000);
  if (packOver !== undefined) shape.packOver = packOver;
  return shape;
}
