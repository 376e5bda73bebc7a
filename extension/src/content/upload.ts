// File upload: finds the <input type=file> that a ref names or controls, then
// sets files through a DataTransfer and fires input and change, so no native
// file chooser ever opens.
import { TetherError } from '../shared/errors';
import { shadowRootOf } from './shadow';
import { describe, isDisabledEl } from './snapshot';

export interface UploadFile {
  name: string;
  mime: string;
  dataBase64: string;
}

function isFileInput(el: Element | null | undefined): el is HTMLInputElement {
  return !!el && el.tagName === 'INPUT' && (el as HTMLInputElement).type === 'file';
}

function fileInputIn(el: Element | null): HTMLInputElement | null {
  if (!el) return null;
  if (isFileInput(el)) return el;
  return el.querySelector<HTMLInputElement>('input[type=file]') ?? (shadowRootOf(el)?.querySelector<HTMLInputElement>('input[type=file]') ?? null);
}

/**
 * The file input el names or controls: el itself, a label's control, a file
 * input inside el, one named by aria-controls, the control of a label around
 * el, the input el's own click handler opens (caught without opening the
 * chooser), or the only file input near el.
 */
export function findFileInput(el: Element): HTMLInputElement {
  const doc = el.ownerDocument;
  if (isFileInput(el)) return el;
  if (el.tagName === 'LABEL' && isFileInput((el as HTMLLabelElement).control)) return (el as HTMLLabelElement).control as HTMLInputElement;
  const inside = fileInputIn(el);
  if (inside) return inside;
  for (const id of (el.getAttribute('aria-controls') ?? '').split(/\s+/).filter(Boolean)) {
    const found = fileInputIn(doc.getElementById(id));
    if (found) return found;
  }
  const label = el.closest('label');
  if (label && isFileInput(label.control)) return label.control as HTMLInputElement;
  const caught = catchOpenedInput(el);
  if (caught) return caught;
  // The only file input in the nearest container that has one.
  for (let box = el.parentElement; box; box = box.parentElement) {
    const all = box.querySelectorAll<HTMLInputElement>('input[type=file]');
    if (all.length === 1) return all[0]!;
    if (all.length > 1) break;
  }
  throw new TetherError(
    'not_interactable',
    `Found no file input that the ${describe(el)} opens. Pass the ref of the upload button, its label or the <input type=file> itself (browser_find with role "button" or text "upload" helps).`,
  );
}

/**
 * Clicks el with a capturing listener that cancels any click on a file input
 * (which would open the chooser) and remembers that input.
 */
function catchOpenedInput(el: Element): HTMLInputElement | null {
  if (isDisabledEl(el)) return null;
  const view = el.ownerDocument.defaultView!;
  let caught: HTMLInputElement | null = null;
  const onClick = (e: Event) => {
    const t = e.composedPath()[0] ?? e.target;
    if (isFileInput(t as Element)) {
      caught = t as HTMLInputElement;
      e.preventDefault();
      e.stopImmediatePropagation();
    }
  };
  view.addEventListener('click', onClick, true);
  try {
    (el as HTMLElement).click?.();
  } finally {
    view.removeEventListener('click', onClick, true);
  }
  return caught;
}

export function decodeBase64(data: string): Uint8Array<ArrayBuffer> {
  let bin: string;
  try {
    bin = atob(data.replace(/\s+/g, ''));
  } catch {
    throw new TetherError('bad_request', 'A file\'s dataBase64 is not valid base64.');
  }
  const bytes = new Uint8Array(new ArrayBuffer(bin.length));
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes;
}

/** Sets files on the file input el names or controls and fires input and change. */
export function uploadFiles(el: Element, files: UploadFile[]): HTMLInputElement {
  const input = findFileInput(el);
  const view = input.ownerDocument.defaultView!;
  if (input.disabled) {
    throw new TetherError('not_interactable', `The file input of the ${describe(el)} is disabled. Call browser_snapshot to see when it becomes enabled.`);
  }
  if (files.length > 1 && !input.multiple) {
    throw new TetherError('bad_request', `The file input of the ${describe(el)} takes one file, but ${files.length} were given. Pass a single file.`);
  }
  const dt = new view.DataTransfer();
  for (const f of files) dt.items.add(new view.File([decodeBase64(f.dataBase64)], f.name, { type: f.mime || 'application/octet-stream', lastModified: Date.now() }));
  input.files = dt.files;
  input.dispatchEvent(new view.Event('input', { bubbles: true, composed: true }));
  input.dispatchEvent(new view.Event('change', { bubbles: true }));
  return input;
}
