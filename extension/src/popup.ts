// Popup entry (also works opened as a tab): connection state, the profile's
// label and slug (renameable), pairing and refusal messages, Reconnect, and
// the share toggles for the last-focused window's tabs.
import type { BackgroundMessage, ConnectionStatus, PopupTabs } from './shared/messages';
import { popupView, renderTabList, trustedInputChecked } from './popup/view';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

function send<T>(msg: BackgroundMessage): Promise<T> {
  return chrome.runtime.sendMessage(msg) as Promise<T>;
}

async function renderStatus(): Promise<void> {
  const [session, local] = await Promise.all([
    chrome.storage.session.get('status'),
    chrome.storage.local.get(['assignedLabel', 'assignedSlug', 'label']),
  ]);
  const view = popupView(session.status as ConnectionStatus | undefined, local);
  const state = $('state');
  state.textContent = view.stateText;
  state.className = `state ${view.stateClass}`;
  $('label').textContent = view.label;
  $('slug').textContent = view.slug;
  const pairing = $('pairing');
  pairing.hidden = !view.pairing;
  pairing.textContent = view.pairing ?? '';
  $('pairing-code-row').hidden = !view.pairingCode;
  $('pairing-code').textContent = view.pairingCode ?? '';
  const refusal = $('refusal');
  refusal.hidden = !view.refusal;
  refusal.textContent = view.refusal ?? '';
  $('reconnect').hidden = !view.halted;
  const rename = $<HTMLInputElement>('rename');
  if (document.activeElement !== rename) {
    rename.value = typeof local.label === 'string' && local.label ? local.label : typeof local.assignedLabel === 'string' ? local.assignedLabel : '';
  }
}

function setShared(tabId: number, shared: boolean): void {
  void send({ target: 'background', kind: 'popup-share', tabId, shared }).then(() => scheduleTabs());
}

function takeBack(tabId: number): void {
  void send({ target: 'background', kind: 'popup-take-back', tabId }).then(() => scheduleTabs());
}

async function renderTabs(): Promise<void> {
  const got = await send<PopupTabs | undefined>({ target: 'background', kind: 'popup-tabs' });
  if (!got) return;
  renderTabList($('tabs'), got.tabs, setShared, takeBack);
  const active = got.tabs.find((t) => t.tabId === got.activeTabId);
  const row = $('active-share');
  row.hidden = !active;
  const box = $<HTMLInputElement>('share-active');
  box.checked = active?.number !== undefined;
  box.dataset.tabId = active ? String(active.tabId) : '';
}

let tabsTimer: ReturnType<typeof setTimeout> | undefined;
function scheduleTabs(): void {
  clearTimeout(tabsTimer);
  tabsTimer = setTimeout(() => void renderTabs().catch((err: unknown) => console.error('tether: popup tabs', err)), 50);
}

$<HTMLInputElement>('share-active').addEventListener('change', (ev) => {
  const box = ev.currentTarget as HTMLInputElement;
  const tabId = Number(box.dataset.tabId);
  if (box.dataset.tabId && Number.isInteger(tabId)) setShared(tabId, box.checked);
});
$('reconnect').addEventListener('click', () => void send({ target: 'background', kind: 'popup-reconnect' }));
$('rename-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const input = $<HTMLInputElement>('rename');
  void send({ target: 'background', kind: 'popup-rename', label: input.value }).then(() => input.blur());
});

// "Trusted input": the user's switch, stored in chrome.storage.local. The
// debugger permission itself is a required one: Chrome does not allow
// "debugger" in optional_permissions (chrome.permissions, "Permissions that
// can't be optional").
const TRUSTED_KEY = 'trustedInput';
async function renderTrusted(): Promise<void> {
  const stored = await chrome.storage.local.get(TRUSTED_KEY);
  $<HTMLInputElement>('trusted-input').checked = trustedInputChecked(stored[TRUSTED_KEY]);
}
$<HTMLInputElement>('trusted-input').addEventListener('change', (ev) => {
  const box = ev.currentTarget as HTMLInputElement;
  const error = $('trusted-error');
  error.hidden = true;
  chrome.storage.local.set({ [TRUSTED_KEY]: box.checked }).catch((err: unknown) => {
    box.checked = !box.checked;
    error.textContent = `Could not change trusted input: ${err instanceof Error ? err.message : String(err)}`;
    error.hidden = false;
  });
});
void renderTrusted();

chrome.storage.onChanged.addListener((_changes, area) => {
  void renderStatus();
  if (area === 'session') scheduleTabs();
});
chrome.tabs.onUpdated.addListener(scheduleTabs);
chrome.tabs.onCreated.addListener(scheduleTabs);
chrome.tabs.onRemoved.addListener(scheduleTabs);
chrome.tabs.onActivated.addListener(scheduleTabs);
chrome.windows.onFocusChanged.addListener(scheduleTabs);
void renderStatus();
scheduleTabs();
