import { fireEvent, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { backend, callsOf, release } from './fake-app';
import { emit } from './fake-runtime';
import { entry } from './fixtures';
import { open, renderApp } from './helpers';

/** The tool column of the shown rows, top to bottom. */
function tools(): string[] {
  const table = screen.getByRole('table');
  return [...table.querySelectorAll('tbody tr td.tool')].map((td) => td.textContent ?? '');
}

function rows() {
  return [...screen.getByRole('table').querySelectorAll('tbody tr')] as HTMLElement[];
}

const sample = () => [
  entry({ id: 1, tool: 'browser_tabs', outcome: 'ok' }),
  entry({ id: 2, tool: 'browser_navigate', outcome: 'denied', class: 'navigate', decision: 'denied by the user' }),
  entry({ id: 3, tool: 'browser_click', outcome: 'error', error: 'element e7 is gone: take a new snapshot' }),
];

describe('Timeline page', () => {
  it('renders the rows newest first', async () => {
    renderApp({ timeline: sample() });
    await open('Timeline');
    await waitFor(() => expect(tools()).toEqual(['browser_click', 'browser_navigate', 'browser_tabs']));
    const first = rows()[0];
    expect(within(first).getByText('claude-ai')).toBeTruthy();
    expect(within(first).getByText('12.5 ms')).toBeTruthy();
    expect(within(first).getByText('error').className).toContain('error');
    expect(within(first).getByText('element e7 is gone: take a new snapshot')).toBeTruthy();
    expect(callsOf('Timeline')[0][0]).toEqual({ client: '', profile: '', outcome: '', beforeId: 0, limit: 100 });
  });

  it('prepends a row on a "finished" event, and ignores "started"', async () => {
    renderApp({ timeline: sample() });
    await open('Timeline');
    await waitFor(() => expect(tools().length).toBe(3));

    emit('timeline', { kind: 'started', entry: entry({ id: 0, tool: 'browser_type', outcome: '' }), dropped: 0 });
    emit('timeline', { kind: 'finished', entry: entry({ id: 4, tool: 'browser_type', outcome: 'ok' }), dropped: 0 });
    await waitFor(() => expect(tools()).toEqual(['browser_type', 'browser_click', 'browser_navigate', 'browser_tabs']));
    // The same row again (e.g. also in a reload) is shown once.
    emit('timeline', { kind: 'finished', entry: entry({ id: 4, tool: 'browser_type', outcome: 'ok' }), dropped: 0 });
    expect(tools().length).toBe(4);
    expect(callsOf('Timeline').length).toBe(1); // no reload, no polling
  });

  it('records live rows while another page is open', async () => {
    renderApp({ timeline: sample() });
    await waitFor(() => expect(callsOf('Timeline').length).toBe(1));
    emit('timeline', { kind: 'finished', entry: entry({ id: 9, tool: 'browser_press_key' }), dropped: 0 });
    await open('Timeline');
    await waitFor(() => expect(tools()[0]).toBe('browser_press_key'));
  });

  it('filters by outcome with Timeline({outcome}) and keeps live rows to the filter', async () => {
    renderApp({ timeline: sample() });
    await open('Timeline');
    await waitFor(() => expect(tools().length).toBe(3));

    await fireEvent.change(screen.getByRole('combobox', { name: 'Outcome' }), { target: { value: 'denied' } });
    await waitFor(() => expect(tools()).toEqual(['browser_navigate']));
    expect(callsOf('Timeline').at(-1)?.[0]).toMatchObject({ outcome: 'denied', beforeId: 0 });

    emit('timeline', { kind: 'finished', entry: entry({ id: 5, tool: 'browser_fill', outcome: 'ok' }), dropped: 0 });
    emit('timeline', { kind: 'finished', entry: entry({ id: 6, tool: 'browser_select', outcome: 'denied' }), dropped: 0 });
    await waitFor(() => expect(tools()).toEqual(['browser_select', 'browser_navigate']));

    await fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    await waitFor(() => expect(tools().length).toBe(3));
    expect(callsOf('Timeline').at(-1)?.[0]).toMatchObject({ outcome: '', client: '', profile: '' });
  });

  it('filters by client and profile from TimelineFacets, refreshed when a new client shows up', async () => {
    renderApp({
      timeline: [...sample(), entry({ id: 7, client: 'cursor', profile: 'home', tool: 'browser_back' })],
      facets: { clients: ['claude-ai', 'cursor'], profiles: ['home', 'work'], outcomes: ['ok', 'error', 'refused', 'denied', 'paused', 'ignored'] },
    });
    await open('Timeline');
    const client = screen.getByRole('combobox', { name: 'Client' });
    await waitFor(() => expect(within(client).getByRole('option', { name: 'cursor' })).toBeTruthy());

    await fireEvent.change(client, { target: { value: 'cursor' } });
    await waitFor(() => expect(tools()).toEqual(['browser_back']));
    expect(callsOf('Timeline').at(-1)?.[0]).toMatchObject({ client: 'cursor' });

    await fireEvent.change(screen.getByRole('combobox', { name: 'Profile' }), { target: { value: 'work' } });
    await waitFor(() => expect(screen.getByText('No calls match these filters')).toBeTruthy());
    expect(callsOf('Timeline').at(-1)?.[0]).toMatchObject({ client: 'cursor', profile: 'work' });

    expect(callsOf('TimelineFacets').length).toBe(1);
    backend.facets = { ...backend.facets, clients: ['claude-ai', 'cursor', 'windsurf'] };
    emit('timeline', { kind: 'finished', entry: entry({ id: 8, client: 'windsurf' }), dropped: 0 });
    await waitFor(() => expect(within(client).getByRole('option', { name: 'windsurf' })).toBeTruthy());
    expect(callsOf('TimelineFacets').length).toBe(2);
    emit('timeline', { kind: 'finished', entry: entry({ id: 10, client: 'claude-ai' }), dropped: 0 });
    expect(callsOf('TimelineFacets').length).toBe(2); // a known client asks nothing
  });

  it('shows every field of a clicked row', async () => {
    renderApp({
      timeline: [
        entry({
          id: 3, tool: 'browser_click', outcome: 'error', class: 'interact', site: 'shop.example',
          decision: 'allow (interact on an allowed site)', args: 'ref=e7 element="Buy now"',
          error: 'element e7 is gone: take a new snapshot, then click again', durationMs: 1520.4, tab: 4,
        }),
      ],
    });
    await open('Timeline');
    await waitFor(() => expect(tools().length).toBe(1));
    expect(screen.queryByRole('complementary', { name: 'Call details' })).toBeNull();

    await fireEvent.click(rows()[0]);
    const details = screen.getByRole('complementary', { name: 'Call details' });
    for (const text of [
      'allow (interact on an allowed site)', 'interact', 'shop.example', 'ref=e7 element="Buy now"',
      'element e7 is gone: take a new snapshot, then click again', '1,520 ms', '4', 'claude-ai', 'work',
    ]) {
      expect(within(details).getByText(text)).toBeTruthy();
    }
    expect(rows()[0].getAttribute('aria-selected')).toBe('true');

    await fireEvent.click(within(details).getByRole('button', { name: 'Close details' }));
    expect(screen.queryByRole('complementary', { name: 'Call details' })).toBeNull();
  });

  it.each([
    ['the daemon dropped events', 2],
    ['the event stream reconnected', 0],
  ])('reloads the list on a resync: %s', async (_why, dropped) => {
    renderApp({ timeline: sample() });
    await open('Timeline');
    await waitFor(() => expect(tools().length).toBe(3));
    // Missed while the window was busy or away: in the daemon, never sent as events.
    backend.timeline.push(entry({ id: 11, tool: 'browser_scroll' }), entry({ id: 12, tool: 'browser_hover' }));
    emit('timeline', { kind: 'resync', entry: entry({ id: 0, tool: '' }), dropped });
    await waitFor(() => expect(tools()).toEqual(['browser_hover', 'browser_scroll', 'browser_click', 'browser_navigate', 'browser_tabs']));
    expect(callsOf('Timeline').length).toBe(2);
    expect(callsOf('TimelineFacets').length).toBe(2);
  });

  it('keeps rows recorded while a reload is in flight', async () => {
    renderApp({ timeline: sample() });
    await open('Timeline');
    await waitFor(() => expect(tools().length).toBe(3));
    backend.hold.add('Timeline');
    await fireEvent.change(screen.getByRole('combobox', { name: 'Outcome' }), { target: { value: 'ok' } });
    emit('timeline', { kind: 'finished', entry: entry({ id: 20, tool: 'browser_wait', outcome: 'ok' }), dropped: 0 });
    backend.hold.clear();
    release('Timeline');
    await waitFor(() => expect(tools()).toEqual(['browser_wait', 'browser_tabs']));
  });

  it('pages with "Load older" and beforeId = the last row', async () => {
    const many = Array.from({ length: 150 }, (_, i) => entry({ id: i + 1, tool: `tool_${i + 1}` }));
    renderApp({ timeline: many });
    await open('Timeline');
    await waitFor(() => expect(tools().length).toBe(100));
    expect(tools()[0]).toBe('tool_150');
    expect(tools()[99]).toBe('tool_51');

    await fireEvent.click(screen.getByRole('button', { name: 'Load older' }));
    await waitFor(() => expect(tools().length).toBe(150));
    expect(callsOf('Timeline').at(-1)?.[0]).toMatchObject({ beforeId: 51, limit: 100 });
    expect(tools().at(-1)).toBe('tool_1');
    expect(screen.queryByRole('button', { name: 'Load older' })).toBeNull();
  });

  it('exports the filtered rows and shows where they were saved', async () => {
    renderApp({ timeline: sample(), exportPath: '/home/me/tether-timeline-2025-06-03.jsonl' });
    await open('Timeline');
    await waitFor(() => expect(tools().length).toBe(3));
    await fireEvent.change(screen.getByRole('combobox', { name: 'Outcome' }), { target: { value: 'error' } });
    await waitFor(() => expect(tools().length).toBe(1));

    await fireEvent.click(screen.getByRole('button', { name: 'Export JSON Lines' }));
    expect(await screen.findByText('Timeline exported to /home/me/tether-timeline-2025-06-03.jsonl (only the calls matching the filters)')).toBeTruthy();
    expect(callsOf('ExportTimeline')).toEqual([[{ client: '', profile: '', outcome: 'error', beforeId: 0, limit: 0 }]]);
  });

  it('says nothing when the export is cancelled, and shows an export error', async () => {
    const { backend: b } = renderApp({ timeline: sample(), exportPath: '' });
    await open('Timeline');
    await fireEvent.click(screen.getByRole('button', { name: 'Export JSON Lines' }));
    await waitFor(() => expect(callsOf('ExportTimeline').length).toBe(1));
    expect(screen.queryByText(/exported to/)).toBeNull();

    b.fail.ExportTimeline = 'export the timeline to /ro/x.jsonl: permission denied';
    await fireEvent.click(screen.getByRole('button', { name: 'Export JSON Lines' }));
    expect(await screen.findByText('export the timeline to /ro/x.jsonl: permission denied')).toBeTruthy();
  });

  it('shows an empty state', async () => {
    renderApp();
    await open('Timeline');
    expect(await screen.findByText('No calls yet')).toBeTruthy();
  });

  it('renders arguments and errors as text', async () => {
    const evil = '<img src=x onerror=alert(1)>';
    renderApp({ timeline: [entry({ args: evil, error: evil, outcome: 'error' })] });
    await open('Timeline');
    await waitFor(() => expect(screen.getAllByText(evil).length).toBe(2));
    expect(document.querySelector('img')).toBeNull();
  });
});
