import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { find } from '../src/content/find';
import { readDocument } from '../src/content/read';
import { RefRegistry } from '../src/content/refs';
import { formatRef, parseRef } from '../src/shared/refs';
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
    // The walk stops at its budget (2000 / 10 + 50 nodes): the rest is not counted.
    expect(out.more).toBe(true);
    expect(out.partial).toBe(false);
    expect(out.omitted).toBeGreaterThan(100);
    expect(out.omitted).toBeLessThan(400);
    const capped = capSnapshot(out.text, 2000, out.omitted, out.more);
    expect(capped.text.length).toBeLessThanOrEqual(2000);
    expect(capped.text.split('\n').at(-1)).toBe(noteLine(capped.omitted, true));
    expect(capped.text).toMatch(/- note: more than \d+ elements not shown; use browser_find \{text\|role\} or browser_snapshot \{ref\}/);
  });

  it('counts exactly what it left out when the whole page was walked', () => {
    document.body.innerHTML = '<ul>' + Array.from({ length: 100 }, (_, i) => `<li><a href="/p/${i}">Link ${i}</a></li>`).join('') + '</ul>';
    const out = snapshotPage(document, new RefRegistry(1), { maxChars: 2000 });
    expect(out.more).toBe(false);
    const capped = capSnapshot(out.text, 2000, out.omitted, out.more);
    expect(capped.text).toMatch(/- note: \d+ more elements left out; use browser_find/);
  });

  it('stops at its deadline and says the snapshot is partial', () => {
    document.body.innerHTML = '<ul>' + Array.from({ length: 600 }, (_, i) => `<li><a href="/p/${i}">Link ${i}</a></li>`).join('') + '</ul>';
    const out = snapshotPage(document, new RefRegistry(1), { maxChars: 1_000_000, until: Date.now() - 1 });
    expect(out.partial).toBe(true);
    expect(out.text.split('\n').length).toBeLessThan(600);
    const whole = snapshotPage(document, new RefRegistry(1), { maxChars: 1_000_000 });
    expect(whole.partial).toBe(false);
    expect(whole.text.split('\n').length).toBeGreaterThanOrEqual(600);
  });

  it('search stops at its deadline and says it is partial', () => {
    document.body.innerHTML = '<ul>' + Array.from({ length: 600 }, (_, i) => `<li><a href="/p/${i}">Link ${i}</a></li>`).join('') + '</ul>';
    expect(find(document, new RefRegistry(1), { text: 'Link 599', until: Date.now() - 1 }).partial).toBe(true);
    expect(find(document, new RefRegistry(1), { role: 'link', until: Date.now() - 1 }).partial).toBe(true);
    const whole = find(document, new RefRegistry(1), { text: 'Link 599' });
    expect(whole.partial).toBeUndefined();
    expect(whole.matches.map((m) => m.line)).toEqual([expect.stringContaining('link "Link 599"')]);
  });

  it('search by role with a limit stops past it, and lists what the whole-tree search lists', () => {
    document.body.innerHTML =
      '<h2>Top</h2><button style="display:none">Hidden</button>' +
      Array.from({ length: 300 }, (_, i) => `<div><button>B${i}</button><span role="button">S${i}</span><a href="/${i}">L${i}</a></div>`).join('') +
      '<div aria-hidden="true"><button>Gone</button></div>';
    const all = find(document, new RefRegistry(1), { role: 'button' });
    expect(all.matches).toHaveLength(600);
    expect(all.more).toBeUndefined();
    const some = find(document, new RefRegistry(1), { role: 'button', limit: 50 });
    expect(some.more).toBe(true);
    expect(some.matches).toHaveLength(51);
    expect(some.matches.map((m) => m.line)).toEqual(all.matches.slice(0, 51).map((m) => m.line));
    expect(some.matches[0]!.context).toBe(all.matches[0]!.context);
    // Fewer matches than the limit: all of them, none more; hidden ones never.
    const links = find(document, new RefRegistry(1), { role: 'link', limit: 1000 });
    expect(links.more).toBeUndefined();
    expect(links.matches).toHaveLength(300);
    expect(find(document, new RefRegistry(1), { role: 'button', limit: 1000 }).matches.map((m) => m.line)).toEqual(all.matches.map((m) => m.line));
  });

  it('search finds fields by their labels, wherever the label is', () => {
    document.body.innerHTML = '<label for="a">Street</label><p>x</p><input id="a"><label>City <input></label><input aria-label="Zip">';
    const lines = (t: string) => find(document, new RefRegistry(1), { text: t }).matches.map((m) => m.line);
    expect(lines('street')).toContainEqual(expect.stringContaining('textbox "Street"'));
    expect(lines('city')).toContainEqual(expect.stringContaining('textbox "City"'));
    expect(lines('zip')).toEqual([expect.stringContaining('textbox "Zip"')]);
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

  it('matches text across inline elements, names from aria-labelledby, and skips hidden text', () => {
    document.body.innerHTML = `
      <h2>Team</h2>
      <p>Call <b>Ada</b> Lovelace today</p>
      <span id="lbl">Delete account</span><button aria-labelledby="lbl">X</button>
      <div aria-hidden="true"><button>Ada Lovelace hidden</button></div>
      <div style="display:none"><a href="/h">Ada Lovelace gone</a></div>`;
    const lines = (t: string, role?: string) => find(document, new RefRegistry(1), { text: t, role }).matches.map((m) => m.line);
    expect(lines('ada lovelace')).toEqual(['- text: Call Ada Lovelace today']);
    expect(lines('delete account', 'button')).toEqual(['- button "Delete account" [ref=e1]']);
    expect(lines('nowhere')).toEqual([]);
  });

  it('finds text in shadow roots and by role the element around it, with its row', () => {
    document.body.innerHTML = '<table><tr><td><a href="/1">Open item 1</a></td><td>Note 1</td></tr></table><div id="host"></div>';
    const root = document.getElementById('host')!.attachShadow({ mode: 'open' });
    root.innerHTML = '<h3>Card 7</h3><button>Like card 7</button>';
    const refs = new RefRegistry(1);
    const out = find(document, refs, { text: 'card 7' });
    expect(out.matches.map((m) => [m.line, m.context])).toEqual([
      ['- heading "Card 7" [level=3]', undefined],
      ['- button "Like card 7" [ref=e1]', 'heading "Card 7" [level=3]'],
    ]);
    // Light-DOM text slotted into a button of a shadow tree names that button.
    const host = document.createElement('div');
    host.textContent = 'Log in';
    document.body.append(host);
    host.attachShadow({ mode: 'open' }).innerHTML = '<button><slot></slot></button>';
    expect(find(document, refs, { text: 'log in', role: 'button' }).matches.map((m) => m.line)).toEqual([expect.stringMatching(/^- button "Log in" \[ref=e\d+\]$/)]);
    const rows = find(document, refs, { text: 'open item 1', role: 'row' });
    expect(rows.matches.map((m) => m.line)).toEqual(["- row \"Open item 1 Note 1\""]);
  });

  it('finds what the text of a block around it does not show: values, labels, shadow and slotted text, runs into an inline shadow host', () => {
    document.body.innerHTML = `
      <h2>Orders</h2>
      <div><p>Nothing here</p><input value="order number 42"></div>
      <section><h3>Icons</h3><button aria-label="Order number 42 details">i</button></section>
      <p id="run">Your order <span id="inline"></span> ships today</p>
      <div><span id="whole"></span></div>
      <x-card id="card"><b>Order number 42 slotted</b></x-card>
      <p>Filler</p><p>so that the blocks above</p><p>are checked for skimming</p>`;
    document.getElementById('inline')!.attachShadow({ mode: 'open' }).innerHTML = 'number 42';
    document.getElementById('whole')!.attachShadow({ mode: 'open' }).innerHTML = '<a href="/o">Order number 42 inside</a>';
    document.getElementById('card')!.attachShadow({ mode: 'open' }).innerHTML = '<h4>Card</h4><div><slot></slot></div>';
    const out = find(document, new RefRegistry(1), { text: 'order number 42' });
    // The same as a pass that looks at every text node finds.
    expect(out.matches.map((m) => [m.line, m.context])).toEqual([
      ['- textbox [ref=e1]: order number 42', 'heading "Orders" [level=2]'],
      ['- button "Order number 42 details" [ref=e2]', 'heading "Icons" [level=3]'],
      ['- text: Your order number 42 ships today', 'heading "Icons" [level=3]'],
      ['- link "Order number 42 inside" [ref=e3]', 'heading "Icons" [level=3]'],
      ['- text: Order number 42 slotted', 'heading "Card" [level=4]'],
    ]);
    // Headings met in a block skimmed, then scanned again for the inline host, give the same contexts.
    document.getElementById('run')!.insertAdjacentHTML('afterbegin', '<span role="heading" aria-level="5">Tracking</span> ');
    expect(find(document, new RefRegistry(1), { text: 'order number 42' }).matches.map((m) => m.context)).toEqual(['heading "Orders" [level=2]', 'heading "Icons" [level=3]', 'heading "Tracking" [level=5]', 'heading "Tracking" [level=5]', 'heading "Card" [level=4]']);
  });

  it('finds on random pages what a pass looking at every text node finds', () => {
    // Skimming (blocks whose textContent cannot match are walked for their
    // elements only) must not change a search: seeded random pages with the
    // needle split across inline and block elements, shadow trees of inline
    // and block hosts, slots, values and labelling attributes.
    let seed = 7;
    const rnd = (n: number) => {
      // mulberry32
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const pieces = ['Order', 'order ', ' number', 'num', 'ber 4', '2', ' 42', 'order number 42', 'other text', ' '];
    const tags = ['div', 'p', 'span', 'b', 'a', 'button', 'li', 'section', 'x-card', 'label', 'h3', 'td'];
    const hosts = new Set(['div', 'p', 'span', 'section', 'x-card']);
    const fill = (parent: Element | ShadowRoot, depth: number): void => {
      // Blocks are checked for skimming among 8 or more siblings.
      const n = depth === 0 || rnd(3) === 0 ? 8 + rnd(3) : 1 + rnd(4);
      for (let i = 0; i < n; i++) {
        const r = rnd(10);
        if (r < 4 || depth > 3) {
          parent.append(pieces[rnd(pieces.length)]!);
          continue;
        }
        if (r === 4) {
          const input = document.createElement('input');
          input.value = pieces[rnd(pieces.length)]!;
          parent.append(input);
          continue;
        }
        const tag = tags[rnd(tags.length)]!;
        const el = document.createElement(tag);
        if (tag === 'a') el.setAttribute('href', '/x');
        if (rnd(8) === 0) el.setAttribute('aria-label', pieces[rnd(pieces.length)]!);
        parent.append(el);
        fill(el, depth + 1);
        if (hosts.has(tag) && rnd(4) === 0) {
          const root = el.attachShadow({ mode: 'open' });
          fill(root, depth + 1);
          if (rnd(2) === 0) root.append(document.createElement('slot'));
        }
      }
    };
    let compared = 0;
    let found = 0;
    for (let page = 0; page < 150; page++) {
      document.body.innerHTML = '';
      fill(document.body, 0);
      const refs = new RefRegistry(1);
      const lines = (skim: boolean) => find(document, refs, { text: 'order number 42', skim }).matches.map((m) => `${m.line} | ${m.context ?? ''}`);
      const full = lines(false);
      expect(lines(true), document.body.innerHTML).toEqual(full);
      compared++;
      found += full.length;
    }
    expect(compared).toBe(150);
    expect(found).toBeGreaterThan(50); // the pages do hold matches
    // happy-dom's computed styles make this 5-10 s on a 2-core machine: a budget
    // for the work, not a timing assertion.
  }, 60_000);

  it('finds a control hidden until hover, marked', () => {
    document.body.innerHTML = `
      <style>.row .more { display: none; } .row:hover .more { display: inline; }</style>
      <ul><li class="row">Report.pdf <button class="more">More options</button></li></ul>`;
    const out = find(document, new RefRegistry(1), { text: 'more options' });
    expect(out.matches.map((m) => m.line)).toEqual(['- button "More options" [hidden until hover] [ref=e1]']);
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
