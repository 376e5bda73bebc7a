import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BACKOFF_CAP_MS, DaemonConnection, backoffDelay, relayFailure, type ConnectionDeps } from '../src/offscreen/connection';
import type { HelloAck, Reload, Request, TabsChanged } from '../src/protocol.gen';
import type { ConnectionStatus, DaemonConfig, Outcome } from '../src/shared/messages';
import { handshake, PAIRING_KEY } from './support/handshake';
import { advance, flush, track } from './support/clock';
import { FakeSocket } from './support/fake-socket';


const TABS = [{ tab: 1, url: 'https://example.com/', title: 'Example', active: true, current: true }];
let config: DaemonConfig;
beforeEach(() => {
  config = { port: 12345, label: 'Work', profileId: 'p-1', extVersion: '0.1.0', tabs: TABS, halted: false };
});

function setup(relay: ConnectionDeps['relay'] = async () => ({ ok: true, value: {} })) {
  const sockets: FakeSocket[] = [];
  const statuses: ConnectionStatus[] = [];
  const acks: HelloAck[] = [];
  const reloads: Reload[] = [];
  const unpaired: Array<string | undefined> = [];
  const conn = new DaemonConnection({
    openSocket: (url, protocols) => {
      const s = new FakeSocket(url, protocols);
      sockets.push(s);
      return s;
    },
    getConfig: async () => config,
    relay,
    reportStatus: (s) => statuses.push(s),
    reportAck: (a) => acks.push(a),
    reportUnpaired: (b) => unpaired.push(b),
    reload: (f) => reloads.push(f),
    userAgent: 'UA',
    random: () => 1,
  });
  track(conn);
  return { conn, sockets, statuses, acks, reloads, unpaired };
}


describe('DaemonConnection', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('says hello on open and answers requests with the relayed result', async () => {
    const relay = vi.fn(async (_r: Request, _d: number): Promise<Outcome> => ({ ok: true, value: { tabs: [] } }));
    const { conn, sockets, statuses } = setup(relay);
    conn.start();
    await flush();
    const s = sockets[0]!;
    expect(s.url).toBe('ws://127.0.0.1:12345/extension');
    s.open();
    expect(s.sent).toEqual([]); // nothing before the daemon's challenge
    await handshake(s);
    expect(s.sent).toEqual([{ type: 'hello', protocol: 4, profileId: 'p-1', label: 'Work', extVersion: '0.1.0', userAgent: 'UA', tabs: TABS }]);
    s.receive({ type: 'hello_ack', daemonVersion: 'x', assignedLabel: 'Work', assignedSlug: 'work' });
    expect(statuses.at(-1)?.state).toBe('connected');
    s.receive({ type: 'request', id: '7', method: 'tabs_list', params: {}, timeoutMs: 5000 });
    await flush();
    expect(s.sent.at(-1)).toEqual({ type: 'response', id: '7', result: { tabs: [] } });
    expect(relay.mock.calls[0]![1]).toBeLessThan(Date.now() + 5000);
  });

  it('refuses methods outside the allow-list without relaying them', async () => {
    const relay = vi.fn();
    const { conn, sockets } = setup(relay);
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive({ type: 'hello_ack', daemonVersion: 'x', assignedLabel: 'Work', assignedSlug: 'work' });
    sockets[0]!.receive({ type: 'request', id: '1', method: 'eval', params: {}, timeoutMs: 5000 });
    await flush();
    expect(relay).not.toHaveBeenCalled();
    expect(sockets[0]!.sent.at(-1)).toMatchObject({ type: 'response', id: '1', error: { code: 'bad_request' } });
  });

  it('answers timeout a little before the daemon gives up', async () => {
    const { conn, sockets } = setup(() => new Promise<Outcome>(() => undefined));
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive({ type: 'hello_ack', daemonVersion: 'x', assignedLabel: 'Work', assignedSlug: 'work' });
    sockets[0]!.receive({ type: 'request', id: '2', method: 'snapshot', params: {}, timeoutMs: 2000 });
    await advance(1700);
    expect(sockets[0]!.sent).toHaveLength(1); // only the hello
    await advance(150);
    expect(sockets[0]!.sent.at(-1)).toMatchObject({ type: 'response', id: '2', error: { code: 'timeout' } });
  });

  it('reconnects with capped exponential backoff', async () => {
    const { conn, sockets } = setup();
    conn.start();
    await flush();
    const delays = [250, 500, 1000, 2000, 4000, 5000, 5000];
    for (const [i, d] of delays.entries()) {
      sockets[i]!.close();
      await advance(d - 1);
      expect(sockets).toHaveLength(i + 1);
      await advance(1);
      expect(sockets).toHaveLength(i + 2);
    }
  });

  it('stops reconnecting after a protocol_mismatch refusal and keeps the message', async () => {
    const { conn, sockets, statuses } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive({ type: 'refused', code: 'protocol_mismatch', message: 'Reload the extension at chrome://extensions.' });
    await advance(60_000);
    expect(sockets).toHaveLength(1);
    expect(conn.isHalted).toBe(true);
    expect(statuses.at(-1)).toMatchObject({ state: 'disconnected', lastRefusal: { code: 'protocol_mismatch', message: 'Reload the extension at chrome://extensions.' } });
  });

  it('sends the stored slug and a proof of the secret in hello, never the secret', async () => {
    config.slug = 'work';
    config.secret = 's3cret';
    const { conn, sockets } = setup();
    conn.start();
    await flush();
    const s = sockets[0]!;
    expect(s.protocols).toEqual(['tether', expect.stringMatching(/^tether\.nonce\.[0-9a-f]{64}$/), expect.stringMatching(/^tether\.profile\.p-1\.[0-9a-f]{64}$/)]);
    s.open();
    const { hello } = await handshake(s, { secret: 's3cret' }); // checks hello.proof
    expect(hello).toMatchObject({ type: 'hello', protocol: 4, slug: 'work', proof: expect.stringMatching(/^[0-9a-f]{64}$/), tabs: TABS });
    expect(JSON.stringify(s.sent)).not.toContain('s3cret');
    expect(s.protocols.join()).not.toContain('s3cret');
  });

  it('waits through pairing on the same socket, then keeps the issued secret for the next hello', async () => {
    const { conn, sockets, statuses, acks } = setup();
    conn.start();
    await flush();
    const s = sockets[0]!;
    expect(s.protocols).toEqual(['tether', expect.stringMatching(/^tether\.nonce\./)]); // no profile to name yet
    s.open();
    const { hello } = await handshake(s); // no proof: nothing to prove yet
    expect(hello).not.toHaveProperty('secret');
    s.receive({ type: 'pairing', code: 'K7M4PX', message: 'Approve "Work" in the Tether window.' });
    expect(statuses.at(-1)).toMatchObject({ state: 'pairing', pairing: 'Approve "Work" in the Tether window.', pairingCode: 'K7M4PX' });
    // No timeout: the daemon holds the socket as long as the user takes.
    await advance(10 * 60_000);
    expect(sockets).toHaveLength(1);
    s.receive({ type: 'hello_ack', daemonVersion: 'x', assignedLabel: 'Work', assignedSlug: 'work', secret: 'new-secret' });
    expect(statuses.at(-1)).toMatchObject({ state: 'connected' });
    expect(statuses.at(-1)).not.toHaveProperty('pairing');
    expect(statuses.at(-1)).not.toHaveProperty('pairingCode');
    expect(JSON.stringify(statuses)).not.toContain('new-secret');
    expect(acks.at(-1)?.secret).toBe('new-secret');
    // Even before storage has it (config still without secret), the next hello carries it.
    s.close();
    await advance(250);
    // The handshake names the profile, so the daemon proves itself with its key and never closes this socket to make room…
    expect(sockets[1]!.protocols).toEqual(['tether', expect.stringMatching(/^tether\.nonce\.[0-9a-f]{64}$/), expect.stringMatching(/^tether\.profile\.p-1\.[0-9a-f]{64}$/)]);
    expect(sockets[1]!.protocols[1]).not.toBe(s.protocols[1]); // a fresh nonce per socket
    sockets[1]!.open();
    // …and the next hello proves the issued secret, even before storage has it (config still without secret).
    const next = await handshake(sockets[1]!, { secret: 'new-secret' });
    expect(next.hello).toMatchObject({ type: 'hello', proof: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(JSON.stringify(sockets[1]!.sent)).not.toContain('new-secret');
  });

  it('tells the service worker the daemon holds this profile as a new one: at a pairing frame and at pairing_denied', async () => {
    const { conn, sockets, statuses, unpaired } = setup();
    // Paired once; the Tether that wrote the folder forgot it since (it proves the folder's key, not the profile's).
    config.secret = 'old-secret';
    config.pairingKey = PAIRING_KEY;
    conn.start();
    await flush();
    const s = sockets[0]!;
    s.open();
    await handshake(s, { pairingKey: PAIRING_KEY });
    expect(unpaired).toEqual([]);
    s.receive({ type: 'pairing', code: 'K7M4PX', message: 'Approve it.' });
    expect(unpaired).toEqual([undefined]); // the local daemon
    s.receive({ type: 'refused', code: 'pairing_denied', message: 'You denied this browser in Tether.' });
    expect(unpaired).toEqual([undefined, undefined]);
    expect(statuses.at(-1)).toMatchObject({ state: 'disconnected', halted: true, lastRefusal: { code: 'pairing_denied' } });
  });

  it('does not report a paired profile as unpaired for other refusals', async () => {
    const { conn, sockets, unpaired } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive({ type: 'refused', code: 'unauthorized', message: 'no proof' });
    expect(unpaired).toEqual([]);
  });

  it('ignores a pairing code that is not one', async () => {
    const { conn, sockets, statuses } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive({ type: 'pairing', code: '<img src=x>', message: 'Approve it.' });
    expect(statuses.at(-1)).toMatchObject({ state: 'pairing' });
    expect(statuses.at(-1)).not.toHaveProperty('pairingCode');
  });

  it('keeps its code and asks again within 5 s, every time, when pushed out of the waiting list (pairing_displaced)', async () => {
    const { conn, sockets, statuses, acks } = setup();
    conn.start();
    await flush();
    for (let round = 0; round < 4; round++) {
      const s = sockets[round]!;
      s.open();
      await handshake(s);
      expect(s.sent[0]).toMatchObject({ type: 'hello', profileId: 'p-1' });
      s.receive({ type: 'pairing', code: 'K7M4PX', message: 'Approve it.' });
      s.receive({ type: 'refused', code: 'pairing_displaced', message: 'This browser keeps its code.' });
      // The popup keeps showing the code: no 'disconnected' in between.
      expect(statuses.at(-1)).toMatchObject({ state: 'pairing', pairingCode: 'K7M4PX', pairing: 'This browser keeps its code.' });
      expect(statuses.at(-1)).not.toHaveProperty('halted');
      expect(s.readyState).toBe(3);
      // random() = 1: the longest quick delay, 5 s, and it does not grow.
      await advance(4_999);
      expect(sockets).toHaveLength(round + 1);
      await advance(1);
      expect(sockets).toHaveLength(round + 2);
    }
    expect(statuses.map((x) => x.state)).not.toContain('disconnected');
    // Approved meanwhile: the next hello is paired at once.
    sockets[4]!.open();
    await handshake(sockets[4]!);
    sockets[4]!.receive({ type: 'hello_ack', assignedLabel: 'Work', assignedSlug: 'work', secret: 's3cret' });
    expect(statuses.at(-1)).toMatchObject({ state: 'connected' });
    expect(acks).toHaveLength(1);
  });

  it('spreads the quick retry between 2 and 5 s', async () => {
    const { conn, sockets } = setup();
    (conn as unknown as { deps: { random: () => number } }).deps.random = () => 0;
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive({ type: 'refused', code: 'pairing_displaced', message: 'Pushed out.' });
    await advance(1_999);
    expect(sockets).toHaveLength(1);
    await advance(1);
    expect(sockets).toHaveLength(2);
  });

  it('asks again 30 s after its pairing expired', async () => {
    const { conn, sockets, statuses } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive({ type: 'pairing', code: 'K7M4PX', message: 'Approve it.' });
    sockets[0]!.receive({ type: 'refused', code: 'pairing_expired', message: 'Nobody approved this browser in Tether within 10 minutes.' });
    expect(statuses.at(-1)).toMatchObject({ state: 'disconnected', lastRefusal: { code: 'pairing_expired' } });
    expect(statuses.at(-1)).not.toHaveProperty('halted');
    expect(statuses.at(-1)).not.toHaveProperty('pairingCode');
    await advance(30_000);
    expect(sockets).toHaveLength(2);
    sockets[1]!.open();
    await handshake(sockets[1]!);
    expect(sockets[1]!.sent[0]).toMatchObject({ type: 'hello', profileId: 'p-1' });
    sockets[1]!.receive({ type: 'pairing', code: 'ABCDEF', message: 'Approve it.' });
    expect(statuses.at(-1)).toMatchObject({ state: 'pairing', pairingCode: 'ABCDEF' });
    expect(statuses.at(-1)).not.toHaveProperty('lastRefusal');
  });

  it.each(['unauthorized', 'pairing_denied'])('stops after %s until reconnect() and shows the message', async (code) => {
    const { conn, sockets, statuses } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive({ type: 'refused', code, message: 'Denied by the user.' });
    await advance(120_000);
    expect(sockets).toHaveLength(1);
    expect(conn.isHalted).toBe(true);
    expect(statuses.at(-1)).toMatchObject({ state: 'disconnected', halted: true, lastRefusal: { code, message: 'Denied by the user.' } });
    conn.reconnect();
    await flush();
    expect(sockets).toHaveLength(2);
    expect(conn.isHalted).toBe(false);
    expect(statuses.at(-1)).toMatchObject({ state: 'connecting' });
    expect(statuses.at(-1)).not.toHaveProperty('lastRefusal');
  });

  it('retries every 30 s after too_many_profiles', async () => {
    const { conn, sockets, statuses } = setup();
    conn.start();
    await flush();
    for (let i = 0; i < 3; i++) {
      sockets[i]!.open();
      await handshake(sockets[i]!);
      sockets[i]!.receive({ type: 'refused', code: 'too_many_profiles', message: 'Tether already has 8 browsers connected.' });
      expect(statuses.at(-1)).toMatchObject({ state: 'disconnected', lastRefusal: { code: 'too_many_profiles' } });
      expect(statuses.at(-1)).not.toHaveProperty('halted');
      await advance(29_999);
      expect(sockets).toHaveLength(i + 1);
      await advance(1);
      expect(sockets).toHaveLength(i + 2);
    }
    expect(conn.isHalted).toBe(false);
  });

  it('pushes tabs_changed once acked, and queues the ones that come before', async () => {
    const { conn, sockets } = setup();
    conn.start();
    await flush();
    const s = sockets[0]!;
    s.open();
    const frame = (tab: number): TabsChanged => ({ type: 'tabs_changed', change: 'shared', tab, tabs: [] });
    conn.pushTabsChanged(frame(1)); // before the challenge: queued, never sent to an unproven program
    expect(s.sent).toEqual([]);
    await handshake(s);
    conn.pushTabsChanged(frame(2));
    expect(s.sent).toHaveLength(1);
    s.receive({ type: 'pairing', message: 'Approve.' });
    conn.pushTabsChanged(frame(3));
    expect(s.sent).toHaveLength(1);
    s.receive({ type: 'hello_ack', daemonVersion: 'x', assignedLabel: 'Work', assignedSlug: 'work' });
    expect(s.sent.slice(1)).toEqual([frame(1), frame(2), frame(3)]);
    conn.pushTabsChanged(frame(4));
    expect(s.sent.at(-1)).toEqual(frame(4));
  });

  it('ignores requests before hello_ack', async () => {
    const relay = vi.fn();
    const { conn, sockets } = setup(relay);
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive({ type: 'pairing', message: 'Approve.' });
    sockets[0]!.receive({ type: 'request', id: '1', method: 'tabs_list', params: {}, timeoutMs: 5000 });
    await flush();
    expect(relay).not.toHaveBeenCalled();
  });
});

describe('DaemonConnection reload (an update)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());
  const RELOAD: Reload = { type: 'reload', version: '0.4.0', versionName: '0.4.0 build abc' };
  const ACK = { type: 'hello_ack', daemonVersion: 'x', assignedLabel: 'Work', assignedSlug: 'work' };

  it('says its build, install type and marker in hello', async () => {
    config = { ...config, versionName: '0.1.0 build 123', installType: 'development', install: { dir: '/c/chrome-extension', id: 'ab12' } };
    const { conn, sockets } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    expect(sockets[0]!.sent[0]).toMatchObject({ versionName: '0.1.0 build 123', installType: 'development', install: { dir: '/c/chrome-extension', id: 'ab12' } });
  });

  it('ignores a reload before hello_ack', async () => {
    const { conn, sockets, reloads } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive(RELOAD);
    await flush();
    expect(reloads).toEqual([]);
  });

  it('reloads once the running request answered, and refuses new ones unrun', async () => {
    let finish!: (o: Outcome) => void;
    const relay = vi.fn(() => new Promise<Outcome>((resolve) => (finish = resolve)));
    const { conn, sockets, reloads } = setup(relay);
    conn.start();
    await flush();
    const s = sockets[0]!;
    s.open();
    await handshake(s);
    s.receive(ACK);
    s.receive({ type: 'request', id: '1', method: 'click', params: {}, timeoutMs: 5000 });
    await flush();
    s.receive(RELOAD);
    s.receive({ type: 'request', id: '2', method: 'click', params: {}, timeoutMs: 5000 });
    await flush();
    expect(relay).toHaveBeenCalledTimes(1);
    expect(s.sent.at(-1)).toMatchObject({ type: 'response', id: '2', error: { code: 'internal' } });
    expect((s.sent.at(-1) as { error: { message: string } }).error.message).toContain('nothing was done');
    expect(reloads).toEqual([]);
    finish({ ok: true, value: {} });
    await flush();
    expect(s.sent.some((f) => (f as { id?: string }).id === '1')).toBe(true);
    expect(reloads).toEqual([RELOAD]);
  });

  it('reloads at once when nothing runs', async () => {
    const { conn, sockets, reloads } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive(ACK);
    sockets[0]!.receive(RELOAD);
    sockets[0]!.receive(RELOAD);
    await flush();
    expect(reloads).toEqual([RELOAD]);
  });
});

describe('backoffDelay', () => {
  it('jitters between half and all of the capped delay', () => {
    expect(backoffDelay(0, () => 0)).toBe(125);
    expect(backoffDelay(0, () => 1)).toBe(250);
    expect(backoffDelay(30, () => 1)).toBe(BACKOFF_CAP_MS);
  });
});

describe('relayFailure', () => {
  const gone = new Error('A listener indicated an asynchronous response by returning true, but the message channel closed before a response was received');
  it('says a read can be repeated when the service worker went away', () => {
    const e = relayFailure('snapshot', gone);
    expect(e.message).toContain('The Tether extension restarted during this call');
    expect(e.message).toContain('call the tool again');
    expect(e.message).not.toContain('listener');
  });
  it('says an action’s outcome is unknown and to look first', () => {
    const e = relayFailure('click', gone);
    expect(e.message).toContain('whether the click happened is unknown');
    expect(e.message).toContain('call browser_snapshot');
    expect(e.message).not.toContain('call the tool again');
    expect(relayFailure('press_key', gone).message).toContain('whether the key press happened');
    expect(relayFailure('navigate', gone).message).toContain('whether the navigation happened');
  });
  it('leaves other failures to toWireError', () => {
    expect(relayFailure('click', new Error('boom')).message).toContain('(boom)');
  });
});
