import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import type { ClientView } from '../types';
import { callsOf } from './fake-app';
import { open, renderApp } from './helpers';

function client(over: Partial<ClientView>): ClientView {
  return {
    id: 'claude-desktop', name: 'Claude Desktop', path: '/home/me/.config/Claude/claude_desktop_config.json',
    installed: true, connected: false, mode: '', reload: 'restart Claude Desktop', error: '', ...over,
  };
}

const clients = () => [
  client({}),
  client({ id: 'cursor', name: 'Cursor', path: '/home/me/.cursor/mcp.json', connected: true, mode: 'stdio' }),
  client({ id: 'windsurf', name: 'Windsurf', path: '/home/me/.codeium/windsurf/mcp_config.json', installed: false }),
  client({ id: 'codex', name: 'Codex', path: '/home/me/.codex/config.toml', error: 'config.toml line 3: expected "="' }),
];

describe('Connect page', () => {
  it('lists the clients and their state', async () => {
    renderApp({ clients: clients() });
    await open('Connect');
    const claude = await screen.findByRole('article', { name: 'Claude Desktop' });
    expect(within(claude).getByText('Not connected')).toBeTruthy();
    expect(within(claude).getByText('/home/me/.config/Claude/claude_desktop_config.json')).toBeTruthy();
    expect(within(claude).getByRole('button', { name: 'Connect' })).toBeTruthy();

    const cursor = screen.getByRole('article', { name: 'Cursor' });
    expect(within(cursor).getByText('Connected (stdio)')).toBeTruthy();
    expect(within(cursor).getByRole('button', { name: 'Disconnect' })).toBeTruthy();

    expect(within(screen.getByRole('article', { name: 'Windsurf' })).getByText('Not installed')).toBeTruthy();
    expect(within(screen.getByRole('article', { name: 'Codex' })).getByText('config.toml line 3: expected "="')).toBeTruthy();
    expect(callsOf('Clients').length).toBe(1);
  });

  it('Connect calls Connect(id) and shows the message with its lines', async () => {
    const message = 'Claude Desktop: added Tether in /home/me/.config/Claude/claude_desktop_config.json\n' +
      '  previous file saved as claude_desktop_config.json.bak\n  next: restart Claude Desktop';
    renderApp({
      clients: clients(),
      outcomes: {
        'claude-desktop': { message, changed: true, client: client({ connected: true, mode: 'stdio' }) },
      },
    });
    await open('Connect');
    const claude = await screen.findByRole('article', { name: 'Claude Desktop' });
    await fireEvent.click(within(claude).getByRole('button', { name: 'Connect' }));
    expect(callsOf('Connect')).toEqual([['claude-desktop']]);

    const shown = await within(claude).findByText(/added Tether/);
    expect(shown.textContent).toBe(message); // newlines kept…
    expect(shown.tagName).toBe('PRE'); // …and shown as lines
    expect(within(claude).getByText('Connected (stdio)')).toBeTruthy();
    expect(within(claude).getByRole('button', { name: 'Disconnect' })).toBeTruthy();
  });

  it('Disconnect calls Disconnect(id)', async () => {
    renderApp({ clients: clients() });
    await open('Connect');
    const cursor = await screen.findByRole('article', { name: 'Cursor' });
    await fireEvent.click(within(cursor).getByRole('button', { name: 'Disconnect' }));
    expect(callsOf('Disconnect')).toEqual([['cursor']]);
    expect(await within(cursor).findByText('Cursor: removed Tether in /home/me/.cursor/mcp.json')).toBeTruthy();
    expect(within(cursor).getByRole('button', { name: 'Connect' })).toBeTruthy();
  });

  it('a rejected Connect shows the error, and the list is read again', async () => {
    const error = 'could not connect codex: config.toml line 3: expected "=" (the file was left as it was; fix it, or move it aside, then try again)';
    renderApp({ clients: clients(), fail: { Connect: error } });
    await open('Connect');
    const codex = await screen.findByRole('article', { name: 'Codex' });
    await fireEvent.click(within(codex).getByRole('button', { name: 'Connect' }));
    const shown = await within(codex).findByText(error);
    expect(shown.classList.contains('failed')).toBe(true);
    expect(screen.getByRole('status').textContent).toContain(error);
    await waitFor(() => expect(callsOf('Clients').length).toBe(2));
  });

  it('reads the clients again each time the page opens', async () => {
    renderApp({ clients: clients() });
    await open('Connect');
    await screen.findByRole('article', { name: 'Cursor' });
    await open('Timeline');
    await open('Connect');
    await waitFor(() => expect(callsOf('Clients').length).toBe(2));
  });
});
