// Service worker entry: only wires Chrome listeners to the modules in
// background/. Listeners are registered synchronously at top level so Chrome
// can wake the worker for them.
import { ensureKeepaliveAlarm, ensureOffscreen, KEEPALIVE_ALARM } from './background/offscreen-doc';
import { onRuntimeMessage } from './background/router';
import { forgetTab, replaceTab, shareIfOpenedFromShared } from './background/shared-tabs';

const log = (what: string) => (err: unknown) => console.error(`tether: ${what}`, err);

function keepAlive(): void {
  ensureOffscreen().catch(log('create offscreen document'));
  ensureKeepaliveAlarm().catch(log('create keep-alive alarm'));
}

chrome.runtime.onInstalled.addListener(keepAlive);
chrome.runtime.onStartup.addListener(keepAlive);
chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === KEEPALIVE_ALARM) keepAlive();
});
chrome.runtime.onMessage.addListener(onRuntimeMessage);

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

keepAlive();
