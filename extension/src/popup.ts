// Popup entry: shows the connection state, the profile's assigned label and
// slug, and the daemon's last refusal.
import type { ConnectionStatus } from './shared/messages';
import { popupView } from './popup/view';

async function render(): Promise<void> {
  const [session, local] = await Promise.all([
    chrome.storage.session.get('status'),
    chrome.storage.local.get(['assignedLabel', 'assignedSlug', 'label']),
  ]);
  const view = popupView(session.status as ConnectionStatus | undefined, local);
  const state = document.getElementById('state')!;
  state.textContent = view.stateText;
  state.className = `state ${view.stateClass}`;
  document.getElementById('label')!.textContent = view.label;
  document.getElementById('slug')!.textContent = view.slug;
  const refusal = document.getElementById('refusal')!;
  refusal.hidden = !view.refusal;
  refusal.textContent = view.refusal ?? '';
}

chrome.storage.onChanged.addListener(() => void render());
void render();
