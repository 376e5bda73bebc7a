import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { click, clickAt } from '../src/content/actions';
import { dragPoints } from '../src/content/dnd';
import { elementAtPoint, pressAt } from '../src/content/pointer';
import { clickEvents } from '../src/background/trusted';
import { TetherError } from '../src/shared/errors';

beforeEach(() => {
  document.body.innerHTML = '';
});
afterEach(() => {
  vi.restoreAllMocks();
});

const TYPES = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'auxclick', 'contextmenu', 'dblclick'];

/** Records the press events el receives: type, button, buttons, detail, and whether Shift was held. */
function record(el: Element, cancel: string[] = []): string[] {
  const seen: string[] = [];
  for (const type of TYPES) {
    el.addEventListener(type, (e) => {
      const m = e as MouseEvent;
      seen.push(`${type} b${m.button}/${m.buttons} d${m.detail}${m.shiftKey ? ' shift' : ''}`);
      if (cancel.includes(type)) e.preventDefault();
    });
  }
  return seen;
}

describe('pressAt', () => {
  it('double-click: two presses with detail 1 and 2, then dblclick', () => {
    const el = document.body.appendChild(document.createElement('div'));
    const seen = record(el);
    pressAt(el, 5, 5, { count: 2 });
    expect(seen).toEqual([
      'pointerdown b0/1 d0', 'mousedown b0/1 d1', 'pointerup b0/0 d0', 'mouseup b0/0 d1', 'click b0/0 d1',
      'pointerdown b0/1 d0', 'mousedown b0/1 d2', 'pointerup b0/0 d0', 'mouseup b0/0 d2', 'click b0/0 d2',
      'dblclick b0/0 d2',
    ]);
  });

  it('right-click: contextmenu after mousedown, no click; auxclick only when the page kept its own menu', () => {
    const el = document.body.appendChild(document.createElement('div'));
    const seen = record(el);
    pressAt(el, 5, 5, { button: 'right', modifiers: ['Shift'] });
    expect(seen).toEqual(['pointerdown b2/2 d0 shift', 'mousedown b2/2 d1 shift', 'contextmenu b2/2 d0 shift', 'pointerup b2/0 d0 shift', 'mouseup b2/0 d1 shift']);
    const custom = document.body.appendChild(document.createElement('div'));
    const seen2 = record(custom, ['contextmenu']);
    pressAt(custom, 5, 5, { button: 'right' });
    expect(seen2.at(-1)).toBe('auxclick b2/0 d1');
  });

  it('middle click: auxclick, no click', () => {
    const el = document.body.appendChild(document.createElement('div'));
    const seen = record(el);
    pressAt(el, 5, 5, { button: 'middle' });
    expect(seen).toEqual(['pointerdown b1/4 d0', 'mousedown b1/4 d1', 'pointerup b1/0 d0', 'mouseup b1/0 d1', 'auxclick b1/0 d1']);
  });

  it('a cancelled pointerdown suppresses mousedown and mouseup but not click', () => {
    const el = document.body.appendChild(document.createElement('div'));
    const seen = record(el, ['pointerdown']);
    pressAt(el, 5, 5);
    expect(seen).toEqual(['pointerdown b0/1 d0', 'pointerup b0/0 d0', 'click b0/0 d1']);
  });

  it('a right-click on an option does not select it', () => {
    document.body.innerHTML = '<select><option>a</option><option>b</option></select>';
    const select = document.querySelector('select')!;
    click(select.options[1]!, { button: 'right' });
    expect(select.value).toBe('a');
  });
});

describe('points', () => {
  it('clickAt clicks the element under the point, inside an open shadow root', () => {
    const host = document.body.appendChild(document.createElement('div'));
    const inner = host.attachShadow({ mode: 'open' }).appendChild(document.createElement('button'));
    vi.spyOn(document, 'elementFromPoint').mockReturnValue(host);
    (host.shadowRoot as ShadowRoot).elementFromPoint = () => inner;
    const clicks: number[] = [];
    inner.addEventListener('click', (e) => clicks.push((e as MouseEvent).clientX));
    clickAt(document, { x: 7, y: 8 });
    expect(clicks).toEqual([7]);
  });

  it('refuses a point outside the viewport', () => {
    expect(() => elementAtPoint(document, 5, window.innerHeight + 10)).toThrow(TetherError);
  });

  it('hands a point on a cross-origin frame to it, in its coordinates', () => {
    const frame = document.body.appendChild(document.createElement('iframe'));
    vi.spyOn(document, 'elementFromPoint').mockReturnValue(frame);
    vi.spyOn(frame, 'getBoundingClientRect').mockReturnValue({ left: 100, top: 50, right: 400, bottom: 350, width: 300, height: 300, x: 100, y: 50, toJSON: () => ({}) });
    Object.defineProperty(frame, 'contentDocument', { value: null });
    const hit = elementAtPoint(document, 130, 90);
    expect(hit.kind).toBe('frame');
    expect([hit.x, hit.y]).toEqual([30 - frame.clientLeft, 40 - frame.clientTop]);
  });

  it('dragPoints presses at the start, moves with the button held, releases at the end', () => {
    const pad = document.body.appendChild(document.createElement('canvas'));
    vi.spyOn(document, 'elementFromPoint').mockReturnValue(pad);
    const seen: string[] = [];
    for (const t of ['pointerdown', 'pointermove', 'pointerup']) pad.addEventListener(t, (e) => seen.push(`${t} ${(e as MouseEvent).clientX},${(e as MouseEvent).clientY} ${(e as MouseEvent).buttons}`));
    dragPoints(document, { x: 10, y: 10 }, { x: 90, y: 10 });
    expect(seen[0]).toBe('pointermove 10,10 0');
    expect(seen[1]).toBe('pointerdown 10,10 1');
    expect(seen.at(-2)).toBe('pointermove 90,10 1');
    expect(seen.at(-1)).toBe('pointerup 90,10 0');
    expect(seen.filter((s) => s.startsWith('pointermove') && s.endsWith(' 1')).length).toBe(8);
  });
});

describe('trusted clicks', () => {
  it('press and release per click, clickCount 1 then 2, with the button and modifiers', () => {
    const ev = clickEvents(3, 4, { button: 'right', count: 2, modifiers: ['Control', 'Shift'] });
    expect(ev.map((e) => `${e.type} ${e.button} ${e.clickCount ?? '-'} ${e.modifiers}`)).toEqual([
      'mouseMoved none - 10', 'mousePressed right 1 10', 'mouseReleased right 1 10', 'mousePressed right 2 10', 'mouseReleased right 2 10',
    ]);
  });
});
