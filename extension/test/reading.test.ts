import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { find } from '../src/content/find';
import { answerDialog, ARM_EVENT, HOOK_EVENT, installPageHooks } from '../src/content/page-hooks';
import { relayPageHooks } from '../src/content/hook-relay';
import { readDocument } from '../src/content/read';
import { formatRef, parseRef, RefRegistry } from '../src/content/refs';
import { snapshotPage } from '../src/content/snapshot';
import { capSnapshot, noteLine } from '../src/shared/cap';
import type { HookBatch } from '../src/shared/messages';

beforeEach(() => {
  document.body.innerHTML = '';
});

describe('snapshot cap, subtree and depth', () => {
  it('cuts whole lines under maxChars and counts what it left out', () => {
    document.body.innerHTML = '<ul>' + Array.from({ length: 3000 }, (_, i) => `<li><a href="/p/${i}">Link ${i}</a></li>`).join('') + '</ul>';
    const out = snapshotPage(document, new RefRegistry(1), { maxChars: 2000 });
    expect(out.text.length).toBeLessThanOrEqual(2000);
    expect(out.omitted).toBeGreaterThan(2900);
    const capped = capSnapshot(out.text, 2000, out.omitted);
    expect(capped.text.length).toBeLessThanOrEqual(2000);
    expect(capped.text.split('\n').at(-1)).toBe(noteLine(capped.omitted));
    expect(capped.text).toMatch(/- note: \d+ more elements left out; use browser_find/);
  });

  it('leaves a short snapshot alone and cuts a long one at a line', () => {
    expect(capSnapshot('- button "A" [ref=e1]', 100)).toEqual({ text: '- button "A" [ref=e1]', omitted: 0 });
    const long = Array.from({ length: 100 }, (_, i) => `- button "B${i}" [ref=e${i + 1}]`).join('\n');
    const c = capSnapshot(long, 500);
    expect(c.text.length).toBeLessThanOrEqual(500);
    const kept = c.text.split('\n').length - 1;
    expect(c.omitted).toBe(100 - kept);
  });

  it('prints a ref subtree and limits depth', () => {
    document.body.innerHTML = '<nav aria-label="Top"><ul><li><a href="/a">A</a></li></ul></nav><main><ul><li><a href="/b">B</a><ul><li><button>Deep</button></li></ul></li></ul></main>';
    const refs = new RefRegistry(1);
    const full = snapshotPage(document, refs, {}).text;
    const mainRef = /main \[ref=(e\d+)\]/.exec(full)![1]!;
    const sub = snapshotPage(document, refs, { root: refs.resolve(mainRef, 1) });
    expect(sub.text.split('\n')[0]).toBe(`- main [ref=${mainRef}]:`);
    expect(sub.text).not.toContain('"A"');
    expect(sub.text).toContain('button "Deep"');
    const shallow = snapshotPage(document, refs, { depth: 1 });
    expect(shallow.text.split('\n')).toEqual(['- navigation "Top" [ref=e1]', `- main [ref=${mainRef}]`]);
    expect(shallow.omitted).toBeGreaterThan(0);
  });
});

describe('refs', () => {
  it('are short, carry their frame and document, and parse back', () => {
    expect(formatRef(0, 1, 12)).toBe('e12');
    expect(formatRef(0, 7, 12)).toBe('d7e12');
    expect(formatRef(2, 7, 3)).toBe('f2d7e3');
    expect(parseRef('f2d7e3')).toEqual({ frame: 2, doc: 7, n: 3 });
    expect(parseRef('d1e3')).toBeUndefined(); // never issued spelling
    expect(parseRef('f0e3')).toBeUndefined();
    const reg = new RefRegistry(9, 4);
    document.body.innerHTML = '<button>X</button>';
    expect(reg.refFor(document.querySelector('button')!)).toBe('f4d9e1');
    expect(() => reg.resolve('f4d8e1', 9)).toThrow(/no longer in the page/);
    expect(() => reg.resolve('f4d10e1', 9)).toThrow(/never issued/);
  });
});

describe('find', () => {
  it('matches text and role with the heading or row above', () => {
    document.body.innerHTML = `
      <h1>Orders</h1>
      <table><tr><th>Order</th><th>Action</th></tr>
        <tr><td>#1</td><td><button>Refund</button></td></tr>
        <tr><td>#2</td><td><button>Refund</button></td></tr></table>
      <h2>Help</h2><p>Ask for a refund here.</p><a href="/x">Refund policy</a>`;
    const refs = new RefRegistry(1);
    const out = find(document, refs, { text: 'refund' });
    expect(out.matches.map((m) => m.line)).toEqual([
      '- button "Refund" [ref=e1]',
      '- button "Refund" [ref=e3]',
      '- text: Ask for a refund here.',
      '- link "Refund policy" [ref=e5]',
    ]);
    // A row in the context carries a ref, so browser_snapshot {ref} can show the whole row.
    expect(out.matches[0]!.context).toBe('row "#1 Refund" [ref=e2]');
    expect(out.matches[1]!.context).toBe('row "#2 Refund" [ref=e4]');
    expect(out.matches[2]!.context).toBe('heading "Help" [level=2]');
    expect(out.matches[3]!.ref).toBe('e5');
    const buttons = find(document, refs, { role: 'button' });
    expect(buttons.matches).toHaveLength(2);
    expect(buttons.matches[0]!.ref).toBe('e1'); // the same element keeps its ref
  });
});

describe('read', () => {
  it('serializes the rendered DOM: values, shadow roots, no scripts or hidden parts', () => {
    document.body.innerHTML = `
      <script>evil()</script><style>p{}</style><noscript>ns</noscript><template><p>tpl</p></template>
      <p onclick="x()" style="color:red">Visible <a href="/rel">link</a></p>
      <div hidden>hidden text</div><div style="display:none">none text</div>
      <input id="name" value="old"><input type="password" id="pw"><input type="checkbox" id="cb">
      <textarea id="ta">orig</textarea><select id="sel"><option>A</option><option>B</option></select>
      <div id="host"></div>`;
    (document.getElementById('name') as HTMLInputElement).value = 'new & <b>';
    (document.getElementById('pw') as HTMLInputElement).value = 'hunter2';
    (document.getElementById('cb') as HTMLInputElement).checked = true;
    (document.getElementById('ta') as HTMLTextAreaElement).value = 'typed';
    (document.getElementById('sel') as HTMLSelectElement).value = 'B';
    const root = document.getElementById('host')!.attachShadow({ mode: 'open' });
    root.innerHTML = '<p>From the shadow</p>';
    const html = readDocument(document);
    expect(html).toMatch(/^<!DOCTYPE html><html/);
    expect(html).not.toMatch(/evil|p\{\}|>ns<|tpl|hidden text|none text|hunter2|onclick|color:red/);
    expect(html).toContain('value="new &amp; &lt;b>"');
    expect(html).toMatch(/<input type="checkbox" id="cb" checked>/);
    expect(html).toContain('>typed</textarea>');
    expect(html).toMatch(/<option selected>B<\/option>/);
    expect(html).toContain('<p>From the shadow</p>');
    expect(html).toMatch(/href="http[^"]*\/rel"/);
  });
});

describe('dialogs and console in the page world', () => {
  afterEach(() => vi.useRealTimers());

  it('answers by the default policy, and armed answers first', () => {
    expect(answerDialog('alert', 'hi', undefined, undefined)).toEqual({ record: { type: 'dialog', kind: 'alert', message: 'hi', accepted: true, armed: false }, value: undefined });
    expect(answerDialog('confirm', 'sure?', undefined, undefined).value).toBe(false);
    expect(answerDialog('prompt', 'name?', 'x', undefined).value).toBeNull();
    expect(answerDialog('confirm', 'sure?', undefined, { accept: true }).value).toBe(true);
    const p = answerDialog('prompt', 'name?', 'dflt', { accept: true, promptText: 'Ada' });
    expect(p.value).toBe('Ada');
    expect(p.record).toMatchObject({ accepted: true, armed: true, promptText: 'Ada' });
  });

  it('never blocks, uses the armed queue, records every dialog and console call', () => {
    const win = window as unknown as Window & typeof globalThis;
    const records: unknown[] = [];
    win.addEventListener(HOOK_EVENT, (e) => records.push(JSON.parse(String((e as CustomEvent).detail))));
    installPageHooks(win);
    expect(win.alert('one')).toBeUndefined();
    expect(win.confirm('two?')).toBe(false);
    win.dispatchEvent(new CustomEvent(ARM_EVENT, { detail: JSON.stringify({ queue: [{ accept: true }, { accept: true, promptText: 'Bob' }] }) }));
    expect(win.confirm('three?')).toBe(true);
    expect(win.prompt('four?')).toBe('Bob');
    expect(win.confirm('five?')).toBe(false); // the queue is used up
    console.warn('careful', { n: 1 });
    expect(records).toEqual([
      { type: 'dialog', kind: 'alert', message: 'one', accepted: true, armed: false },
      { type: 'dialog', kind: 'confirm', message: 'two?', accepted: false, armed: false },
      { type: 'dialog', kind: 'confirm', message: 'three?', accepted: true, armed: true },
      { type: 'dialog', kind: 'prompt', message: 'four?', accepted: true, armed: true, promptText: 'Bob' },
      { type: 'dialog', kind: 'confirm', message: 'five?', accepted: false, armed: false },
      expect.objectContaining({ type: 'console', level: 'warn', text: 'careful {"n":1}' }),
    ]);
  });

  it('relays dialogs at once and console records in batches', async () => {
    vi.useFakeTimers();
    const target = new EventTarget() as unknown as Window;
    const batches: HookBatch[] = [];
    relayPageHooks(target, (b) => batches.push(b));
    const fire = (rec: object) => target.dispatchEvent(new CustomEvent(HOOK_EVENT, { detail: JSON.stringify(rec) }));
    fire({ type: 'console', level: 'log', text: 'a', time: 1 });
    fire({ type: 'console', level: 'log', text: 'b', time: 2 });
    fire({ type: 'dialog', kind: 'alert', message: 'm', accepted: true, armed: false });
    fire({ type: 'bogus' });
    expect(batches).toEqual([{ dialogs: [{ kind: 'alert', message: 'm', accepted: true, armed: false }], console: [{ level: 'log', text: 'a', time: 1 }, { level: 'log', text: 'b', time: 2 }] }]);
    fire({ type: 'console', level: 'error', text: 'c', time: 3 });
    await vi.advanceTimersByTimeAsync(60);
    expect(batches[1]).toEqual({ dialogs: [], console: [{ level: 'error', text: 'c', time: 3 }] });
  });
});
