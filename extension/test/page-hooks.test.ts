import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CONTROL_EVENT, HOOK_EVENT, hookInit, installPageHooks, type ArmedAnswer, type HookRecord } from '../src/shared/page-hooks';
import { controlPageHooks, relayPageHooks } from '../src/content/hook-relay';
import type { HookBatch } from '../src/shared/messages';

type Win = Window & typeof globalThis;
const win = window as unknown as Win;

// chrome.scripting serializes the function it injects: run the hooks the same
// way, so a reference to anything outside their body fails here too.
const serialized = new Function(`return (${installPageHooks.toString()})`)() as typeof installPageHooks;
function install(queue: ArmedAnswer[] = [], actingUntil = 0): void {
  serialized(hookInit(queue, actingUntil), win);
}

let records: HookRecord[];
const onHook = (e: Event) => records.push(JSON.parse(String((e as CustomEvent).detail)) as HookRecord);
let originals: Record<string, PropertyDescriptor | undefined>;
const NAMES = ['alert', 'confirm', 'prompt'] as const;
const LEVELS = ['log', 'info', 'warn', 'error', 'debug'] as const;

beforeEach(() => {
  records = [];
  win.addEventListener(HOOK_EVENT, onHook);
  // The browser's own dialogs, as the hooks find them.
  // (Plain data properties, as in Chrome; happy-dom's are accessors.)
  const own = (name: string, value: unknown) => Object.defineProperty(win, name, { value, writable: true, configurable: true, enumerable: true });
  own('alert', vi.fn());
  own('confirm', vi.fn(() => true));
  own('prompt', vi.fn(() => 'typed by the user'));
  originals = {};
  for (const n of NAMES) originals[n] = Object.getOwnPropertyDescriptor(win, n);
  for (const l of LEVELS) originals[`console.${l}`] = Object.getOwnPropertyDescriptor(console, l);
});

afterEach(() => {
  controlPageHooks(win, { unhook: true });
  win.removeEventListener(HOOK_EVENT, onHook);
});

function ready(): void {
  controlPageHooks(win, { ready: true });
}

describe('page-world hooks', () => {
  it('leave dialogs to the browser while nobody acts, recording them before and after', () => {
    install();
    ready();
    expect(win.confirm('Really delete?')).toBe(true);
    expect(win.prompt('Name?', 'x')).toBe('typed by the user');
    expect(records).toEqual([
      { type: 'hello' },
      { type: 'dialog', kind: 'confirm', message: 'Really delete?', phase: 'open' },
      { type: 'dialog', kind: 'confirm', message: 'Really delete?', phase: 'closed', accepted: true },
      { type: 'dialog', kind: 'prompt', message: 'Name?', phase: 'open' },
      { type: 'dialog', kind: 'prompt', message: 'Name?', phase: 'closed', accepted: true, promptText: 'typed by the user' },
    ]);
    expect(originals.confirm!.value).toHaveBeenCalledWith('Really delete?');
  });

  it('answer by the policy while the AI acts, armed answers first, without the browser', () => {
    install([{ accept: true }, { accept: true, promptText: 'Bob' }], Date.now() + 60_000);
    ready();
    expect(win.confirm('one?')).toBe(true);
    expect(win.prompt('two?')).toBe('Bob');
    expect(win.confirm('three?')).toBe(false);
    expect(win.alert('four')).toBeUndefined();
    expect(win.prompt('five?', 'dflt')).toBeNull();
    for (const n of NAMES) expect(originals[n]!.value).not.toHaveBeenCalled();
    expect(records.filter((r) => r.type === 'dialog')).toEqual([
      { type: 'dialog', kind: 'confirm', message: 'one?', phase: 'answered', accepted: true, armed: true },
      { type: 'dialog', kind: 'prompt', message: 'two?', phase: 'answered', accepted: true, armed: true, promptText: 'Bob' },
      { type: 'dialog', kind: 'confirm', message: 'three?', phase: 'answered', accepted: false, armed: false },
      { type: 'dialog', kind: 'alert', message: 'four', phase: 'answered', accepted: true, armed: false },
      { type: 'dialog', kind: 'prompt', message: 'five?', phase: 'answered', accepted: false, armed: false },
    ]);
  });

  it('an armed answer applies without acting; acting ends when the service worker says so', () => {
    install();
    ready();
    controlPageHooks(win, { queue: [{ accept: true }] });
    expect(win.confirm('armed?')).toBe(true);
    controlPageHooks(win, { actingUntil: Date.now() + 60_000 });
    (originals.confirm!.value as ReturnType<typeof vi.fn>).mockReturnValue(false);
    expect(win.confirm('acting?')).toBe(false);
    controlPageHooks(win, { actingUntil: Date.now() - 1 });
    expect(win.confirm('user?')).toBe(false);
    expect(originals.confirm!.value).toHaveBeenCalledTimes(1);
    expect(records.filter((r) => r.type === 'dialog').map((r) => (r as { phase: string }).phase)).toEqual(['answered', 'answered', 'open', 'closed']);
  });

  it('record console calls and keep the original behaviour', () => {
    const log = vi.fn();
    console.warn = log;
    originals['console.warn'] = Object.getOwnPropertyDescriptor(console, 'warn');
    install();
    ready();
    console.warn('careful', { n: 1 });
    expect(log).toHaveBeenCalledWith('careful', { n: 1 });
    expect(records[1]).toMatchObject({ type: 'console', level: 'warn', text: 'careful {"n":1}' });
  });

  it('hold records until a content script relays them', () => {
    install();
    win.alert('early');
    expect(records).toEqual([{ type: 'hello' }]);
    ready();
    expect(records.slice(1).map((r) => (r as { phase: string }).phase)).toEqual(['open', 'closed']);
  });

  it('install once per document: a second install hands its state over', () => {
    install();
    ready();
    const hooked = win.confirm;
    install([{ accept: false }], 0);
    expect(win.confirm).toBe(hooked);
    expect(win.confirm('armed by the second?')).toBe(false);
    expect(originals.confirm!.value).not.toHaveBeenCalled();
  });

  it('unhook restores the very same functions and descriptors, and adds no window property at any time', () => {
    const before = Object.getOwnPropertyNames(win).sort();
    install();
    expect(Object.getOwnPropertyNames(win).sort()).toEqual(before);
    expect(win.alert).not.toBe(originals.alert!.value);
    controlPageHooks(win, { unhook: true });
    for (const n of NAMES) expect(Object.getOwnPropertyDescriptor(win, n)).toEqual(originals[n]);
    for (const l of LEVELS) expect(Object.getOwnPropertyDescriptor(console, l)).toEqual(originals[`console.${l}`]);
    expect(Object.getOwnPropertyNames(win).sort()).toEqual(before);
    records = [];
    win.confirm('after');
    console.log('after');
    win.dispatchEvent(new ErrorEvent('error', { message: 'boom' }));
    expect(records).toEqual([]);
    // A wrapper the page kept from while it was shared now only calls the original.
    install();
    ready();
    const kept = win.confirm;
    controlPageHooks(win, { unhook: true });
    records = [];
    expect(kept('kept?')).toBe(true);
    expect(originals.confirm!.value).toHaveBeenCalledWith('kept?');
    expect(records).toEqual([]);
    // Installable again once unhooked (shared again).
    install();
    expect(win.alert).not.toBe(originals.alert!.value);
  });
});

describe('hook relay', () => {
  afterEach(() => vi.useRealTimers());

  it('relays dialogs at once and console records in batches, and answers hello with ready', async () => {
    vi.useFakeTimers();
    const target = new EventTarget() as unknown as Window;
    const controls: unknown[] = [];
    target.addEventListener(CONTROL_EVENT, (e) => controls.push(JSON.parse(String((e as CustomEvent).detail))));
    const batches: HookBatch[] = [];
    relayPageHooks(target, (b) => batches.push(b));
    expect(controls).toEqual([{ ready: true }]);
    const fire = (rec: object) => target.dispatchEvent(new CustomEvent(HOOK_EVENT, { detail: JSON.stringify(rec) }));
    fire({ type: 'hello' });
    expect(controls).toEqual([{ ready: true }, { ready: true }]);
    fire({ type: 'console', level: 'log', text: 'a', time: 1 });
    fire({ type: 'console', level: 'log', text: 'b', time: 2 });
    fire({ type: 'dialog', kind: 'confirm', message: 'm', phase: 'open' });
    fire({ type: 'dialog', kind: 'confirm', message: 'm', phase: 'sideways' });
    fire({ type: 'bogus' });
    expect(batches).toEqual([
      { dialogs: [{ kind: 'confirm', message: 'm', phase: 'open', accepted: false, armed: false }], console: [{ level: 'log', text: 'a', time: 1 }, { level: 'log', text: 'b', time: 2 }] },
    ]);
    fire({ type: 'console', level: 'error', text: 'c', time: 3 });
    await vi.advanceTimersByTimeAsync(60);
    expect(batches[1]).toEqual({ dialogs: [], console: [{ level: 'error', text: 'c', time: 3 }] });
  });

  it('sends what it batched at once when flushed, and nothing when there is nothing or it is stopped', async () => {
    vi.useFakeTimers();
    const target = new EventTarget() as unknown as Window;
    const batches: HookBatch[] = [];
    const relay = relayPageHooks(target, (b) => batches.push(b));
    const fire = (rec: object) => target.dispatchEvent(new CustomEvent(HOOK_EVENT, { detail: JSON.stringify(rec) }));
    fire({ type: 'console', level: 'log', text: 'clicked', time: 1 });
    relay.flush();
    expect(batches).toEqual([{ dialogs: [], console: [{ level: 'log', text: 'clicked', time: 1 }] }]);
    relay.flush();
    await vi.advanceTimersByTimeAsync(60);
    expect(batches).toHaveLength(1);
    fire({ type: 'console', level: 'log', text: 'late', time: 2 });
    relay.stop();
    relay.flush();
    expect(batches).toHaveLength(1);
  });
});

describe('hook relay limits and stopping', () => {
  afterEach(() => vi.useRealTimers());
  const fire = (target: EventTarget, rec: object) => target.dispatchEvent(new CustomEvent(HOOK_EVENT, { detail: JSON.stringify(rec) }));

  it('bounds a flood of forged dialog records, and stops answering when stopped', async () => {
    vi.useFakeTimers();
    const target = new EventTarget() as unknown as Window;
    const batches: HookBatch[] = [];
    const relay = relayPageHooks(target, (b) => batches.push(b));
    for (let i = 0; i < 10000; i++) fire(target, { type: 'dialog', kind: 'alert', phase: 'answered', message: 'flood ' + i });
    await vi.advanceTimersByTimeAsync(60);
    const relayed = batches.reduce((n, b) => n + b.dialogs.length, 0);
    expect(batches.length).toBeLessThanOrEqual(6);
    expect(relayed).toBeLessThanOrEqual(25);

    const controls: unknown[] = [];
    target.addEventListener(CONTROL_EVENT, (e) => controls.push((e as CustomEvent).detail));
    relay.stop();
    batches.length = 0;
    fire(target, { type: 'hello' });
    fire(target, { type: 'dialog', kind: 'confirm', phase: 'open', message: 'm' });
    await vi.advanceTimersByTimeAsync(60);
    expect(controls).toEqual([]);
    expect(batches).toEqual([]);
    relay.start();
    expect(controls).toEqual([JSON.stringify({ ready: true })]);
    fire(target, { type: 'dialog', kind: 'confirm', phase: 'open', message: 'm' });
    expect(batches).toHaveLength(1);
  });
});
