// Content script entry: declared for every page in manifest.json and injected
// on demand into tabs opened before the extension loaded. Only wires listeners.
import { ContentAgent } from './content/agent';
import { isContentMessage, type BackgroundMessage } from './shared/messages';

const GUARD = '__tetherContentScript';
const scope = globalThis as unknown as Record<string, unknown>;

if (!scope[GUARD]) {
  scope[GUARD] = true;
  const agent = new ContentAgent(document, async () => {
    const msg: BackgroundMessage = { target: 'background', kind: 'register-document' };
    const reply = (await chrome.runtime.sendMessage(msg)) as { doc?: number } | undefined;
    if (typeof reply?.doc !== 'number') throw new Error('the service worker did not number this document');
    return reply.doc;
  });
  chrome.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
    if (!isContentMessage(msg)) return false;
    void agent.handle(msg).then(sendResponse);
    return true;
  });
}
