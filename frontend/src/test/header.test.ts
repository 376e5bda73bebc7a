import { fireEvent, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { callsOf, release } from './fake-app';
import { emit, listeners } from './fake-runtime';
import { NOW, approval, profile, state } from './fixtures';
import { renderApp } from './helpers';

const banner = () => screen.queryByText('AI access is paused: every tool call is refused');

describe('header, banner and status line', () => {
  it('shows the version and the pause switch off', async () => {
    renderApp();
    expect(await screen.findByText('v0.4.0')).toBeTruthy();
    const sw = screen.getByRole('switch', { name: 'Pause AI access' });
    expect(sw.getAttribute('aria-checked')).toBe('false');
    expect(banner()).toBeNull();
  });

  it('the pause switch calls SetPaused and the banner follows the "state" event', async () => {
    renderApp();
    const sw = await screen.findByRole('switch', { name: 'Pause AI access' });
    await waitFor(() => expect(callsOf('State').length).toBe(1));
    await fireEvent.click(sw);
    expect(callsOf('SetPaused')).toEqual([[true]]);

    emit('state', state({ paused: true }));
    await waitFor(() => expect(banner()).not.toBeNull());
    expect(banner()?.getAttribute('role')).toBe('alert');
    expect(sw.getAttribute('aria-checked')).toBe('true');

    await waitFor(() => expect((sw as HTMLButtonElement).disabled).toBe(false));
    await fireEvent.click(sw);
    expect(callsOf('SetPaused')).toEqual([[true], [false]]);
    emit('state', state({ paused: false }));
    await waitFor(() => expect(banner()).toBeNull());
  });

  it('shows the banner when the window opens paused', async () => {
    renderApp({ state: state({ paused: true }) });
    await waitFor(() => expect(banner()).not.toBeNull());
  });

  it('shows a failed SetPaused in the status line', async () => {
    renderApp({ fail: { SetPaused: 'could not save the pause switch: disk full' } });
    await fireEvent.click(await screen.findByRole('switch', { name: 'Pause AI access' }));
    expect(await screen.findByText('could not save the pause switch: disk full')).toBeTruthy();
    expect(banner()).toBeNull();
  });

  it('badges Approvals with held calls plus pairing requests', async () => {
    renderApp({
      state: state({ approvals: [approval(), approval({ id: 'r2' })], pairing: [{ id: 'x', label: 'Home', code: 'K7M4PX', sinceMs: NOW, expiresMs: NOW + 600_000 }] }),
    });
    expect(await screen.findByTitle('3 waiting for you')).toBeTruthy();
    emit('state', state({ approvals: [approval()] }));
    expect(await screen.findByTitle('1 waiting for you')).toBeTruthy();
    emit('state', state());
    await waitFor(() => expect(screen.queryByTitle(/waiting for you/)).toBeNull());
  });

  it('shows "notice" events, and dismisses them', async () => {
    renderApp({ state: state({ profiles: [profile()] }) });
    expect(await screen.findByText('1 of 1 profile connected')).toBeTruthy();
    emit('notice', { kind: 'error', text: 'The test browser did not start: no Chromium found' });
    const text = await screen.findByText('The test browser did not start: no Chromium found');
    expect(text.closest('footer')?.classList.contains('error')).toBe(true);
    await fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByText(/did not start/)).toBeNull();
    emit('notice', { kind: 'info', text: 'Claude Desktop: added Tether' });
    const info = await screen.findByText('Claude Desktop: added Tether');
    expect(info.closest('footer')?.classList.contains('info')).toBe(true);
  });

  it('says when Tether cannot be reached, once, and clears it when it is back', async () => {
    renderApp({ state: state({ profiles: [profile()] }) });
    expect(await screen.findByText('1 of 1 profile connected')).toBeTruthy();
    const problem = 'Tether is not running; start it from your applications menu';
    emit('state', state({ profiles: [profile()], connected: false, problem }));
    const text = await screen.findByText(problem);
    expect(text.closest('footer')?.classList.contains('error')).toBe(true);
    await fireEvent.click(screen.getByRole('button', { name: 'Dismiss' }));
    emit('state', state({ profiles: [profile()], connected: false, problem }));
    await new Promise((r) => setTimeout(r, 10));
    expect(screen.queryByText(problem)).toBeNull(); // the same problem is not repeated
    emit('state', state({ profiles: [profile()], connected: false, problem: 'Tether is not answering' }));
    expect(await screen.findByText('Tether is not answering')).toBeTruthy();
    emit('state', state({ profiles: [profile()] }));
    await waitFor(() => expect(screen.queryByText('Tether is not answering')).toBeNull());
  });

  it('reports its first painted frame once', async () => {
    const { unmount } = renderApp();
    await waitFor(() => expect(callsOf('Painted')).toEqual([[]]));
    await new Promise((r) => setTimeout(r, 50));
    expect(callsOf('Painted').length).toBe(1);
    unmount();
  });

  it('keeps a "state" event that arrives before the State() answer', async () => {
    const { unmount } = renderApp({ hold: new Set(['State']), state: state({ paused: false }) });
    await waitFor(() => expect(callsOf('State').length).toBe(1));
    emit('state', state({ paused: true }));
    release('State');
    await waitFor(() => expect(banner()).not.toBeNull());
    await new Promise((r) => setTimeout(r, 10));
    expect(banner()).not.toBeNull(); // the older answer did not win
    unmount();
  });

  it('subscribes to the events and unsubscribes when closed', async () => {
    const { unmount } = renderApp();
    expect([listeners('state'), listeners('timeline'), listeners('notice')]).toEqual([1, 1, 1]);
    unmount();
    expect([listeners('state'), listeners('timeline'), listeners('notice')]).toEqual([0, 0, 0]);
  });
});

describe('keyboard and approvals', () => {
  it('Ctrl+2 opens the timeline and Ctrl+5 the extension page; other keys do nothing', async () => {
    renderApp();
    await waitFor(() => expect(callsOf('State').length).toBe(1));
    await fireEvent.keyDown(window, { key: '2', ctrlKey: true });
    expect(await screen.findByRole('heading', { name: 'Timeline' })).toBeTruthy();
    await fireEvent.keyDown(window, { key: '5', ctrlKey: true });
    expect(await screen.findByRole('heading', { name: 'Extension' })).toBeTruthy();
    await fireEvent.keyDown(window, { key: '2' });
    await fireEvent.keyDown(window, { key: '9', ctrlKey: true });
    expect(screen.getByRole('heading', { name: 'Extension' })).toBeTruthy();
  });

  it('a newly held call opens the Approvals page', async () => {
    renderApp();
    await waitFor(() => expect(callsOf('State').length).toBe(1));
    emit('state', state({ approvals: [approval()] }));
    expect(await screen.findByRole('button', { name: /Allow once/ })).toBeTruthy();
  });
});
