import { beforeEach, describe, expect, it, vi } from 'vitest';
import { click, typeText } from '../src/content/actions';
import { ContentAgent } from '../src/content/agent';
import { TetherError } from '../src/shared/errors';

beforeEach(() => {
  document.body.innerHTML = '';
});

/**
 * Installs a value tracker the way React does: an own `value` property on the
 * instance records what the page set; an input event whose value equals the
 * tracked one is ignored. Only a write through the prototype's setter (what a
 * user's typing does) is seen as a change.
 */
function reactLikeInput(input: HTMLInputElement, onChange: (v: string) => void): void {
  const native = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!;
  let tracked = native.get!.call(input) as string;
  Object.defineProperty(input, 'value', {
    configurable: true,
    get() {
      return native.get!.call(this);
    },
    set(v: string) {
      tracked = String(v);
      native.set!.call(this, v);
    },
  });
  input.addEventListener('input', () => {
    const actual = native.get!.call(input) as string;
    if (actual === tracked) return; // React: "no change", onChange is not called
    tracked = actual;
    onChange(actual);
  });
}

describe('typeText', () => {
  it('changes a React-style controlled input through the native setter', () => {
    document.body.innerHTML = '<input id="name" value="old">';
    const input = document.getElementById('name') as HTMLInputElement;
    const changes: string[] = [];
    reactLikeInput(input, (v) => changes.push(v));
    const events: string[] = [];
    input.addEventListener('input', (e) => events.push(`${e.type}:${(e as InputEvent).inputType}:${e.bubbles}`));
    input.addEventListener('change', (e) => events.push(`${e.type}:${e.bubbles}`));

    typeText(input, 'Ada', false);

    expect(changes).toEqual(['Ada']);
    expect(input.value).toBe('Ada');
    expect(events).toEqual(['input:insertText:true', 'change:true']);
    expect(document.activeElement).toBe(input);
  });

  it('works even when the instance overrides value with something that swallows writes', () => {
    document.body.innerHTML = '<textarea id="t"></textarea>';
    const ta = document.getElementById('t') as HTMLTextAreaElement;
    Object.defineProperty(ta, 'value', { configurable: true, get: () => 'frozen', set: () => undefined });
    typeText(ta, 'line one', false);
    const native = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')!;
    expect(native.get!.call(ta)).toBe('line one');
  });

  it('replaces the text of a contenteditable element', () => {
    document.body.innerHTML = '<div id="ed" contenteditable="true"><p>old <b>text</b></p></div>';
    const ed = document.getElementById('ed')!;
    const inputs: string[] = [];
    ed.addEventListener('input', () => inputs.push(ed.textContent ?? ''));
    typeText(ed, 'new text', false);
    expect(ed.textContent).toBe('new text');
    expect(inputs.at(-1)).toBe('new text');
  });

  it('submits the form with Enter unless a keydown handler cancels it', () => {
    document.body.innerHTML = '<form id="f"><input id="q" name="q"><button>Go</button></form>';
    const form = document.getElementById('f') as HTMLFormElement;
    const q = document.getElementById('q') as HTMLInputElement;
    const submitted: string[] = [];
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      submitted.push(new FormData(form).get('q') as string);
    });
    const keys: string[] = [];
    q.addEventListener('keydown', (e) => keys.push(e.key));
    typeText(q, 'kittens', true);
    expect(keys).toEqual(['Enter']);
    expect(submitted).toEqual(['kittens']);

    q.addEventListener('keydown', (e) => e.preventDefault());
    typeText(q, 'puppies', true);
    expect(submitted).toEqual(['kittens']);
  });

  it('refuses elements that take no text', () => {
    document.body.innerHTML = '<input type="checkbox" id="c"><input id="d" disabled><p id="p">text</p>';
    for (const id of ['c', 'd', 'p']) {
      expect(() => typeText(document.getElementById(id)!, 'x', false)).toThrowError(TetherError);
      try {
        typeText(document.getElementById(id)!, 'x', false);
      } catch (err) {
        expect((err as TetherError).code).toBe('not_interactable');
      }
    }
  });
});

describe('click', () => {
  it('sends pointer and mouse events ending in a click at the element', () => {
    document.body.innerHTML = '<button id="b">Save</button>';
    const b = document.getElementById('b')!;
    const seen: string[] = [];
    for (const t of ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click']) b.addEventListener(t, (e) => seen.push(e.type));
    click(b);
    expect(seen).toEqual(['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click']);
  });

  it('refuses a disabled button with what to do next', () => {
    document.body.innerHTML = '<button id="b" disabled>Sign in</button>';
    expect(() => click(document.getElementById('b')!)).toThrowError(/button "Sign in" is disabled.*browser_snapshot/);
  });
});

describe('ContentAgent', () => {
  it('clicks by ref, waits for the page to settle and returns the new snapshot', async () => {
    document.body.innerHTML = '<button id="b">Save</button><p id="s">Status: idle</p>';
    document.getElementById('b')!.addEventListener('click', () => {
      setTimeout(() => (document.getElementById('s')!.textContent = 'Status: saved'), 20);
    });
    const register = vi.fn(async () => 1);
    const agent = new ContentAgent(document, register, { quietMs: 50, maxMs: 1000 });
    const first = await agent.handle({ target: 'content', kind: 'snapshot', docsIssued: 1 });
    expect(first.ok && 'page' in first && first.page.snapshot).toBe('- button "Save" [ref=e1]\n- paragraph: "Status: idle"');
    const after = await agent.handle({ target: 'content', kind: 'click', ref: 'e1', docsIssued: 1 });
    expect(after.ok && 'page' in after && after.page.snapshot).toBe('- button "Save" [ref=e1]\n- paragraph: "Status: saved"');
    expect(register).toHaveBeenCalledTimes(1);

    document.getElementById('b')!.remove();
    const stale = await agent.handle({ target: 'content', kind: 'click', ref: 'e1', docsIssued: 1 });
    // Every answer names the document, so the service worker routes its refs here.
    expect(stale).toEqual({ ok: false, error: expect.objectContaining({ code: 'stale_ref' }), doc: 1 });
  });

  it('passes page-state to the page-world hooks and answers it at once, without its number', async () => {
    document.body.innerHTML = '<button>Save</button>';
    const pageState = vi.fn();
    const agent = new ContentAgent(document, vi.fn(async () => 3), { quietMs: 10, maxMs: 500 }, undefined, pageState);
    await agent.handle({ target: 'content', kind: 'snapshot', docsIssued: 3 });
    const reply = agent.handle({ target: 'content', kind: 'page-state', queue: [], actingUntil: 0 });
    expect(pageState).toHaveBeenCalledWith({ queue: [], actingUntil: 0 });
    expect(await reply).toEqual({ ok: true, pong: true });
  });

  it('says nothing of a document number before it has one', async () => {
    const agent = new ContentAgent(document, vi.fn(async () => 3));
    expect(await agent.handle({ target: 'content', kind: 'ping' })).toEqual({ ok: true, pong: true });
    await agent.handle({ target: 'content', kind: 'snapshot', docsIssued: 3 });
    expect(await agent.handle({ target: 'content', kind: 'ping' })).toEqual({ ok: true, pong: true, doc: 3 });
  });

  it('keeps its number and refs when a restored document claims them back', async () => {
    document.body.innerHTML = '<button id="b">Save</button>';
    let clicks = 0;
    document.getElementById('b')!.addEventListener('click', () => clicks++);
    const register = vi.fn(async (claim?: number) => ({ doc: claim ?? 4, frame: 0 }));
    const agent = new ContentAgent(document, register, { quietMs: 10, maxMs: 500 });
    const first = await agent.handle({ target: 'content', kind: 'snapshot', docsIssued: 4 });
    expect(first.ok && 'page' in first && first.page.snapshot).toBe('- button "Save" [ref=d4e1]');
    agent.reclaim();
    const clicked = await agent.handle({ target: 'content', kind: 'click', ref: 'd4e1', docsIssued: 6 });
    expect(clicked).toMatchObject({ ok: true, doc: 4 });
    expect(clicks).toBe(1);
    expect(register.mock.calls).toEqual([[], [4]]);
  });

  it('takes a new number when the service worker no longer knows the old one: old refs are stale, new ones work', async () => {
    document.body.innerHTML = '<button id="b">Save</button>';
    let clicks = 0;
    document.getElementById('b')!.addEventListener('click', () => clicks++);
    const register = vi.fn(async (claim?: number) => ({ doc: claim === undefined ? 4 : 9, frame: 0 }));
    const agent = new ContentAgent(document, register, { quietMs: 10, maxMs: 500 });
    await agent.handle({ target: 'content', kind: 'snapshot', docsIssued: 4 });
    agent.reclaim();
    const old = await agent.handle({ target: 'content', kind: 'click', ref: 'd4e1', docsIssued: 9 });
    expect(old).toEqual({ ok: false, error: expect.objectContaining({ code: 'stale_ref' }), doc: 9 });
    const snap = await agent.handle({ target: 'content', kind: 'snapshot', docsIssued: 9 });
    expect(snap.ok && 'page' in snap && snap.page.snapshot).toBe('- button "Save" [ref=d9e1]');
    expect(await agent.handle({ target: 'content', kind: 'click', ref: 'd9e1', docsIssued: 9 })).toMatchObject({ ok: true, doc: 9 });
    expect(clicks).toBe(1);
  });

  it('keeps its refs when the service worker does not answer a claim', async () => {
    document.body.innerHTML = '<button id="b">Save</button>';
    let calls = 0;
    const register = vi.fn(async () => {
      if (calls++ > 0) throw new Error('no worker');
      return 4;
    });
    const agent = new ContentAgent(document, register, { quietMs: 10, maxMs: 500 });
    await agent.handle({ target: 'content', kind: 'snapshot', docsIssued: 4 });
    agent.reclaim();
    expect(await agent.handle({ target: 'content', kind: 'click', ref: 'd4e1', docsIssued: 4 })).toMatchObject({ ok: true, doc: 4 });
  });

  it('does not claim anything before it has a number', async () => {
    const register = vi.fn(async () => 2);
    const agent = new ContentAgent(document, register);
    agent.reclaim();
    expect(register).not.toHaveBeenCalled();
  });
});
