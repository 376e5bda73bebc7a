// Test helpers: a fresh fake backend and window for each test.
import { fireEvent, render, screen } from '@testing-library/svelte';
import App from '../App.svelte';
import { resetApp, type Backend } from './fake-app';
import { resetRuntime } from './fake-runtime';

/** Renders the window over a fake backend set up with b. */
export function renderApp(b: Partial<Backend> = {}) {
  const backend = resetApp(b);
  resetRuntime();
  const view = render(App);
  return { backend, ...view };
}

/** Clicks a page in the left nav. */
export async function open(label: 'Profiles & tabs' | 'Timeline' | 'Approvals' | 'Connect' | 'Extension') {
  const nav = screen.getByRole('navigation', { name: 'Pages' });
  const button = [...nav.querySelectorAll('button')].find((b) => b.textContent?.trim().startsWith(label));
  if (!button) throw new Error(`no nav button ${label}`);
  await fireEvent.click(button);
}
