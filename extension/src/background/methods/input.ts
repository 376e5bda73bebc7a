// Input into the page's elements: type, select_option, press_key (also
// trusted, through chrome.debugger) and file_upload.
import type { PageResult, TypeParams } from '../../protocol.gen';
import { TetherError } from '../../shared/errors';
import { parseKey } from '../../shared/keys';
import type { SnapshotShape, UploadFileData } from '../../shared/messages';
import { requireTrusted, trustedKey, withDebugger } from '../trusted';
import { act, checkScriptable, pageAct, scriptableFirst } from './act';
import { bool, snapShape, str, tabParams, type P } from './params';

const content = 'content' as const;

export function typeMethod(p: P, d: number): Promise<PageResult> {
  return scriptableFirst(p, () => type(typeParams(p), d, snapShape(p)));
}

function type(p: TypeParams, deadline: number, snap: SnapshotShape): Promise<PageResult> {
  return act(p.tab, { target: 'content', kind: 'type', ref: p.ref, text: p.text, submit: p.submit === true, docsIssued: 0, snap }, deadline);
}

export async function selectOptionMethod(p: P, d: number): Promise<PageResult> {
  const values = p.values;
  if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === 'string')) {
    throw new TetherError('bad_request', 'values must be a non-empty list of strings: option values or visible labels.');
  }
  return pageAct(p, { target: content, kind: 'select_option', ref: str(p, 'ref'), values: values as string[], docsIssued: 0, snap: snapShape(p) }, d);
}

export async function pressKeyMethod(p: P, d: number): Promise<PageResult> {
  const key = str(p, 'key', true);
  const spec = parseKey(key); // bad_request before anything runs
  if (bool(p, 'trusted')) {
    await requireTrusted();
    const tab = tabParams(p).tab;
    await checkScriptable(tab);
    return act(tab, { target: content, kind: 'settle', docsIssued: 0, snap: snapShape(p) }, d, (tabId) => withDebugger(tabId, (send) => trustedKey(send, spec)));
  }
  return pageAct(p, { target: content, kind: 'press_key', key, docsIssued: 0, snap: snapShape(p) }, d);
}

export async function fileUploadMethod(p: P, d: number): Promise<PageResult> {
  const files = p.files;
  if (!Array.isArray(files) || files.length === 0) throw new TetherError('bad_request', 'files must list at least one file ({name, mime, dataBase64}).');
  const checked: UploadFileData[] = files.map((f: unknown, i) => {
    const o = (typeof f === 'object' && f !== null ? f : {}) as P;
    if (typeof o.name !== 'string' || o.name === '' || typeof o.dataBase64 !== 'string' || (o.mime !== undefined && typeof o.mime !== 'string')) {
      throw new TetherError('bad_request', `files[${i}] must be {name: non-empty string, mime: string, dataBase64: string}.`);
    }
    return { name: o.name, mime: typeof o.mime === 'string' ? o.mime : '', dataBase64: o.dataBase64 };
  });
  return pageAct(p, { target: content, kind: 'file_upload', ref: str(p, 'ref'), files: checked, docsIssued: 0, snap: snapShape(p) }, d);
}

function typeParams(p: P): TypeParams {
  // No ref (or ""): the focused element.
  const ref = p.ref === undefined || p.ref === null ? '' : str(p, 'ref', true).trim();
  return { ...tabParams(p), ref, text: str(p, 'text', true), submit: bool(p, 'submit') };
}
