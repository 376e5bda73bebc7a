import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import type { ExtensionState } from '../types';
import { callsOf } from './fake-app';
import { emit } from './fake-runtime';
import { profile, state } from './fixtures';
import { open, renderApp } from './helpers';

const steps = [
  'In the Chrome profile the AI may use, open chrome://extensions.',
  'Turn on “Developer mode” (top right).',
  'Click “Load unpacked” and choose the folder /home/me/.config/tether/extension.',
];

function ext(over: Partial<ExtensionState> = {}): ExtensionState {
  return {
    connected: false, known: 0, dir: '/home/me/.config/tether/extension', written: true, writtenVersion: '0.4.0',
    version: '0.4.0', id: 'kjmbbnkmfdppnbhbgbfhfmfkibbhbgni', outdated: [], steps, ...over,
  };
}

const warning = () => screen.queryByText(/write it again, then reload it in\s+chrome:\/\/extensions/);

describe('Extension page', () => {
  it('shows the folder, the id and the steps as an ordered list', async () => {
    renderApp({ extension: ext() });
    await open('Extension');
    expect(await screen.findByText('/home/me/.config/tether/extension')).toBeTruthy();
    expect(screen.getByText('kjmbbnkmfdppnbhbgbfhfmfkibbhbgni')).toBeTruthy();
    expect(screen.getByText('No extension has connected yet')).toBeTruthy();
    const list = screen.getByRole('list');
    expect(list.tagName).toBe('OL');
    expect(within(list).getAllByRole('listitem').map((li) => li.textContent)).toEqual(steps);
    expect(warning()).toBeNull();
  });

  it('warns when the written extension is older, until it is written again', async () => {
    renderApp({ extension: ext({ writtenVersion: '0.3.1' }) });
    await open('Extension');
    await waitFor(() => expect(warning()).not.toBeNull());
    expect(warning()?.textContent).toContain('0.3.1');

    await fireEvent.click(screen.getByRole('button', { name: 'Write the extension' }));
    expect(callsOf('WriteExtension').length).toBe(1);
    await waitFor(() => expect(warning()).toBeNull());
    expect(screen.getByText(/Extension 0.4.0 written to/)).toBeTruthy();
  });

  it('names each profile whose extension is outdated, with how to reload it', async () => {
    const message = 'The extension is outdated (0.3.0; Tether has 0.4.0). Tether did not write its folder, so it does not update it: open chrome://extensions and press Reload on Tether.';
    renderApp({ extension: ext({ connected: true, known: 1, outdated: [{ profile: 'Work', message }] }) });
    await open('Extension');
    const alert = await screen.findByText(/Tether did not write its folder/);
    expect(alert.textContent).toContain('Work:');
    expect(alert.textContent).toContain('press Reload on Tether');
  });

  it('says when it was never written', async () => {
    renderApp({ extension: ext({ written: false, writtenVersion: '' }) });
    await open('Extension');
    expect(await screen.findByText('not yet')).toBeTruthy();
    expect(warning()).toBeNull();
  });

  it('shows the folder and opens a test browser', async () => {
    renderApp({ extension: ext() });
    await open('Extension');
    await fireEvent.click(await screen.findByRole('button', { name: 'Show folder' }));
    expect(callsOf('RevealExtension').length).toBe(1);
    await waitFor(() => expect((screen.getByRole('button', { name: 'Open a test browser' }) as HTMLButtonElement).disabled).toBe(false));
    await fireEvent.click(screen.getByRole('button', { name: 'Open a test browser' }));
    expect(callsOf('OpenTestBrowser').length).toBe(1);
    expect(await screen.findByText(/Starting a test browser/)).toBeTruthy();
  });

  it('shows a failed write', async () => {
    renderApp({ extension: ext(), fail: { WriteExtension: 'mkdir /ro: read-only file system; check that / is writable' } });
    await open('Extension');
    await fireEvent.click(await screen.findByRole('button', { name: 'Write the extension' }));
    expect(await screen.findByText('mkdir /ro: read-only file system; check that / is writable')).toBeTruthy();
  });

  it('reads the page again when a profile connects', async () => {
    const { backend } = renderApp({ extension: ext() });
    await open('Extension');
    await screen.findByText('No extension has connected yet');
    backend.extension = ext({ connected: true, known: 1 });
    emit('state', state({ profiles: [profile()] }));
    expect(await screen.findByText('An extension is connected')).toBeTruthy();
    expect(callsOf('Extension').length).toBe(2);
    emit('state', state({ profiles: [profile()], paused: true }));
    await new Promise((r) => setTimeout(r, 10));
    expect(callsOf('Extension').length).toBe(2); // nothing about profiles changed
  });
});
