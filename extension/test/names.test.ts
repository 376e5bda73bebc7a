// The snapshot's own shortcuts for accessible names (contentName,
// titleOnlyName) must give what dom-accessibility-api computes, which is
// what they stand in for: each case is named both ways and compared.
import { computeAccessibleName } from 'dom-accessibility-api';
import { describe, expect, it } from 'vitest';
import { safeName, withReadCache } from '../src/content/snapshot';

const library = (el: Element) => computeAccessibleName(el, { getComputedStyle: (e: Element, p?: string | null) => getComputedStyle(e, p) });

const cases: Array<[string, string]> = [
  ['a row of a link, text, a button and a field', '<table><tr id="x"><td><a href="#r1">Open row 1</a></td><td>Text for row 1</td><td><button type="button">Edit 1</button></td><td><input aria-label="Note 1" value="typed"></td></tr></table>'],
  ['a row with an empty field and a header cell', '<table><tr id="x"><th>Item</th><td>  two   spaces </td><td><input aria-label="Note"></td></tr></table>'],
  ['a cell holding a button with an aria-label (skipped inside a name)', '<table><tr><td id="x"><button aria-label="Remove">X</button> item</td></tr></table>'],
  ['a cell holding a text field', '<table><tr><td id="x">Qty <input type="email" value="a@b.c"></td></tr></table>'],
  ['a cell with a hidden part', '<table><tr><td id="x">Shown<span style="display:none">gone</span><span style="visibility:hidden">also</span> end</td></tr></table>'],
  ['a heading with nested plain elements', '<h3 id="x">Card <b>7</b><div>more</div></h3>'],
  ['a link with a span', '<a id="x" href="#"><span>Go</span> <em>now</em></a>'],
  ['a list item (name from author only)', '<ul><li id="x">Topic <a href="#t">Sub</a></li></ul>'],
  ['a list item with a title', '<ul><li id="x" title="  Tip  text ">Topic</li></ul>'],
  ['a list', '<ul id="x"><li>a</li></ul>'],
  ['a paragraph', '<p id="x">Some text</p>'],
  ['a section with a title', '<section id="x" title="Intro">x</section>'],
  ['a table body', '<table><tbody id="x"><tr><td>a</td></tr></tbody></table>'],
  ['a header', '<header id="x"><h1>Site</h1></header>'],
  ['a row of two cells with a select (no shortcut)', '<table><tr id="x"><td>Size</td><td><select><option>S</option><option selected>M</option></select></td></tr></table>'],
  ['a row with a checkbox (no shortcut)', '<table><tr id="x"><td>Pick</td><td><input type="checkbox" aria-label="pick"></td></tr></table>'],
  ['a cell holding only an empty text field (empty content)', '<table><tr><td id="x"><input aria-label="Note 1"></td></tr></table>'],
  ['a cell holding only an empty text field, with a title', '<table><tr><td id="x" title="Notes"><input aria-label="Note 1"></td></tr></table>'],
  ['a cell holding only hidden content', '<table><tr><td id="x"><span style="display:none">gone</span> </td></tr></table>'],
  ['an empty header cell', '<table><tr><th id="x"> </th></tr></table>'],
  ['an empty button', '<button id="x" type="button"></button>'],
  ['an empty button with a title', '<button id="x" type="button" title="Close"></button>'],
  ['a link holding only an empty field', '<a id="x" href="#"><input></a>'],
  ['an empty heading with an empty title', '<h2 id="x" title=" "></h2>'],
  ['a button in a row with a labelledby (no shortcut)', '<span id="l">Label</span><table><tr id="x"><td><button aria-labelledby="l">B</button></td></tr></table>'],
];

describe('name shortcuts', () => {
  for (const [what, html] of cases) {
    it(`name the same as dom-accessibility-api: ${what}`, () => {
      document.body.innerHTML = html;
      const el = document.getElementById('x')!;
      const want = library(el);
      expect(withReadCache(() => safeName(el))).toBe(want);
    });
  }
  it('names a row by its content, the field by its value', () => {
    document.body.innerHTML = cases[0]![1];
    expect(withReadCache(() => safeName(document.getElementById('x')!))).toBe('Open row 1 Text for row 1 Edit 1 typed');
  });
});
