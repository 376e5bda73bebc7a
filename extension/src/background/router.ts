// Routes runtime messages addressed to the service worker. Daemon traffic is
// accepted only from our offscreen document, popup requests only from our
// popup page (as a popup or opened in a tab), document numbering only from
// content scripts in a tab's top frame.
import type { HelloAck } from '../protocol.gen';
import { BROKER_PROFILES_KEY, BROKER_SECRETS_KEY, BROKER_URL_KEY, parseBrokerUrl, type BrokerProfile } from '../shared/broker';
import {
  DELAY_MAX_MS,
  isBackgroundMessage,
  type BackgroundMessage,
  type ConnectionStatus,
  type OffscreenMessage,
  type PopupBrokerReply,
  type PopupTabs,
} from '../shared/messages';
import { popupTabList } from '../shared/popup-tabs';
import { actingUntil } from './acting';
import { loadDaemonConfig, record } from './config';
import { markPreparing, markReading } from './content-bridge';
import { runOnce } from './idempotency';
import { handleRequest } from './methods/handlers';
import { ensureOffscreen } from './offscreen-doc';
import { onPageHooks } from './page-records';
import { claimDocument, nextDocument } from './documents';
import { setTabOwner, share, tabsChanged, unshare } from './shared-tabs';
import { readState } from './state';
import { reloadForUpdate, restoredAfterReload } from './update-reload';

export function onRuntimeMessage(msg: unknown, sender: chrome.runtime.MessageSender, sendResponse: (r: unknown) => void): boolean {
  if (!isBackgroundMessage(msg) || sender.id !== chrome.runtime.id) return false;
  const reply = route(msg, sender);
  if (!reply) return false;
  reply.then(sendResponse, (err: unknown) => {
    console.error('tether: message failed', msg.kind, err);
    sendResponse(undefined);
  });
  return true;
}

function fromOffscreen(sender: chrome.runtime.MessageSender): boolean {
  return sender.tab === undefined && sender.url === chrome.runtime.getURL('offscreen.html');
}

/** The popup page's URL prefix (it may carry a query or hash when opened as a tab). */
export function popupUrl(): string {
  return chrome.runtime.getURL('popup.html');
}

function fromPopup(sender: chrome.runtime.MessageSender): boolean {
  return typeof sender.url === 'string' && sender.url.startsWith(popupUrl());
}

function route(msg: BackgroundMessage, sender: chrome.runtime.MessageSender): Promise<unknown> | undefined {
  if (msg.kind === 'register-document') {
    const tabId = sender.tab?.id;
    const frameId = sender.frameId ?? 0;
    if (tabId === undefined) return undefined;
    return registerDocument(tabId, frameId, msg.doc).then((doc) => ({ doc, frame: frameId }));
  }
  if (msg.kind === 'reading') {
    const tabId = sender.tab?.id;
    if (tabId === undefined) return undefined;
    markReading(tabId);
    return Promise.resolve(true);
  }
  if (msg.kind === 'delay') {
    if (sender.tab?.id === undefined) return undefined;
    // Only content scripts ask (settle of a hidden page); bounded, so no sender holds the worker long.
    const ms = Math.min(Math.max(Number(msg.ms) || 0, 0), DELAY_MAX_MS);
    return new Promise((resolve) => setTimeout(() => resolve(true), ms));
  }
  if (msg.kind === 'preparing') {
    const tabId = sender.tab?.id;
    if (tabId === undefined) return undefined;
    markPreparing(tabId, msg.on === true);
    return Promise.resolve(true);
  }
  if (msg.kind === 'page-hooks') {
    const tabId = sender.tab?.id;
    if (tabId === undefined || typeof msg.batch !== 'object' || msg.batch === null) return undefined;
    return onPageHooks(tabId, sender.frameId ?? 0, msg.batch).then(() => true);
  }
  if (fromPopup(sender)) {
    switch (msg.kind) {
      case 'popup-tabs':
        return popupTabs();
      case 'popup-share':
        if (typeof msg.tabId !== 'number') return undefined;
        return (msg.shared ? share(msg.tabId, false, 'shared') : unshare(msg.tabId)).then(() => true);
      case 'popup-take-back':
        if (typeof msg.tabId !== 'number') return undefined;
        return setTabOwner(msg.tabId, undefined).then(() => true);
      case 'popup-reconnect':
        return reconnect().then(() => true);
      case 'popup-pair-again':
        return pairAgain().then(() => true);
      case 'popup-rename':
        return rename(msg.label).then(() => true);
      case 'popup-broker':
        return setBroker(msg.url);
      default:
        return undefined;
    }
  }
  if (!fromOffscreen(sender)) return undefined;
  switch (msg.kind) {
    case 'daemon-config':
      return loadDaemonConfig();
    case 'connection-status':
      return saveStatus(msg.status);
    case 'hello-ack':
      return saveAck(msg.ack, msg.broker);
    case 'unpaired':
      return dropSlug(msg.broker);
    case 'daemon-reload':
      return reloadForUpdate(msg.frame).then(() => true);
    case 'daemon-request':
      // After an update's reload, the carried idempotency records are back before any request is checked against them.
      return restoredAfterReload().then(() => runOnce(msg.request, () => handleRequest(msg.request, msg.deadline))).then(async (outcome) => {
        await tabsChanged().flushNow();
        return outcome;
      });
    default:
      return undefined;
  }
}

/**
 * The number of the document in frameId of tabId: claim when it asks for the
 * number it had back (restored from the back/forward cache) and that number
 * was given to this very tab and frame, else a new one.
 */
async function registerDocument(tabId: number, frameId: number, claim: unknown): Promise<number> {
  if (typeof claim === 'number' && Number.isSafeInteger(claim) && (await claimDocument(tabId, frameId, claim))) return claim;
  return nextDocument(tabId, frameId);
}

async function saveStatus(status: ConnectionStatus): Promise<void> {
  await chrome.storage.session.set({ status, halted: status.halted === true });
}

/** Storage updates of the broker maps, one after the other (each reads, changes and writes a whole map). */
let brokerWrites: Promise<unknown> = Promise.resolve();

/**
 * Keeps what a hello_ack says: the local daemon's under assignedLabel,
 * assignedSlug, daemonVersion and secret; a remote broker's (broker: its
 * origin) under its origin in brokerProfiles and brokerSecrets, so each
 * broker keeps its own pairing.
 */
async function saveAck(ack: HelloAck, broker: unknown): Promise<void> {
  if (typeof broker !== 'string' || !broker) {
    const items: Record<string, unknown> = { assignedLabel: ack.assignedLabel, assignedSlug: ack.assignedSlug, daemonVersion: ack.daemonVersion };
    // The secret goes to storage only: never into the status, the popup or a log.
    if (typeof ack.secret === 'string' && ack.secret) items.secret = ack.secret;
    await chrome.storage.local.set(items);
    return;
  }
  const write = brokerWrites.then(async () => {
    const got = await chrome.storage.local.get([BROKER_PROFILES_KEY, BROKER_SECRETS_KEY]);
    const profile: BrokerProfile = { slug: ack.assignedSlug, label: ack.assignedLabel, version: ack.daemonVersion };
    const items: Record<string, unknown> = { [BROKER_PROFILES_KEY]: { ...record(got[BROKER_PROFILES_KEY]), [broker]: profile } };
    if (typeof ack.secret === 'string' && ack.secret) items[BROKER_SECRETS_KEY] = { ...record(got[BROKER_SECRETS_KEY]), [broker]: ack.secret };
    await chrome.storage.local.set(items);
  });
  brokerWrites = write.catch(() => undefined);
  await write;
}

/**
 * The local daemon (broker undefined) or the remote broker (its origin)
 * holds this profile as a new one, waiting for approval or denied: the
 * slug it gave is no longer this profile's there, so it leaves what the
 * popup shows (assignedSlug, brokerProfiles[origin].slug). It is kept as
 * slugHint, which hello still asks for, so that pairing again keeps the
 * slug when it is free.
 */
async function dropSlug(broker: unknown): Promise<void> {
  if (typeof broker !== 'string' || !broker) {
    const got = await chrome.storage.local.get('assignedSlug');
    if (typeof got.assignedSlug !== 'string' || !got.assignedSlug) return;
    await chrome.storage.local.set({ slugHint: got.assignedSlug });
    await chrome.storage.local.remove('assignedSlug');
    return;
  }
  const write = brokerWrites.then(async () => {
    const got = await chrome.storage.local.get(BROKER_PROFILES_KEY);
    const all = record(got[BROKER_PROFILES_KEY]);
    const profile = record(all[broker]) as BrokerProfile;
    if (typeof profile.slug !== 'string' || !profile.slug) return;
    const { slug, ...rest } = profile;
    await chrome.storage.local.set({ [BROKER_PROFILES_KEY]: { ...all, [broker]: { ...rest, slugHint: slug } } });
  });
  brokerWrites = write.catch(() => undefined);
  await write;
}

/**
 * The popup's broker field: url '' goes back to the local daemon; another
 * url is stored when parseBrokerUrl accepts it (as it returned it), else
 * refused with its sentence and nothing changes. Either way the pairings
 * stay (each broker's under its origin). Then connects anew.
 */
async function setBroker(url: unknown): Promise<PopupBrokerReply> {
  const text = typeof url === 'string' ? url.trim() : '';
  if (!text) {
    await chrome.storage.local.remove(BROKER_URL_KEY);
  } else {
    const parsed = parseBrokerUrl(text);
    if (!parsed.ok) return { ok: false, error: parsed.error };
    await chrome.storage.local.set({ [BROKER_URL_KEY]: parsed.broker.url });
  }
  await reconnect();
  return { ok: true };
}

/** The user's Reconnect: lifts a halt and makes the offscreen document connect now. */
export async function reconnect(): Promise<void> {
  await chrome.storage.session.set({ halted: false });
  await ensureOffscreen();
  const msg: OffscreenMessage = { target: 'offscreen', kind: 'reconnect' };
  await chrome.runtime.sendMessage(msg).catch(() => undefined);
}

/**
 * Pair again (popup, offered when the program on Tether's port may be a
 * Tether that forgot this browser): drops the local daemon's secret and
 * slug, then the offscreen document connects as a new profile, which the
 * user approves in Tether. A remote broker's pairing is kept.
 */
async function pairAgain(): Promise<void> {
  await chrome.storage.local.remove(['secret', 'assignedSlug', 'slugHint']);
  await chrome.storage.session.set({ halted: false });
  await ensureOffscreen();
  const msg: OffscreenMessage = { target: 'offscreen', kind: 'pair-again' };
  await chrome.runtime.sendMessage(msg).catch(() => undefined);
}

/** Stores the profile's new label and reconnects so the next hello carries it. */
async function rename(label: unknown): Promise<void> {
  const clean = typeof label === 'string' ? label.trim().slice(0, 100) : '';
  if (clean) await chrome.storage.local.set({ label: clean });
  else await chrome.storage.local.remove('label');
  await reconnect();
}

/**
 * The tabs for the popup, without the popup page itself: the last-focused
 * normal window's first, then the other windows' (the popup opened as a tab
 * may sit in a window of its own), with the ones an AI acts on now.
 */
async function popupTabs(): Promise<PopupTabs> {
  const windows = await chrome.windows.getAll({ populate: true, windowTypes: ['normal'] }).catch(() => []);
  const last = await chrome.windows.getLastFocused({ windowTypes: ['normal'] }).catch(() => undefined);
  windows.sort((a, b) => Number(b.id === last?.id) - Number(a.id === last?.id));
  const tabs = windows.flatMap((w) => w.tabs ?? []);
  const s = await readState();
  const acting = new Set(Object.keys(s.shared).map(Number).filter((id) => actingUntil(id) > 0));
  return popupTabList(tabs, popupUrl(), { shared: s.shared, owners: s.owners, acting, windowId: last?.id ?? windows[0]?.id });
}
