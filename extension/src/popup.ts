// Popup entry (also works opened as a tab): the connection state with its
// next step, the profile's label and slug, the tabs with their share
// switches ("Share this tab" for the current one), and the settings.
import type { BackgroundMessage, ConnectionStatus, PopupBrokerReply, PopupTabs } from './shared/messages';
import { popupView, renderActiveShare, renderStatus, renderTabList, trustedInputChecked } from './popup/view';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

function send<T>(msg: BackgroundMessage): Promise<T> {
  return chrome.runtime.sendMessage(msg) as Promise<T>;
}

async function refreshStatus(): Promise<void> {
  const [session, local] = await Promise.all([
    chrome.storage.session.get('status'),
    chrome.storage.local.get(['assignedLabel', 'assignedSlug', 'label', 'daemonVersion', 'brokerUrl', 'brokerProfiles']),
  ]);
  renderStatus(document, popupView(session.status as ConnectionStatus | undefined, local));
  const broker = $<HTMLInputElement>('broker');
  const stored = typeof local.brokerUrl === 'string' ? local.brokerUrl : '';
  if (document.activeElement !== broker && !brokerEdited) broker.value = stored;
  $('broker-local').hidden = stored === '';
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

/** The list's last rendering, so that a poll that changes nothing keeps focus and scroll untouched. */
let lastTabs = '';
async function refreshTabs(): Promise<void> {
  const got = await send<PopupTabs | undefined>({ target: 'background', kind: 'popup-tabs' });
  if (!got) return;
  const key = JSON.stringify(got);
  if (key === lastTabs) return;
  lastTabs = key;
  const list = $('tabs');
  const focused = document.activeElement instanceof HTMLElement && list.contains(document.activeElement) ? document.activeElement : undefined;
  const refocus = focused && { tabId: focused.closest<HTMLElement>('[data-tab-id]')?.dataset.tabId, cls: focused.className };
  renderTabList(list, got.tabs, { onToggle: setShared, onTakeBack: takeBack });
  if (refocus?.tabId) list.querySelector<HTMLElement>(`[data-tab-id="${refocus.tabId}"] .${refocus.cls.split(' ').pop()}`)?.focus();
  renderActiveShare(document, got.tabs.find((t) => t.tabId === got.activeTabId));
}

let tabsTimer: ReturnType<typeof setTimeout> | undefined;
function scheduleTabs(): void {
  clearTimeout(tabsTimer);
  tabsTimer = setTimeout(() => void refreshTabs().catch((err: unknown) => console.error('tether: popup tabs', err)), 50);
}

$('share-active').addEventListener('click', (ev) => {
  const button = ev.currentTarget as HTMLButtonElement;
  const tabId = Number(button.dataset.tabId);
  if (button.dataset.tabId && Number.isInteger(tabId)) setShared(tabId, button.dataset.shared !== 'true');
});
const reconnect = () => void send({ target: 'background', kind: 'popup-reconnect' });
$('reconnect').addEventListener('click', reconnect);
$('retry').addEventListener('click', reconnect);
$('pair-again').addEventListener('click', () => void send({ target: 'background', kind: 'popup-pair-again' }));
// The remote broker: '' is the local daemon. The service worker checks the
// URL (parseBrokerUrl) and answers with the sentence to show when it refuses.
let brokerEdited = false;
$('broker').addEventListener('input', () => (brokerEdited = true));
async function useBroker(url: string): Promise<void> {
  const error = $('broker-error');
  const reply = await send<PopupBrokerReply | undefined>({ target: 'background', kind: 'popup-broker', url });
  if (!reply) {
    error.textContent = 'The extension did not answer: reload it at chrome://extensions and try again.';
    error.hidden = false;
    return;
  }
  if (!reply.ok) {
    error.textContent = reply.error;
    error.hidden = false;
    return;
  }
  error.hidden = true;
  brokerEdited = false;
  $<HTMLInputElement>('broker').blur();
  await refreshStatus();
}
$('broker-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void useBroker($<HTMLInputElement>('broker').value);
});
$('broker-local').addEventListener('click', () => {
  $<HTMLInputElement>('broker').value = '';
  void useBroker('');
});
$('rename-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const input = $<HTMLInputElement>('rename');
  void send({ target: 'background', kind: 'popup-rename', label: input.value }).then(() => input.blur());
});
// Extension pages cannot navigate to chrome:// URLs by a link: open a tab.
$('shortcuts-link').addEventListener('click', (ev) => {
  ev.preventDefault();
  void chrome.tabs.create({ url: 'chrome://extensions/shortcuts' });
});
void chrome.commands
  .getAll()
  .then((commands) => {
    const key = commands.find((c) => c.name === 'toggle-share')?.shortcut;
    $('shortcut').textContent = key || 'not set';
  })
  .catch(() => undefined);

// "Trusted input": the user's switch, stored in chrome.storage.local. The
// debugger permission itself is a required one: Chrome does not allow
// "debugger" in optional_permissions (chrome.permissions, "Permissions that
// can't be optional").
const TRUSTED_KEY = 'trustedInput';
// A change by the user before the stored value was read wins over that read.
let trustedTouched = false;
async function renderTrusted(): Promise<void> {
  const stored = await chrome.storage.local.get(TRUSTED_KEY);
  if (!trustedTouched) $<HTMLInputElement>('trusted-input').checked = trustedInputChecked(stored[TRUSTED_KEY]);
}
$<HTMLInputElement>('trusted-input').addEventListener('change', (ev) => {
  trustedTouched = true;
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
  void refreshStatus();
  if (area === 'session') scheduleTabs();
});
chrome.tabs.onUpdated.addListener(scheduleTabs);
chrome.tabs.onCreated.addListener(scheduleTabs);
chrome.tabs.onRemoved.addListener(scheduleTabs);
chrome.tabs.onActivated.addListener(scheduleTabs);
chrome.windows.onFocusChanged.addListener(scheduleTabs);
// Whether an AI acts on a tab lives in the service worker's memory: ask
// again every second while the popup is open.
setInterval(scheduleTabs, 1000);
void refreshStatus();
scheduleTabs();
