// The service worker's side of the remote broker: the popup's broker field
// (checked, stored or refused) and each hello_ack's pairing kept under the
// daemon or broker it came from, through onRuntimeMessage with a fake chrome.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { BackgroundMessage, PopupBrokerReply } from '../src/shared/messages';

const ID = 'aokghpkcplaclmhkoheinfbdepflapkn';
const url = (path: string) => `chrome-extension://${ID}/${path}`;

function fakeChrome() {
  const local: Record<string, unknown> = {};
  const session: Record<string, unknown> = {};
  const area = (store: Record<string, unknown>) => ({
    get: async (keys: string | string[]) => {
      const out: Record<string, unknown> = {};
      for (const k of Array.isArray(keys) ? keys : [keys]) if (k in store) out[k] = structuredClone(store[k]);
      return out;
    },
    set: async (items: Record<string, unknown>) => void Object.assign(store, structuredClone(items)),
    remove: async (key: string) => void delete store[key],
  });
  const sent: unknown[] = [];
  vi.stubGlobal('chrome', {
    storage: { local: area(local), session: area(session) },
    runtime: {
      id: ID,
      getURL: url,
      getContexts: async () => [{}], // the offscreen document exists
      ContextType: { OFFSCREEN_DOCUMENT: 'OFFSCREEN_DOCUMENT' },
      sendMessage: vi.fn(async (m: unknown) => {
        sent.push(m);
        return true;
      }),
    },
    offscreen: { createDocument: vi.fn(), Reason: { WORKERS: 'WORKERS' } },
  });
  return { local, sent };
}

async function deliver(msg: BackgroundMessage, from: string): Promise<unknown> {
  const { onRuntimeMessage } = await import('../src/background/router');
  return new Promise((resolve) => {
    const handled = onRuntimeMessage(msg, { id: ID, url: url(from) } as chrome.runtime.MessageSender, resolve);
    if (!handled) resolve('unhandled');
  });
}

describe('the popup’s broker field and the pairings per broker', () => {
  beforeEach(() => vi.resetModules());

  it('stores a wss:// broker as checked and reconnects; refuses ws:// to another host and keeps the old one', async () => {
    const { local, sent } = fakeChrome();
    expect(await deliver({ target: 'background', kind: 'popup-broker', url: ' wss://Tether.Test:8443 ' }, 'popup.html')).toEqual({ ok: true } satisfies PopupBrokerReply);
    expect(local.brokerUrl).toBe('wss://tether.test:8443/extension');
    expect(sent).toContainEqual({ target: 'offscreen', kind: 'reconnect' });
    sent.length = 0;
    const refused = (await deliver({ target: 'background', kind: 'popup-broker', url: 'ws://tether.example.org/extension' }, 'popup.html')) as PopupBrokerReply;
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.error).toMatch(/^Refused: ws:\/\//);
    expect(local.brokerUrl).toBe('wss://tether.test:8443/extension');
    expect(sent).toEqual([]);
    // '' goes back to the local daemon.
    expect(await deliver({ target: 'background', kind: 'popup-broker', url: '' }, 'popup.html')).toEqual({ ok: true });
    expect(local).not.toHaveProperty('brokerUrl');
  });

  it('takes the broker field from the popup page only', async () => {
    const { local } = fakeChrome();
    expect(await deliver({ target: 'background', kind: 'popup-broker', url: 'wss://evil.example/extension' }, 'offscreen.html')).toBe('unhandled');
    expect(local).not.toHaveProperty('brokerUrl');
  });

  it("keeps each hello_ack's secret and slug under the daemon or broker it came from", async () => {
    const { local } = fakeChrome();
    local.secret = 'local-secret';
    local.assignedSlug = 'work';
    const ack = (secret: string, slug: string) => ({ type: 'hello_ack' as const, daemonVersion: '0.4.0', assignedLabel: 'Work', assignedSlug: slug, secret });
    await deliver({ target: 'background', kind: 'hello-ack', ack: ack('remote-secret', 'work-2'), broker: 'wss://tether.test:8443' }, 'offscreen.html');
    await deliver({ target: 'background', kind: 'hello-ack', ack: ack('other-secret', 'w'), broker: 'wss://other.test' }, 'offscreen.html');
    expect(local.secret).toBe('local-secret');
    expect(local.assignedSlug).toBe('work');
    expect(local.brokerSecrets).toEqual({ 'wss://tether.test:8443': 'remote-secret', 'wss://other.test': 'other-secret' });
    expect(local.brokerProfiles).toEqual({
      'wss://tether.test:8443': { slug: 'work-2', label: 'Work', version: '0.4.0' },
      'wss://other.test': { slug: 'w', label: 'Work', version: '0.4.0' },
    });
    // The config for each: its own secret.
    const { withPairing } = await import('../src/background/config');
    const base = { port: 1, label: 'Work', profileId: 'p', extVersion: '1', tabs: [], halted: false };
    expect(withPairing({ ...base }, { ...local, brokerUrl: 'wss://tether.test:8443/extension' }).secret).toBe('remote-secret');
    expect(withPairing({ ...base }, local).secret).toBe('local-secret');
    // A local ack leaves the brokers' pairings alone.
    await deliver({ target: 'background', kind: 'hello-ack', ack: ack('local-2', 'work') }, 'offscreen.html');
    expect(local.secret).toBe('local-2');
    expect(local.brokerSecrets).toEqual({ 'wss://tether.test:8443': 'remote-secret', 'wss://other.test': 'other-secret' });
  });

  it('drops the slug a daemon no longer has (forgotten, then waiting or denied): the popup shows none, hello still asks for it', async () => {
    const { local } = fakeChrome();
    local.assignedSlug = 'work';
    local.brokerProfiles = { 'wss://tether.test:8443': { slug: 'work-2', label: 'Work', version: '0.4.0' } };
    const { popupView } = await import('../src/popup/view');
    const denied = { state: 'disconnected' as const, port: 47615, since: 0, halted: true, lastRefusal: { code: 'pairing_denied', message: 'You denied this browser in Tether.', at: 0 } };
    expect(popupView(denied, local).slug).toBe('work');
    // Only the offscreen document reports it.
    expect(await deliver({ target: 'background', kind: 'unpaired' }, 'popup.html')).toBe('unhandled');
    expect(local.assignedSlug).toBe('work');
    await deliver({ target: 'background', kind: 'unpaired' }, 'offscreen.html');
    expect(local).not.toHaveProperty('assignedSlug');
    expect(popupView(denied, local).slug).toBe('—');
    const { withPairing } = await import('../src/background/config');
    const base = { port: 1, label: 'Work', profileId: 'p', extVersion: '1', tabs: [], halted: false };
    expect(withPairing({ ...base }, local).slug).toBe('work'); // pairing again keeps the slug when it is free
    // A broker's pairing is its own: untouched by the local daemon's, dropped by its own report.
    expect(local.brokerProfiles).toEqual({ 'wss://tether.test:8443': { slug: 'work-2', label: 'Work', version: '0.4.0' } });
    await deliver({ target: 'background', kind: 'unpaired', broker: 'wss://tether.test:8443' }, 'offscreen.html');
    expect(local.brokerProfiles).toEqual({ 'wss://tether.test:8443': { slugHint: 'work-2', label: 'Work', version: '0.4.0' } });
    const remote = { ...local, brokerUrl: 'wss://tether.test:8443/extension' };
    expect(popupView({ ...denied, broker: 'tether.test:8443' }, remote).slug).toBe('—');
    expect(withPairing({ ...base }, remote).slug).toBe('work-2');
    // The next ack's slug is shown again.
    await deliver({ target: 'background', kind: 'hello-ack', ack: { type: 'hello_ack', daemonVersion: '0.4.0', assignedLabel: 'Work', assignedSlug: 'work', secret: 's' } }, 'offscreen.html');
    expect(popupView({ state: 'connected', port: 47615, since: 0 }, local).slug).toBe('work');
  });
});
