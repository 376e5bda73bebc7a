// Routes runtime messages addressed to the service worker. Daemon traffic is
// accepted only from our offscreen document, document numbering only from
// content scripts in a tab's top frame.
import type { HelloAck } from '../protocol.gen';
import { isBackgroundMessage, type BackgroundMessage, type ConnectionStatus } from '../shared/messages';
import { loadDaemonConfig } from './config';
import { handleRequest } from './methods';
import { nextDocument } from './shared-tabs';

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

function route(msg: BackgroundMessage, sender: chrome.runtime.MessageSender): Promise<unknown> | undefined {
  if (msg.kind === 'register-document') {
    const tabId = sender.tab?.id;
    if (tabId === undefined || sender.frameId !== 0) return undefined;
    return nextDocument(tabId).then((doc) => ({ doc }));
  }
  if (!fromOffscreen(sender)) return undefined;
  switch (msg.kind) {
    case 'daemon-config':
      return loadDaemonConfig();
    case 'connection-status':
      return saveStatus(msg.status);
    case 'hello-ack':
      return saveAck(msg.ack);
    case 'daemon-request':
      return handleRequest(msg.request, msg.deadline);
  }
}

async function saveStatus(status: ConnectionStatus): Promise<void> {
  const halted = status.lastRefusal?.code === 'protocol_mismatch';
  const items: Record<string, unknown> = { status };
  if (halted) items.halted = true;
  await chrome.storage.session.set(items);
}

async function saveAck(ack: HelloAck): Promise<void> {
  await chrome.storage.local.set({ assignedLabel: ack.assignedLabel, assignedSlug: ack.assignedSlug, daemonVersion: ack.daemonVersion });
}
