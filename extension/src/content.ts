// Content script entry: declared for every frame in manifest.json (at
// document_start, so the page-world hooks' records are relayed from the
// start) and injected on demand into tabs opened before the extension loaded.
// Only wires listeners.
import { ContentAgent } from './content/agent';
import { DEFAULT_SETTLE } from './content/actions';
import { relayPageHooks } from './content/hook-relay';
import { isContentMessage, type BackgroundMessage } from './shared/messages';

const GUARD = '__tetherContentScript';
const scope = globalThis as unknown as Record<string, unknown>;

if (!scope[GUARD]) {
  scope[GUARD] = true;
  const frameIdOf = (iframe: Element): number | undefined => {
    try {
      // chrome.runtime.getFrameId (Chrome 106+) is missing from @types/chrome.
      const id = (chrome.runtime as unknown as { getFrameId?: (target: unknown) => number }).getFrameId?.(iframe);
      return typeof id === 'number' && id >= 0 ? id : undefined;
    } catch {
      return undefined;
    }
  };
  const agent = new ContentAgent(
    document,
    async () => {
      const msg: BackgroundMessage = { target: 'background', kind: 'register-document' };
      const reply = (await chrome.runtime.sendMessage(msg)) as { doc?: number; frame?: number } | undefined;
      if (typeof reply?.doc !== 'number') throw new Error('the service worker did not number this document');
      return { doc: reply.doc, frame: reply.frame ?? 0 };
    },
    DEFAULT_SETTLE,
    frameIdOf,
  );
  chrome.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
    if (!isContentMessage(msg)) return false;
    void agent.handle(msg).then(sendResponse);
    return true;
  });
  relayPageHooks(window, (batch) => {
    const msg: BackgroundMessage = { target: 'background', kind: 'page-hooks', batch };
    chrome.runtime.sendMessage(msg).catch(() => undefined);
  });
}
