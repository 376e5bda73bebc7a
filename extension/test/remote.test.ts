// The remote broker on the extension side: the URL the popup takes, the
// pairing kept per broker, the link's failures and the network's changes.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { withPairing } from '../src/background/config';
import { DaemonConnection } from '../src/offscreen/connection';
import { popupView } from '../src/popup/view';
import type { HelloAck } from '../src/protocol.gen';
import { dialFailure, isLoopbackHost, parseBrokerUrl } from '../src/shared/broker';
import type { ConnectionStatus, DaemonConfig } from '../src/shared/messages';
import { handshake, offered } from './support/handshake';
import { advance, flush, track } from './support/clock';
import { FakeSocket } from './support/fake-socket';

describe('parseBrokerUrl', () => {
  it('takes wss://HOST[:PORT]/extension, and a bare wss://HOST as its /extension', () => {
    expect(parseBrokerUrl(' wss://tether.example.org/extension ')).toEqual({
      ok: true,
      broker: { url: 'wss://tether.example.org/extension', origin: 'wss://tether.example.org', host: 'tether.example.org' },
    });
    expect(parseBrokerUrl('wss://Tether.Test:8443')).toEqual({
      ok: true,
      broker: { url: 'wss://tether.test:8443/extension', origin: 'wss://tether.test:8443', host: 'tether.test:8443' },
    });
    // The default port is the same origin, so the same pairing.
    const a = parseBrokerUrl('wss://b.example:443/extension');
    const b = parseBrokerUrl('wss://b.example/extension');
    expect(a.ok && b.ok && a.broker.origin === b.broker.origin).toBe(true);
  });

  it('refuses ws:// to a host that is not this computer, saying why and what to type', () => {
    for (const url of ['ws://tether.example.org/extension', 'ws://192.168.1.5:47615/extension', 'ws://[2001:db8::1]/extension', 'ws://127.0.0.1.nip.io/extension']) {
      const got = parseBrokerUrl(url);
      expect(got.ok, url).toBe(false);
      if (!got.ok) {
        expect(got.error).toMatch(/^Refused: ws:\/\/ is not encrypted/);
        expect(got.error).toContain('wss://');
      }
    }
  });

  it('sends loopback ws:// back to the local daemon', () => {
    for (const url of ['ws://127.0.0.1:47615/extension', 'ws://localhost:47615/extension', 'ws://[::1]:47615/extension']) {
      const got = parseBrokerUrl(url);
      expect(got.ok).toBe(false);
      if (!got.ok) expect(got.error).toMatch(/is this computer: .*clear this field/);
    }
  });

  it('refuses other schemes, paths, credentials, queries and non-URLs with the form to use', () => {
    const cases: Array<[string, RegExp]> = [
      ['https://tether.example.org/extension', /enter wss:\/\/tether\.example\.org\/extension, not https:/],
      ['http://tether.example.org', /not http:/],
      ['ftp://tether.example.org', /is not a broker address/],
      ['tether.example.org', /is not a URL/],
      ['', /is not a URL/],
      ['wss://tether.example.org/mcp', /serves the extension on \/extension, not \/mcp/],
      ['wss://user:pw@tether.example.org/extension', /user name and password/],
      ['wss://tether.example.org/extension?token=x', /query and fragment/],
      ['wss://tether.example.org/extension#x', /query and fragment/],
    ];
    for (const [url, want] of cases) {
      const got = parseBrokerUrl(url);
      expect(got.ok, url).toBe(false);
      if (!got.ok) expect(got.error, url).toMatch(want);
    }
  });

  it('knows loopback host names', () => {
    for (const h of ['localhost', 'LOCALHOST.', 'a.localhost', '127.0.0.1', '127.1.2.3', '[::1]']) expect(isLoopbackHost(h), h).toBe(true);
    for (const h of ['example.org', '128.0.0.1', '127.0.0.1.example', '[::2]', 'localhost.example']) expect(isLoopbackHost(h), h).toBe(false);
  });
});

describe('dialFailure', () => {
  const broker = { url: 'wss://tether.test:8443/extension', origin: 'wss://tether.test:8443', host: 'tether.test:8443' };
  it('says "could not connect securely" when HTTPS gets no answer either', () => {
    expect(dialFailure(broker, undefined)).toMatch(/^Could not connect to tether\.test:8443 securely: check the address and that its certificate is valid\./);
  });
  it('says the upgrade was refused when HTTPS answers', () => {
    const got = dialFailure(broker, 403);
    expect(got).toContain('status 403');
    expect(got).toContain('lists tether.test in remote.hosts');
  });
});

describe('withPairing (each broker its own slug and secret)', () => {
  const base = (): DaemonConfig => ({ port: 1, label: 'Work', profileId: 'p-1', extVersion: '1', tabs: [], halted: false });
  const stored = {
    assignedSlug: 'work',
    secret: 'local-secret',
    brokerSecrets: { 'wss://tether.test:8443': 'remote-secret' },
    brokerProfiles: { 'wss://tether.test:8443': { slug: 'work-2' } },
  };
  it('gives the local daemon its own', () => {
    expect(withPairing(base(), stored)).toMatchObject({ slug: 'work', secret: 'local-secret' });
    expect(withPairing(base(), stored).brokerUrl).toBeUndefined();
  });
  it("gives a remote broker the one kept under its origin, never the local one's", () => {
    expect(withPairing(base(), { ...stored, brokerUrl: 'wss://tether.test:8443/extension' })).toMatchObject({
      brokerUrl: 'wss://tether.test:8443/extension',
      slug: 'work-2',
      secret: 'remote-secret',
    });
    const other = withPairing(base(), { ...stored, brokerUrl: 'wss://other.test/extension' });
    expect(other.secret).toBeUndefined();
    expect(other.slug).toBeUndefined();
  });
  it('passes a stored URL that does not parse on, without a secret', () => {
    const got = withPairing(base(), { ...stored, brokerUrl: 'ws://evil.example/extension' });
    expect(got.brokerUrl).toBe('ws://evil.example/extension');
    expect(got.secret).toBeUndefined();
  });
});


describe('DaemonConnection with a remote broker', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  let config: DaemonConfig;
  let online: boolean;
  let probeAnswer: number | undefined;
  beforeEach(() => {
    config = { port: 47615, label: 'Work', profileId: 'p-1', extVersion: '1', tabs: [], halted: false, secret: 'local-secret', brokerUrl: 'wss://tether.test:8443/extension' };
    online = true;
    probeAnswer = undefined;
  });
  function setup() {
    const sockets: FakeSocket[] = [];
    const statuses: ConnectionStatus[] = [];
    const acks: Array<[HelloAck, string | undefined]> = [];
    const probes: string[] = [];
    const unpaired: Array<string | undefined> = [];
    const conn = new DaemonConnection({
      openSocket: (url, protocols) => {
        const s = new FakeSocket(url, protocols);
        sockets.push(s);
        return s;
      },
      getConfig: async () => ({ ...config }),
      relay: async () => ({ ok: true, value: {} }),
      reportStatus: (s) => statuses.push(s),
      reportAck: (a, b) => acks.push([a, b]),
      reportUnpaired: (b) => unpaired.push(b),
      reload: () => undefined,
      userAgent: 'UA',
      random: () => 1,
      isOnline: () => online,
      probe: async (url) => {
        probes.push(url);
        return probeAnswer;
      },
    });
    track(conn);
    return { conn, sockets, statuses, acks, probes, unpaired };
  }

  it('dials the broker, shows its code and host, and keeps the secret it issues under its origin', async () => {
    delete config.secret; // a first pairing with this broker
    const { conn, sockets, statuses, acks, unpaired } = setup();
    conn.start();
    await flush();
    const s = sockets[0]!;
    expect(s.url).toBe('wss://tether.test:8443/extension');
    expect(s.protocols).toEqual(['tether', expect.stringMatching(/^tether\.nonce\.[0-9a-f]{64}$/)]);
    expect(offered(s).endpoint).toBe('tether.test:8443');
    s.open();
    const { hello } = await handshake(s); // a first pairing: no proof, no secret
    expect(hello).not.toHaveProperty('secret');
    s.receive({ type: 'pairing', code: 'ABCD23', message: 'Waiting' });
    expect(statuses.at(-1)).toMatchObject({ state: 'pairing', pairingCode: 'ABCD23', broker: 'tether.test:8443' });
    expect(unpaired).toEqual(['wss://tether.test:8443']); // the broker's slug is dropped, not the local daemon's
    s.receive({ type: 'hello_ack', daemonVersion: 'x', assignedLabel: 'Work', assignedSlug: 'work', secret: 'remote-secret' });
    expect(acks.at(-1)![1]).toBe('wss://tether.test:8443');
    expect(statuses.at(-1)).toMatchObject({ state: 'connected', broker: 'tether.test:8443' });
    // The next socket to this broker names the profile and its hello proves the issued secret, even before storage has it.
    s.close();
    await advance(250);
    expect(sockets[1]!.protocols).toEqual(['tether', expect.stringMatching(/^tether\.nonce\.[0-9a-f]{64}$/), expect.stringMatching(/^tether\.profile\.p-1\.[0-9a-f]{64}$/)]);
    sockets[1]!.open();
    const next = await handshake(sockets[1]!, { secret: 'remote-secret' }); // checks the proof, over the broker's host
    expect(next.hello.proof).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(sockets[1]!.sent)).not.toContain('remote-secret');
  });

  it("never sends one daemon's secret to another: switching keeps each its own", async () => {
    config = { ...config, brokerUrl: undefined, secret: undefined };
    delete config.brokerUrl;
    const { conn, sockets } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!);
    sockets[0]!.receive({ type: 'hello_ack', assignedLabel: 'Work', assignedSlug: 'work', secret: 'local-issued' });
    // The user picks a remote broker (storage has no secret for it yet).
    config.brokerUrl = 'wss://tether.test:8443/extension';
    conn.reconnect();
    await flush();
    const remote = sockets[1]!;
    expect(remote.url).toBe('wss://tether.test:8443/extension');
    expect(remote.protocols).toEqual(['tether', expect.stringMatching(/^tether\.nonce\./)]); // names no profile there
    remote.open();
    // It pairs anew there: its hello proves nothing and carries no secret.
    const { hello } = await handshake(remote);
    expect(hello).not.toHaveProperty('proof');
    expect(JSON.stringify(remote.sent)).not.toContain('local-issued');
    // Back to the local daemon: its secret comes back.
    delete config.brokerUrl;
    conn.reconnect();
    await flush();
    expect(sockets[2]!.url).toBe('ws://127.0.0.1:47615/extension');
    expect(sockets[2]!.protocols).toEqual(['tether', expect.stringMatching(/^tether\.nonce\./), expect.stringMatching(/^tether\.profile\.p-1\.[0-9a-f]{64}$/)]);
    sockets[2]!.open();
    await handshake(sockets[2]!, { secret: 'local-issued' }); // the proof is the local secret's
  });

  it('never dials a URL that does not pass parseBrokerUrl, and says why', async () => {
    config.brokerUrl = 'ws://tether.example.org/extension';
    const { conn, sockets, statuses } = setup();
    conn.start();
    await flush();
    await advance(60_000);
    expect(sockets).toHaveLength(0);
    expect(statuses.at(-1)).toMatchObject({ state: 'disconnected', halted: true, broker: 'ws://tether.example.org/extension' });
    expect(statuses.at(-1)!.linkError).toMatch(/^Refused: ws:\/\//);
  });

  it('says "could not connect securely" when the socket fails before opening and HTTPS gets no answer, once per run of failures', async () => {
    const { conn, sockets, statuses, probes } = setup();
    conn.start();
    await flush();
    sockets[0]!.close(); // 1006 before open: a certificate error looks like this
    await flush();
    expect(probes).toEqual(['https://tether.test:8443/health']);
    expect(statuses.at(-1)).toMatchObject({ state: 'disconnected', broker: 'tether.test:8443' });
    expect(statuses.at(-1)!.linkError).toMatch(/^Could not connect to tether\.test:8443 securely/);
    await advance(250);
    sockets[1]!.close();
    await flush();
    expect(probes).toHaveLength(1);
    // Once a socket opens, the message goes.
    await advance(500);
    sockets[2]!.open();
    expect(statuses.at(-1)!.linkError).toBeUndefined();
  });

  it('tells a refused upgrade apart when HTTPS answers', async () => {
    probeAnswer = 403;
    const { conn, sockets, statuses } = setup();
    conn.start();
    await flush();
    sockets[0]!.close();
    await flush();
    expect(statuses.at(-1)!.linkError).toContain('answers over HTTPS (status 403');
  });

  it('does not probe after a socket that was open drops, and dials again within its backoff', async () => {
    const { conn, sockets, statuses, probes } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    await handshake(sockets[0]!, { secret: 'local-secret' });
    sockets[0]!.receive({ type: 'hello_ack', assignedLabel: 'Work', assignedSlug: 'work' });
    sockets[0]!.close();
    await flush();
    expect(probes).toEqual([]);
    expect(statuses.at(-1)).toMatchObject({ state: 'disconnected' });
    expect(statuses.at(-1)!.linkError).toBeUndefined();
    await advance(250);
    expect(sockets).toHaveLength(2);
  });

  it('does not dial while offline, and dials at once on the online event with the backoff reset', async () => {
    const { conn, sockets, statuses } = setup();
    conn.start();
    await flush();
    // Failures push the backoff up…
    for (let i = 0; i < 5; i++) {
      sockets.at(-1)!.close();
      await advance(5000);
    }
    expect(sockets).toHaveLength(6);
    // …then the network goes away.
    online = false;
    conn.networkDown();
    sockets.at(-1)!.close();
    expect(statuses.at(-1)).toMatchObject({ state: 'disconnected', offline: true });
    await advance(60_000);
    expect(sockets).toHaveLength(6);
    online = true;
    conn.networkUp();
    await flush();
    expect(sockets).toHaveLength(7);
    expect(statuses.at(-1)!.offline).toBeUndefined();
    // The backoff starts over: the next attempt comes after 250 ms, not 5 s.
    sockets.at(-1)!.close();
    await advance(250);
    expect(sockets).toHaveLength(8);
  });

  it('does not start dialling while offline', async () => {
    online = false;
    const { conn, sockets, statuses } = setup();
    conn.start();
    await flush();
    expect(sockets).toHaveLength(0);
    expect(statuses.at(-1)).toMatchObject({ offline: true, broker: 'tether.test:8443' });
    online = true;
    conn.networkUp();
    await flush();
    expect(sockets).toHaveLength(1);
  });

  it('keeps an open socket on the online event', async () => {
    const { conn, sockets } = setup();
    conn.start();
    await flush();
    sockets[0]!.open();
    conn.networkUp();
    await flush();
    expect(sockets).toHaveLength(1);
    expect(sockets[0]!.readyState).toBe(1);
  });

  it('keeps dialling the local daemon while offline (loopback needs no network)', async () => {
    delete config.brokerUrl;
    online = false;
    const { conn, sockets } = setup();
    conn.start();
    await flush();
    expect(sockets[0]!.url).toBe('ws://127.0.0.1:47615/extension');
    sockets[0]!.close();
    await advance(250);
    expect(sockets).toHaveLength(2);
  });
});

describe('popupView with a remote broker', () => {
  const stored = {
    label: 'Work',
    assignedSlug: 'local-slug',
    brokerUrl: 'wss://tether.test:8443/extension',
    brokerProfiles: { 'wss://tether.test:8443': { slug: 'work', label: 'Work', version: '0.4.0' } },
  };
  const at = (s: Partial<ConnectionStatus>): ConnectionStatus => ({ state: 'disconnected', port: 47615, since: 0, broker: 'tether.test:8443', ...s });

  it('names the broker and the slug there when connected', () => {
    expect(popupView(at({ state: 'connected' }), stored)).toMatchObject({ state: 'connected', headline: 'Connected to tether.test:8443', broker: 'tether.test:8443', slug: 'work', version: 'Tether 0.4.0' });
  });
  it("shows the code with the operator's command while pairing", () => {
    const v = popupView(at({ state: 'pairing', pairingCode: 'ABCD23' }), stored);
    expect(v.pairingCode).toBe('ABCD23');
    expect(v.nextStep).toContain('tether profiles approve ABCD23');
    expect(v.nextStep).toContain('tether.test:8443');
  });
  it('shows why the link failed, or that the computer is offline', () => {
    const v = popupView(at({ linkError: 'Could not connect to tether.test:8443 securely: check the address and that its certificate is valid.' }), stored);
    expect(v).toMatchObject({ headline: 'Cannot reach tether.test:8443', retry: true });
    expect(v.refusal).toMatch(/securely/);
    expect(popupView(at({ offline: true }), stored).headline).toBe('Offline');
  });
  it("reads a status left from the local daemon as connecting, and says how to go back", () => {
    const v = popupView({ state: 'connected', port: 47615, since: 0 }, stored);
    expect(v.state).toBe('connecting');
    expect(v.nextStep).toContain('clear the broker');
  });
  it("reads a status left from a broker as connecting once back on this computer", () => {
    expect(popupView(at({ state: 'connected' }), { assignedSlug: 'work' }).state).toBe('connecting');
  });
  it('says "this computer" for the local daemon', () => {
    expect(popupView({ state: 'connected', port: 47615, since: 0 }, { assignedSlug: 'work' })).toMatchObject({ broker: 'this computer', slug: 'work' });
  });
});
