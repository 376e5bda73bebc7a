// Keeps the offscreen document (which owns the daemon WebSocket) alive.
const URL_PATH = 'offscreen.html';
export const KEEPALIVE_ALARM = 'tether-keepalive';

let creating: Promise<void> | undefined;

/** Creates the offscreen document unless it exists. */
export function ensureOffscreen(): Promise<void> {
  creating ??= (async () => {
    const url = chrome.runtime.getURL(URL_PATH);
    const existing = await chrome.runtime.getContexts({ contextTypes: [chrome.runtime.ContextType.OFFSCREEN_DOCUMENT], documentUrls: [url] });
    if (existing.length > 0) return;
    try {
      await chrome.offscreen.createDocument({
        url: URL_PATH,
        reasons: [chrome.offscreen.Reason.WORKERS],
        justification: 'Holds the WebSocket connection to the Tether app (on this computer, or the remote broker the user chose), which a service worker would drop when idle.',
      });
    } catch (err) {
      if (!/single offscreen document/i.test(String(err))) throw err;
    }
  })().finally(() => (creating = undefined));
  return creating;
}

/** Makes sure the 30-second keep-alive alarm exists (Chrome's minimum period). */
export async function ensureKeepaliveAlarm(): Promise<void> {
  if (!(await chrome.alarms.get(KEEPALIVE_ALARM))) {
    await chrome.alarms.create(KEEPALIVE_ALARM, { periodInMinutes: 0.5 });
  }
}
