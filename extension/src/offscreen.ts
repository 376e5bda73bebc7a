// Offscreen document entry: holds the daemon WebSocket (service workers are
// stopped when idle, offscreen documents are not). Only wires things up.
import { DaemonConnection, PORT_PROBE_MS } from './offscreen/connection';
import { isOffscreenMessage, type BackgroundMessage, type DaemonConfig, type Outcome } from './shared/messages';

function toBackground<T>(msg: BackgroundMessage): Promise<T> {
  return chrome.runtime.sendMessage(msg) as Promise<T>;
}

const connection = new DaemonConnection({
  openSocket: (url, protocols) => new WebSocket(url, protocols),
  getConfig: () => toBackground<DaemonConfig>({ target: 'background', kind: 'daemon-config' }),
  relay: async (request, deadline) => {
    const outcome = await toBackground<Outcome | undefined>({ target: 'background', kind: 'daemon-request', request, deadline });
    if (!outcome) throw new Error('the service worker gave no answer');
    return outcome;
  },
  reportStatus: (status) => void toBackground({ target: 'background', kind: 'connection-status', status }).catch(() => undefined),
  reportAck: (ack, broker) => void toBackground({ target: 'background', kind: 'hello-ack', ack, ...(broker ? { broker } : {}) }).catch(() => undefined),
  reportUnpaired: (broker) => void toBackground({ target: 'background', kind: 'unpaired', ...(broker ? { broker } : {}) }).catch(() => undefined),
  reload: (frame) => void toBackground({ target: 'background', kind: 'daemon-reload', frame }).catch(() => undefined),
  userAgent: navigator.userAgent,
  isOnline: () => navigator.onLine,
  // Only after a remote broker's WebSocket failed to open: does HTTPS to it work at all?
  probe: async (url) => {
    try {
      const res = await fetch(url, { cache: 'no-store', credentials: 'omit', signal: AbortSignal.timeout(10_000) });
      return res.status;
    } catch {
      return undefined;
    }
  },
  // Only after the local WebSocket failed to open: does another program answer on the port?
  probeLocal: async (url) => {
    try {
      const res = await fetch(url, { cache: 'no-store', credentials: 'omit', redirect: 'manual', signal: AbortSignal.timeout(PORT_PROBE_MS) });
      let tether = false;
      try {
        const body: unknown = JSON.parse((await res.text()).slice(0, 64 << 10));
        tether = typeof body === 'object' && body !== null && (body as { name?: unknown }).name === 'tether';
      } catch {
        tether = false;
      }
      return { kind: 'http', status: res.status, tether };
    } catch (err) {
      // fetch fails at once when nothing listens; the timeout fires when a program accepted and says nothing.
      return err instanceof DOMException && err.name === 'TimeoutError' ? { kind: 'silent' } : { kind: 'none' };
    }
  },
});

// Network changes: a remote broker is dialled at once when the computer is back online.
addEventListener('online', () => connection.networkUp());
addEventListener('offline', () => connection.networkDown());

// Only the service worker talks to this document (not tabs, not other extensions).
chrome.runtime.onMessage.addListener((msg, sender, sendResponse) => {
  if (!isOffscreenMessage(msg) || sender.id !== chrome.runtime.id || sender.tab !== undefined) return false;
  if (sender.url !== chrome.runtime.getURL('background.js')) return false;
  if (msg.kind === 'download') {
    // Sent only on a live connection: the service worker resumes a download nobody can decide.
    sendResponse(connection.pushNow(msg.frame));
    return false;
  }
  if (msg.kind === 'tabs-changed') connection.pushTabsChanged(msg.frame);
  else if (msg.kind === 'reconnect') connection.reconnect();
  else if (msg.kind === 'pair-again') connection.pairAgainWithLocal();
  sendResponse(true);
  return false;
});

connection.start();
