import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { callsOf } from './fake-app';
import { emit } from './fake-runtime';
import { NOW, profile, state } from './fixtures';
import { renderApp } from './helpers';

describe('Profiles & tabs page', () => {
  it('renders each profile with its tabs and highlights the tab the AI acts on', async () => {
    renderApp({
      state: state({
        profiles: [
          profile({
            tabs: [
              { number: 1, title: 'Inbox', url: 'https://mail.example.com/inbox', current: false, acting: false, owner: '' },
              { number: 2, title: 'Pull request #42', url: 'https://git.example.com/pr/42', current: true, acting: true, owner: 'claude-code' },
            ],
          }),
          profile({ id: 'p-home', label: 'Home', slug: 'home', status: 'disconnected', lastSeenMs: NOW - 3 * 3600_000, extVersion: '0.3.9' }),
        ],
      }),
    });

    const work = await screen.findByRole('article', { name: 'Profile Work' });
    expect(within(work).getByText('work')).toBeTruthy();
    expect(within(work).getByText('connected')).toBeTruthy();
    expect(within(work).getByText('Extension 0.4.0')).toBeTruthy();

    const rows = within(work).getAllByRole('row').slice(1); // past the header
    expect(rows.map((r) => r.querySelector('td')?.textContent)).toEqual(['1', '2']);
    const acting = rows.find((r) => r.classList.contains('acting'));
    expect(acting?.textContent).toContain('Pull request #42');
    expect(within(acting!).getByText('AI acting now')).toBeTruthy();
    expect(within(acting!).getByText('current')).toBeTruthy();
    expect(rows[0].classList.contains('acting')).toBe(false);
    expect(rows[0].textContent).not.toContain('AI acting now');
    expect(work.classList.contains('acting')).toBe(true);

    // URLs are text: nothing in the window can navigate its own webview away.
    expect(within(work).getByText('https://git.example.com/pr/42').tagName).toBe('TD');
    expect(document.querySelectorAll('a').length).toBe(0);

    const home = screen.getByRole('article', { name: 'Profile Home' });
    expect(within(home).getByText('disconnected')).toBeTruthy();
    expect(within(home).getByText('Last seen 3 h ago')).toBeTruthy();
    expect(home.classList.contains('acting')).toBe(false);
  });

  it('marks a profile acting without a tab', async () => {
    renderApp({ state: state({ profiles: [profile({ acting: true })] }) });
    const work = await screen.findByRole('article', { name: 'Profile Work' });
    expect(within(work).getByText('AI acting now')).toBeTruthy();
    expect(within(work).getByText(/No shared tabs/)).toBeTruthy();
  });

  it('follows "state" events: the acting highlight moves and clears', async () => {
    const tabs = [
      { number: 1, title: 'One', url: 'https://one.example/', current: true, acting: false, owner: '' },
      { number: 2, title: 'Two', url: 'https://two.example/', current: false, acting: false, owner: '' },
    ];
    renderApp({ state: state({ profiles: [profile({ tabs })] }) });
    await screen.findByText('One');
    expect(screen.queryByText('AI acting now')).toBeNull();

    emit('state', state({ profiles: [profile({ tabs: [tabs[0], { ...tabs[1], acting: true }] })] }));
    await waitFor(() => expect(screen.getByText('Two').closest('tr')?.classList.contains('acting')).toBe(true));

    emit('state', state({ profiles: [profile({ tabs })] }));
    await waitFor(() => expect(screen.queryByText('AI acting now')).toBeNull());
  });

  it('renders page text as text, never as HTML', async () => {
    const evil = '<img src=x onerror=alert(1)>';
    renderApp({
      state: state({
        profiles: [profile({ label: evil, tabs: [{ number: 1, title: evil, url: 'javascript:alert(1)', current: true, acting: false, owner: '' }] })],
      }),
    });
    const cells = await screen.findAllByText(evil);
    expect(cells.length).toBeGreaterThanOrEqual(2); // the label and the tab title
    expect(document.querySelector('img')).toBeNull();
    expect(screen.getByText('javascript:alert(1)').tagName).toBe('TD');
  });

  it("shows whose each tab is, and gives a tab to an app or back to the user", async () => {
    const tabs = [
      { number: 1, title: 'Mine', url: 'https://one.example/', current: true, acting: false, owner: '' },
      { number: 2, title: 'Agent tab', url: 'https://two.example/', current: false, acting: false, owner: 'claude-code' },
    ];
    renderApp({ state: state({ apps: ['claude-code', 'cursor'], profiles: [profile({ tabs })] }) });
    const mine = (await screen.findByRole('combobox', { name: 'Whose tab 1 is' })) as HTMLSelectElement;
    const agent = screen.getByRole('combobox', { name: 'Whose tab 2 is' }) as HTMLSelectElement;
    expect(mine.value).toBe('');
    expect(agent.value).toBe('claude-code');
    expect(within(mine).getAllByRole('option').map((o) => o.textContent)).toEqual(['Yours (every app)', 'claude-code', 'cursor']);

    await fireEvent.change(mine, { target: { value: 'cursor' } });
    await waitFor(() => expect(callsOf('SetTabOwner')).toEqual([['work', 1, 'cursor']]));
    await fireEvent.change(agent, { target: { value: '' } });
    await waitFor(() => expect(callsOf('SetTabOwner')).toEqual([['work', 1, 'cursor'], ['work', 2, '']]));
  });

  it('points to the Extension page when no profile is known', async () => {
    renderApp();
    const button = await screen.findByRole('button', { name: 'Open the Extension page' });
    expect(screen.getByText('No browser profile yet')).toBeTruthy();
    await fireEvent.click(button);
    expect(await screen.findByRole('heading', { name: 'Extension' })).toBeTruthy();
    expect(callsOf('Extension').length).toBe(1);
  });

  it('says when new profiles wait for approval', async () => {
    renderApp({ state: state({ profiles: [profile()], pairing: [{ id: 'x', label: 'Personal', code: 'K7M4PX', sinceMs: NOW, expiresMs: NOW + 600_000 }] }) });
    expect(await screen.findByText('1 new browser profile wants to connect.')).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Review in Approvals' }));
    expect(await screen.findByRole('heading', { name: 'Approvals' })).toBeTruthy();
  });
});
