import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { callsOf } from './fake-app';
import { emit } from './fake-runtime';
import { NOW, approval, state } from './fixtures';
import { open, renderApp } from './helpers';

describe('Approvals page', () => {
  // The fixtures' times are relative to NOW: the clock stands still there, so
  // countdowns read the same on a slow machine ("8 min 00 s", not "7 min 59 s").
  beforeEach(() => vi.spyOn(Date, 'now').mockReturnValue(NOW));
  afterEach(() => vi.restoreAllMocks());

  it('lists the browsers refused recently with why and the next step, as waiting for nothing', async () => {
    renderApp({
      state: state({
        refused: [
          {
            id: 'd3bb268f-1111-4000-8000-000000000001',
            label: 'CI box',
            refusal: 'pairing_denied',
            reason: 'you denied it',
            nextStep: 'to pair it after all, restart the browser',
            atMs: NOW - 120_000,
          },
        ],
      }),
    });
    await open('Approvals');
    const card = await screen.findByRole('article', { name: 'Refused profile CI box' });
    expect(card.textContent).toContain('d3bb268f…');
    expect(card.textContent).toContain('Refused 2 min ago: you denied it.');
    expect(card.textContent).toContain('Next: to pair it after all, restart the browser.');
    expect(within(card).queryByRole('button')).toBeNull();
    // Nothing waits for an answer: the page says so above the list.
    expect(screen.getByText('Nothing waiting for you')).toBeTruthy();
  });

  it('shows a held call with its details', async () => {
    renderApp({ state: state({ approvals: [approval()] }) });
    await open('Approvals');
    const card = await screen.findByRole('article', { name: 'Held call browser_type' });
    for (const text of ['sensitive', 'claude-ai', 'bank.example', 'ref=e12 text=«redacted»']) {
      expect(within(card).getByText(text)).toBeTruthy();
    }
    expect(card.textContent).toContain('work, tab 2');
    expect(within(card).getByText(/denied in 55 s/)).toBeTruthy();
  });

  it.each([
    ['Allow once', 'allow_once'],
    ['Always allow this app on this site', 'always_allow_site'],
    ['Deny', 'deny'],
  ])('"%s" calls Answer(id, "%s")', async (label, answer) => {
    renderApp({ state: state({ approvals: [approval({ id: 'req-7' })] }) });
    await open('Approvals');
    const card = await screen.findByRole('article', { name: 'Held call browser_type' });
    await fireEvent.click(within(card).getByRole('button', { name: label }));
    expect(callsOf('Answer')).toEqual([['req-7', answer]]);
    // The call leaves the queue with the next "state" event.
    emit('state', state());
    await waitFor(() => expect(screen.queryByRole('article', { name: 'Held call browser_type' })).toBeNull());
    expect(screen.getByText('Nothing waiting for you')).toBeTruthy();
  });

  it('offers "Always allow this app on this site" only for exactly one site', async () => {
    renderApp({
      state: state({
        approvals: [
          approval({ id: 'two', tool: 'browser_navigate', sites: ['a.example', 'b.example'] }),
          approval({ id: 'none', tool: 'browser_evaluate', sites: [] }),
        ],
      }),
    });
    await open('Approvals');
    const two = await screen.findByRole('article', { name: 'Held call browser_navigate' });
    expect(within(two).queryByRole('button', { name: 'Always allow this app on this site' })).toBeNull();
    expect(within(two).getByRole('button', { name: 'Allow once' })).toBeTruthy();
    expect(within(two).getByText('a.example')).toBeTruthy();
    expect(within(two).getByText('b.example')).toBeTruthy();
    const none = screen.getByRole('article', { name: 'Held call browser_evaluate' });
    expect(within(none).queryByRole('button', { name: 'Always allow this app on this site' })).toBeNull();
  });

  it('shows an Answer error (already answered) in the status line', async () => {
    renderApp({
      state: state({ approvals: [approval()] }),
      fail: { Answer: 'this call was already answered or timed out; nothing changed' },
    });
    await open('Approvals');
    const card = await screen.findByRole('article', { name: 'Held call browser_type' });
    await fireEvent.click(within(card).getByRole('button', { name: 'Deny' }));
    expect(await screen.findByText('this call was already answered or timed out; nothing changed')).toBeTruthy();
    await waitFor(() => expect((within(card).getByRole('button', { name: 'Deny' }) as HTMLButtonElement).disabled).toBe(false));
  });

  it('approves and denies new browser profiles', async () => {
    renderApp({
      state: state({
        pairing: [
          { id: 'pend-1', label: 'Personal', code: 'K7M4PX', sinceMs: NOW - 120_000, expiresMs: NOW + 480_000 },
          { id: 'pend-2', label: 'Guest', code: 'ABC234', sinceMs: NOW - 5_000, expiresMs: NOW + 595_000 },
        ],
      }),
    });
    await open('Approvals');
    const personal = await screen.findByRole('article', { name: 'New profile Personal, code K7M4PX' });
    expect(personal.textContent).toContain('2 min ago');
    expect(personal.textContent).toContain('K7M4PX');
    expect(personal.textContent).toContain('shows this same code');
    expect(personal.textContent).toContain('Let go in 8 min 00 s');
    await fireEvent.click(within(personal).getByRole('button', { name: 'Approve' }));
    expect(callsOf('ApproveProfile')).toEqual([['pend-1']]);

    const guest = screen.getByRole('article', { name: 'New profile Guest, code ABC234' });
    await fireEvent.click(within(guest).getByRole('button', { name: 'Deny' }));
    expect(callsOf('DenyProfile')).toEqual([['pend-2']]);
    expect(callsOf('Answer')).toEqual([]);
  });

  it('tells two new profiles with the same name apart by their codes', async () => {
    renderApp({
      state: state({
        pairing: [
          { id: 'real-uuid', label: 'Work', code: 'K7M4PX', sinceMs: NOW - 60_000, expiresMs: NOW + 540_000 },
          { id: 'forged', label: 'Work', code: 'ZZ9Q2R', sinceMs: NOW - 1_000, expiresMs: NOW + 599_000 },
        ],
      }),
    });
    await open('Approvals');
    const real = await screen.findByRole('article', { name: 'New profile Work, code K7M4PX' });
    await screen.findByRole('article', { name: 'New profile Work, code ZZ9Q2R' });
    await fireEvent.click(within(real).getByRole('button', { name: 'Approve' }));
    expect(callsOf('ApproveProfile')).toEqual([['real-uuid']]);
  });

  it('approves a typed code (a browser pushed out of the list by other requests is not shown)', async () => {
    renderApp({
      state: state({
        pairing: [{ id: 'forged', label: 'Work', code: 'ZZ9Q2R', sinceMs: NOW - 1_000, expiresMs: NOW + 599_000 }],
      }),
    });
    await open('Approvals');
    const form = await screen.findByRole('form', { name: 'Approve by code' });
    const button = within(form).getByRole('button', { name: 'Approve code' }) as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    await fireEvent.input(within(form).getByRole('textbox'), { target: { value: ' k7m4px ' } });
    await fireEvent.click(button);
    expect(callsOf('ApproveProfile')).toEqual([['k7m4px']]);
  });

  it('shows an empty state', async () => {
    renderApp();
    await open('Approvals');
    expect(await screen.findByText('Nothing waiting for you')).toBeTruthy();
  });
});
