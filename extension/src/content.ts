// Content script entry: injected by the service worker into every frame of a
// shared tab (when the tab is shared and at each commit while it stays
// shared; background/tab-hooks.ts), never declared in the manifest, so tabs
// the user has not shared run none of it. Only wires listeners (the agent,
// content/agent.ts, dispatches the messages).
import { ContentAgent } from './content/agent';
import { DEFAULT_SETTLE } from './content/actions';
import { controlPageHooks, relayPageHooks, type HookRelay } from './content/hook-relay';
import { isContentMessage, type BackgroundMessage } from './shared/messages';

// The isolated world's own globals (the page cannot see them): this
// document's relay and agent, so a second injection starts them again
// instead of running twice.
const GUARD = '__tetherContentScript';
const AGENT = '__tetherContentAgent';
const scope = globalThis as unknown as Record<string, unknown>;

if (scope[GUARD]) {
  // Injected again: the tab is shared again, or the back/forward cache
  // restored this document (a commit of a shared tab): the relay listens
  // again, and the document is its frame's current one again, refs and all.
  (scope[GUARD] as HookRelay).start();
  (scope[AGENT] as ContentAgent | undefined)?.reclaim();
} else {
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
    async (claim?: number) => {
      const msg: BackgroundMessage = { target: 'background', kind: 'register-document' };
      if (claim !== undefined) msg.doc = claim;
      const reply = (await chrome.runtime.sendMessage(msg)) as { doc?: number; frame?: number } | undefined;
      if (typeof reply?.doc !== 'number') throw new Error('the service worker did not number this document');
      return { doc: reply.doc, frame: reply.frame ?? 0 };
    },
    DEFAULT_SETTLE,
    frameIdOf,
    (control) => {
      controlPageHooks(window, control);
      if (control.unhook === true) relay.stop();
    },
    async () => {
      // The action's console and dialog records go first, so its result's readers find them.
      relay.flush();
      const msg: BackgroundMessage = { target: 'background', kind: 'reading' };
      await chrome.runtime.sendMessage(msg);
    },
    async (on) => {
      const msg: BackgroundMessage = { target: 'background', kind: 'preparing', on };
      await chrome.runtime.sendMessage(msg);
    },
    async (ms) => {
      const msg: BackgroundMessage = { target: 'background', kind: 'delay', ms };
      await chrome.runtime.sendMessage(msg);
    },
  );
  // The one listener: the agent dispatches every content message.
  chrome.runtime.onMessage.addListener((msg, _sender, sendResponse) => {
    if (!isContentMessage(msg)) return false;
    void agent.handle(msg).then(sendResponse);
    return true;
  });
  const relay = relayPageHooks(window, (batch) => {
    const msg: BackgroundMessage = { target: 'background', kind: 'page-hooks', batch };
    chrome.runtime.sendMessage(msg).catch(() => undefined);
  });
  scope[AGENT] = agent;
  scope[GUARD] = relay;
}
