// Service worker entry: only wires Chrome listeners to the modules in
// background/. Listeners are registered synchronously at top level so Chrome
// can wake the worker for them.
import { ensureKeepaliveAlarm, ensureOffscreen, KEEPALIVE_ALARM } from './background/offscreen-doc';
import { onRuntimeMessage } from './background/router';
import {
  forgetTab,
  MENU_ID,
  onTabActivated,
  onTabUpdated,
  refreshMenu,
  replaceTab,
  shareIfOpenedFromShared,
  toggleShare,
} from './background/shared-tabs';
import { onNavigationCommitted, resetActing } from './background/tab-hooks';
import { keepDownloadsOf, onDownloadChanged, onDownloadCreated, reportDownload } from './background/downloads';
import {
  keepRingsOf,
  onBeforeRequest,
  onCompleted,
  onErrorOccurred,
  onHeadersReceived,
  onSendHeaders,
} from './background/network';
import { listenTo, startListening } from './background/network-listeners';
import { addNetworkError } from './background/page-records';
import { loadState, watchShared } from './background/state';
import { restoredAfterReload } from './background/update-reload';

const log = (what: string) => (err: unknown) => console.error(`tether: ${what}`, err);

function keepAlive(): void {
  ensureOffscreen().catch(log('create offscreen document'));
  ensureKeepaliveAlarm().catch(log('create keep-alive alarm'));
}

function createMenu(): void {
  chrome.contextMenus.removeAll(() => {
    chrome.contextMenus.create({ id: MENU_ID, type: 'checkbox', title: 'Share this tab with Tether', contexts: ['page', 'frame', 'selection', 'link', 'editable', 'image', 'video', 'audio'], checked: false }, () => {
      if (chrome.runtime.lastError) log('create context menu')(chrome.runtime.lastError.message);
      else void refreshMenu();
    });
  });
}

async function toggleActiveOr(tab: chrome.tabs.Tab | undefined): Promise<void> {
  let id = tab?.id;
  if (id === undefined) id = (await chrome.tabs.query({ active: true, lastFocusedWindow: true }))[0]?.id;
  if (id !== undefined && id !== chrome.tabs.TAB_ID_NONE) await toggleShare(id);
}

chrome.runtime.onInstalled.addListener(() => {
  keepAlive();
  createMenu();
});
chrome.runtime.onStartup.addListener(keepAlive);
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === KEEPALIVE_ALARM) keepAlive();
});
chrome.runtime.onMessage.addListener(onRuntimeMessage);
// Shared tabs' new documents get the hooks and the content script; unshared ones get nothing.
chrome.webNavigation.onCommitted.addListener((d) => {
  onNavigationCommitted(d).catch(log('hook new document'));
});

chrome.tabs.onCreated.addListener((tab) => {
  if (tab.id !== undefined) shareIfOpenedFromShared(tab.id, tab.openerTabId).catch(log('share opened tab'));
});
chrome.webNavigation.onCreatedNavigationTarget.addListener((d) => {
  shareIfOpenedFromShared(d.tabId, d.sourceTabId).catch(log('share opened tab'));
});
chrome.tabs.onRemoved.addListener((tabId) => {
  forgetTab(tabId).catch(log('forget closed tab'));
});
chrome.tabs.onReplaced.addListener((added, removed) => {
  replaceTab(added, removed).catch(log('replace tab'));
});
chrome.tabs.onUpdated.addListener((tabId, info, tab) => {
  onTabUpdated(tabId, info, tab).catch(log('tab updated'));
});
chrome.tabs.onActivated.addListener(({ tabId }) => {
  onTabActivated(tabId).catch(log('tab activated'));
});
chrome.windows.onFocusChanged.addListener(() => {
  refreshMenu().catch(log('refresh menu'));
});

// Sharing from the page's context menu and the keyboard command.
chrome.contextMenus.onClicked.addListener((info, tab) => {
  if (info.menuItemId === MENU_ID) toggleActiveOr(tab).catch(log('toggle share'));
});
chrome.commands.onCommand.addListener((command, tab) => {
  if (command === 'toggle-share') toggleActiveOr(tab).catch(log('toggle share'));
});

// Shared tabs' requests: webRequest listeners are registered per shared tab,
// once the state says which tabs are (network-listeners.ts); none while nothing is shared.
startListening({
  onBeforeRequest,
  onSendHeaders,
  onHeadersReceived,
  onCompleted,
  onErrorOccurred: (d) => {
    const req = onErrorOccurred(d);
    if (req) addNetworkError(d.tabId, { method: req.method, url: req.url, error: req.error, time: Date.now() }).catch(log('record network error'));
  },
});
chrome.downloads.onCreated.addListener((item) => {
  onDownloadCreated(item)
    .then((tab) => (tab === undefined ? false : reportDownload(item, tab)))
    .catch(log('attribute download'));
});
chrome.downloads.onChanged.addListener((delta) => {
  onDownloadChanged(delta).catch(log('download changed'));
});
// Records of tabs that stop being shared go with the sharing.
watchShared((ids) => {
  listenTo(ids);
  keepRingsOf(ids);
  keepDownloadsOf(ids).catch(log('forget downloads'));
});
loadState();
// After an update's reload: the shared tabs come back (a no-op on any other start).
void restoredAfterReload();

keepAlive();
// Chrome may have stopped the previous worker during a call: the pages' hooks stop acting for it.
resetActing().catch(log('reset acting'));
