// Protocol 4's handshake on the extension's side: the daemon proves itself
// first (its challenge), and until that proof checks out the extension
// sends nothing and obeys nothing. The daemon's side is played by
// support/handshake.ts with the functions of shared/proof.ts, which the
// test vector below ties to protocol/proof.go.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BACKOFF_CAP_MS, CHALLENGE_WAIT_MS, DaemonConnection, LOCAL_PROBE_QUIET_MS, OPEN_WAIT_MS, REMOTE_OPEN_WAIT_MS, portVerdict, type ConnectionDeps, type PortAnswer } from '../src/offscreen/connection';
import type { Challenge, HelloAck } from '../src/protocol.gen';
import { SLOW_RETRY_MS, type ConnectionStatus, type DaemonConfig } from '../src/shared/messages';
import { daemonProof, extensionProof, HEX64, newNonce, parseKey, profileKey, proofEquals } from '../src/shared/proof';
import { challengeFor, handshake, OTHER_PAIRING_KEY, offered, PAIRING_KEY, until, untilClosed } from './support/handshake';
import { advance, flush, track } from './support/clock';
import { FakeSocket } from './support/fake-socket';

describe('shared/proof.ts agrees with protocol/proof.go', () => {
  // Printed by protocol.DaemonProof / protocol.ExtensionProof (Go) for key
  // bytes 0x00..0x1f, endpoint LocalEndpoint(8765), profile id "p1",
  // extension nonce "a"×64, daemon nonce "b"×64.
  const key = new Uint8Array(Array.from({ length: 32 }, (_, i) => i));
  const fields = { endpoint: '127.0.0.1:8765', named: 'p1', extNonce: 'a'.repeat(64), daemonNonce: 'b'.repeat(64) };

  it('computes the daemon proof and the extension proof as Go does', async () => {
    expect(await daemonProof(key, fields)).toBe('ae19ed35ea793242a55b02b6f5cfe4062282510d48da3cd716bcefaef9202295');
    expect(await extensionProof(key, fields)).toBe('97b3062330757e01eb073fb66d87c6514e8a3c81553bd648e80b98198c4c680e');
    // Without a named profile (a new one), the field is empty, not left out.
    expect(await daemonProof(key, { ...fields, named: '' })).toBe('e5324533bfe7db8a1f07f5edf5200e051a4c548598bc4feb21f98e9de85c286b');
  });

  it('keys a paired profile on SHA-256 of its secret, as protocol.ProfileKey', async () => {
    const k = await profileKey('s3cret');
    expect(Array.from(k, (b) => b.toString(16).padStart(2, '0')).join('')).toBe('1ec1c26b50d5d3c58d9583181af8076655fe00756bf7285940ba3670f99fcba0');
    // Go: ExtensionProof(ProfileKey("s3cret"), RemoteEndpoint("Tether.Test:8443"), "p1", "a"×64, "b"×64).
    expect(await extensionProof(k, { ...fields, endpoint: 'tether.test:8443' })).toBe('9d6e9ddb0928610d259aaae5477fcc7284df6b2f1953c4ac0237c13ee5e6dd3f');
  });

  it('parses only 64 lowercase hex digits as a key, and makes fresh nonces', () => {
    expect(Array.from(parseKey('000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f')!)).toEqual(Array.from(key));
    for (const bad of ['', '00', 'A'.repeat(64), 'g'.repeat(64), '0'.repeat(63), '0'.repeat(65)]) expect(parseKey(bad), bad).toBeUndefined();
    const a = newNonce();
    expect(a).toMatch(HEX64);
    expect(newNonce()).not.toBe(a);
  });

  it("never makes one side's proof the other's: the first line differs", async () => {
    // A daemon cannot echo its own proof back as the extension's.
    expect(await daemonProof(key, fields)).not.toBe(await extensionProof(key, fields));
  });

  it('compares proofs exactly', () => {
    const p = 'ab'.repeat(32);
    expect(proofEquals(p, p)).toBe(true);
    expect(proofEquals('ab'.repeat(31) + 'ac', p)).toBe(false);
    expect(proofEquals(p.slice(1), p)).toBe(false);
    expect(proofEquals(undefined, p)).toBe(false);
    expect(proofEquals(42, p)).toBe(false);
  });
});


const ACK = { type: 'hello_ack', daemonVersion: 'x', assignedLabel: 'Work', assignedSlug: 'work' };
const REQUEST = { type: 'request', id: '1', method: 'tabs_list', params: {}, timeoutMs: 5000 };

describe('DaemonConnection: the daemon proves itself before anything is sent', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  let config: DaemonConfig;
  beforeEach(() => {
    config = { port: 12345, label: 'Work', profileId: 'p-1', extVersion: '0.1.0', tabs: [], halted: false };
  });

  function setup() {
    const sockets: FakeSocket[] = [];
    const statuses: ConnectionStatus[] = [];
    const acks: HelloAck[] = [];
    const relay = vi.fn<ConnectionDeps['relay']>(async () => ({ ok: true, value: {} }));
    const conn = new DaemonConnection({
      openSocket: (url, protocols) => {
        const s = new FakeSocket(url, protocols);
        sockets.push(s);
        return s;
      },
      getConfig: async () => ({ ...config }),
      relay,
      reportStatus: (s) => statuses.push(s),
      reportAck: (a) => acks.push(a),
      reportUnpaired: () => undefined,
      reload: () => undefined,
      userAgent: 'UA',
      random: () => 1,
    });
    track(conn);
    return { conn, sockets, statuses, acks, relay };
  }

  /** Starts conn and opens its first socket. */
  async function opened(conn: DaemonConnection, sockets: FakeSocket[]): Promise<FakeSocket> {
    conn.start();
    await flush();
    const s = sockets.at(-1)!;
    s.open();
    return s;
  }

  /** The socket was refused: closed, nothing sent, and the status says the program on the port is not Tether. */
  function expectRefused(s: FakeSocket, statuses: ConnectionStatus[]): ConnectionStatus {
    expect(s.readyState).toBe(3);
    expect(s.sent).toEqual([]);
    const last = statuses.at(-1)!;
    expect(last).toMatchObject({ state: 'disconnected', lastRefusal: { code: 'unverified' } });
    expect(statuses.map((x) => x.state)).not.toContain('connected');
    return last;
  }

  it('paired, facing a wrong profile proof: sends nothing, closes, obeys none of the frames that follow, retries slowly', async () => {
    config.secret = 's3cret';
    const { conn, sockets, statuses, acks, relay } = setup();
    const s = await opened(conn, sockets);
    expect(offered(s).named).toBe('p-1');
    // A program that does not hold this profile's key: its proof is for another secret.
    const ch = await challengeFor(s, { secret: 'not-the-secret' });
    expect(ch.profileProof).toMatch(HEX64);
    s.receive(ch);
    // What a squatter would send next, before the extension finished checking.
    s.receive(ACK);
    s.receive(REQUEST);
    await untilClosed(s);
    await flush();
    const last = expectRefused(s, statuses);
    expect(last.lastRefusal!.message).toContain('Another program, not Tether, answers on 127.0.0.1:12345');
    expect(last.lastRefusal!.message).toContain('not the Tether this browser paired with');
    expect(last.lastRefusal!.message).toContain('sent it nothing');
    expect(last).not.toHaveProperty('pairAgain');
    // The popup tells how to free the port, not to start Tether (which cannot bind it).
    expect(last.otherProgram).toBe(true);
    // Frames after the close are dropped too.
    s.receive(ACK);
    s.receive(REQUEST);
    await flush();
    expect(relay).not.toHaveBeenCalled();
    expect(acks).toEqual([]);
    expect(s.sent).toEqual([]);
    // A wrong proof: the next attempt comes after SLOW_RETRY_MS, not the usual backoff.
    await advance(SLOW_RETRY_MS - 1);
    expect(sockets).toHaveLength(1);
    await advance(1);
    expect(sockets).toHaveLength(2);
  });

  it('drops the frames that come while a good challenge is being checked, then speaks the protocol', async () => {
    config.secret = 's3cret';
    const { conn, sockets, statuses, acks, relay } = setup();
    const s = await opened(conn, sockets);
    const ch = await challengeFor(s, { secret: 's3cret' });
    s.receive(ch);
    s.receive(ACK); // before the hello: not an answer to it
    s.receive(REQUEST);
    await until(() => s.sent.length > 0, 'the hello');
    await flush();
    expect(s.sent).toHaveLength(1);
    expect(s.sent[0]).toMatchObject({ type: 'hello', protocol: 4 });
    expect(acks).toEqual([]);
    expect(relay).not.toHaveBeenCalled();
    expect(statuses.map((x) => x.state)).not.toContain('connected');
    // The challenge wait is over once the challenge came.
    await advance(2 * CHALLENGE_WAIT_MS);
    expect(s.readyState).toBe(1);
    s.receive(ACK);
    expect(statuses.at(-1)).toMatchObject({ state: 'connected' });
    s.receive({ ...REQUEST, id: '2' });
    await flush();
    expect(relay).toHaveBeenCalledTimes(1);
    expect(s.sent.at(-1)).toMatchObject({ type: 'response', id: '2' });
  });

  it('closes a socket that sends no challenge within CHALLENGE_WAIT_MS, having sent nothing', async () => {
    const { conn, sockets, statuses } = setup();
    const s = await opened(conn, sockets);
    await advance(CHALLENGE_WAIT_MS - 1);
    expect(s.readyState).toBe(1);
    expect(s.sent).toEqual([]);
    await advance(1);
    const last = expectRefused(s, statuses);
    expect(last.lastRefusal!.message).toContain('sent no challenge');
    expect(last.lastRefusal!.message).toContain('Another program, not Tether, answers on 127.0.0.1:12345, or a Tether older than this extension');
    expect(last.otherProgram).toBe(true);
    // Maybe an older Tether about to be updated: the usual backoff (250 ms with random() = 1), not the slow retry.
    await advance(250);
    expect(sockets).toHaveLength(2);
  });

  it('refuses a first frame that is not a challenge (a squatter skipping it): nothing sent, never connected', async () => {
    const { conn, sockets, statuses, acks, relay } = setup();
    const s = await opened(conn, sockets);
    s.receive({ ...ACK, secret: 'planted' });
    s.receive(REQUEST);
    await untilClosed(s);
    await flush();
    const last = expectRefused(s, statuses);
    expect(last.lastRefusal!.message).toContain('sent no challenge');
    // Tether's first frame is always its challenge: this is no Tether, old or new.
    expect(last.lastRefusal!.message).toMatch(/^Another program, not Tether, answers on 127\.0\.0\.1:12345: /);
    expect(last.otherProgram).toBe(true);
    expect(acks).toEqual([]);
    expect(relay).not.toHaveBeenCalled();
  });

  it('refuses a challenge whose nonce is not 64 hex digits', async () => {
    const { conn, sockets, statuses } = setup();
    const s = await opened(conn, sockets);
    const ch = await challengeFor(s);
    s.receive({ ...ch, nonce: 'B'.repeat(64) });
    await untilClosed(s);
    expectRefused(s, statuses);
  });

  describe('not paired yet', () => {
    it('with a pairing key: refuses a daemon that proves another key', async () => {
      config.pairingKey = PAIRING_KEY;
      const { conn, sockets, statuses } = setup();
      const s = await opened(conn, sockets);
      expect(offered(s).named).toBe('');
      s.receive(await challengeFor(s, { pairingKey: OTHER_PAIRING_KEY }));
      await untilClosed(s);
      const last = expectRefused(s, statuses);
      expect(last.lastRefusal!.message).toContain("could not prove it holds the folder's pairing key");
      expect(last.lastRefusal!.message).toContain('Another program, not Tether, answers on 127.0.0.1:12345');
      expect(last).not.toHaveProperty('pairAgain');
      expect(last).toMatchObject({ otherProgram: true });
    });

    it('with a pairing key: refuses a challenge without a pairing proof', async () => {
      config.pairingKey = PAIRING_KEY;
      const { conn, sockets, statuses } = setup();
      const s = await opened(conn, sockets);
      const ch: Partial<Challenge> = await challengeFor(s, { pairingKey: PAIRING_KEY });
      delete ch.pairingProof;
      s.receive(ch);
      await untilClosed(s);
      expectRefused(s, statuses);
    });

    it('with a pairing key: says hello, without a proof, to the daemon that proves it', async () => {
      config.pairingKey = PAIRING_KEY;
      const { conn, sockets } = setup();
      const s = await opened(conn, sockets);
      const { hello } = await handshake(s, { pairingKey: PAIRING_KEY });
      expect(hello).toMatchObject({ type: 'hello', protocol: 4, profileId: 'p-1' });
      expect(hello).not.toHaveProperty('proof');
      expect(hello).not.toHaveProperty('pairingKey');
      expect(JSON.stringify(s.sent)).not.toContain(PAIRING_KEY);
    });

    it('without a pairing key: trusts the daemon that answers its first pairing', async () => {
      const { conn, sockets } = setup();
      const s = await opened(conn, sockets);
      const { hello } = await handshake(s, { pairingKey: OTHER_PAIRING_KEY });
      expect(hello).toMatchObject({ type: 'hello', protocol: 4, profileId: 'p-1' });
      expect(hello).not.toHaveProperty('proof');
    });
  });

  describe('paired, facing a daemon that does not know the profile (no profile proof)', () => {
    it('pairs anew (hello without proof) with the daemon that proves the pairing key', async () => {
      config.secret = 's3cret';
      config.pairingKey = PAIRING_KEY;
      const { conn, sockets } = setup();
      const s = await opened(conn, sockets);
      expect(offered(s).named).toBe('p-1');
      const { challenge, hello } = await handshake(s, { pairingKey: PAIRING_KEY }); // the daemon has no record of p-1
      expect(challenge).not.toHaveProperty('profileProof');
      expect(hello).toMatchObject({ type: 'hello', profileId: 'p-1' });
      expect(hello).not.toHaveProperty('proof');
      expect(JSON.stringify(s.sent)).not.toContain('s3cret');
    });

    it('refuses a daemon proving another pairing key, without offering Pair again (the folder\'s own Tether would prove its key)', async () => {
      config.secret = 's3cret';
      config.pairingKey = PAIRING_KEY;
      const { conn, sockets, statuses } = setup();
      const s = await opened(conn, sockets);
      s.receive(await challengeFor(s, { pairingKey: OTHER_PAIRING_KEY }));
      await untilClosed(s);
      const refused = expectRefused(s, statuses);
      expect(refused).not.toHaveProperty('pairAgain');
      expect(refused.lastRefusal?.message).toContain('nor the Tether that wrote this extension\'s folder');
      expect(refused).toMatchObject({ otherProgram: true });
    });

    it('without a pairing key: refuses with pairAgain; Pair again then connects as a new profile', async () => {
      // Paired on a first socket: the issued secret is held in memory (storage may lag).
      const { conn, sockets, statuses } = setup();
      const first = await opened(conn, sockets);
      await handshake(first);
      first.receive({ ...ACK, secret: 'issued' });
      expect(statuses.at(-1)).toMatchObject({ state: 'connected' });
      first.close();
      await advance(250);
      // The daemon forgot this browser (tether profiles forget): no profile proof.
      const s = sockets[1]!;
      expect(offered(s).named).toBe('p-1');
      s.open();
      s.receive(await challengeFor(s));
      await untilClosed(s);
      await flush();
      const last = expectRefused(s, [statuses.at(-1)!]); // the first socket was connected: only this status counts
      expect(last).toMatchObject({ pairAgain: true });
      expect(last.lastRefusal!.message).toContain('Pair again');
      // Maybe the Tether that forgot this browser: not called another program.
      expect(last).not.toHaveProperty('otherProgram');
      // The user presses Pair again (the service worker removed the stored secret first).
      conn.pairAgainWithLocal();
      await flush();
      expect(sockets).toHaveLength(3);
      const again = sockets[2]!;
      expect(again.protocols).toEqual(['tether', expect.stringMatching(/^tether\.nonce\.[0-9a-f]{64}$/)]);
      expect(statuses.at(-1)).not.toHaveProperty('pairAgain');
      expect(statuses.at(-1)).not.toHaveProperty('lastRefusal');
      again.open();
      const { hello } = await handshake(again);
      expect(hello).not.toHaveProperty('proof');
      again.receive({ type: 'pairing', code: 'K7M4PX', message: 'Approve it.' });
      expect(statuses.at(-1)).toMatchObject({ state: 'pairing', pairingCode: 'K7M4PX' });
      expect(statuses.at(-1)).not.toHaveProperty('pairAgain');
    });
  });

  describe('the proof is bound to this socket', () => {
    it('refuses a profile proof computed for another port (a relay to the real daemon)', async () => {
      config.secret = 's3cret';
      const { conn, sockets, statuses } = setup();
      const s = await opened(conn, sockets);
      expect(offered(s).endpoint).toBe('127.0.0.1:12345');
      s.receive(await challengeFor(s, { secret: 's3cret', endpoint: '127.0.0.1:12346' }));
      await untilClosed(s);
      expectRefused(s, statuses);
    });

    it('refuses a pairing proof computed for another port', async () => {
      config.pairingKey = PAIRING_KEY;
      const { conn, sockets, statuses } = setup();
      const s = await opened(conn, sockets);
      s.receive(await challengeFor(s, { pairingKey: PAIRING_KEY, endpoint: '127.0.0.1:47615' }));
      await untilClosed(s);
      expectRefused(s, statuses);
    });

    it("refuses a challenge replayed from another socket (the nonce is the socket's own)", async () => {
      config.secret = 's3cret';
      const { conn, sockets, statuses } = setup();
      const first = await opened(conn, sockets);
      const ch = await challengeFor(first, { secret: 's3cret' });
      first.close();
      await advance(250);
      const s = sockets[1]!;
      expect(offered(s).nonce).not.toBe(offered(first).nonce);
      s.open();
      s.receive(ch);
      await untilClosed(s);
      expectRefused(s, statuses);
    });
  });

  describe('with a remote broker', () => {
    beforeEach(() => {
      config.port = 47615;
      config.brokerUrl = 'wss://Tether.Test:8443/extension';
    });

    it('proves the secret over the broker host (lower case) when the broker proves it', async () => {
      config.secret = 'remote-secret';
      const { conn, sockets } = setup();
      const s = await opened(conn, sockets);
      expect(offered(s)).toMatchObject({ endpoint: 'tether.test:8443', named: 'p-1' });
      const { hello } = await handshake(s, { secret: 'remote-secret' }); // checks the proof over tether.test:8443
      expect(hello.proof).toMatch(HEX64);
    });

    it('paired, the broker without a profile proof: pairs anew, hello without proof', async () => {
      config.secret = 'remote-secret';
      const { conn, sockets, statuses } = setup();
      const s = await opened(conn, sockets);
      const { hello, challenge } = await handshake(s);
      expect(challenge).not.toHaveProperty('profileProof');
      expect(hello).toMatchObject({ type: 'hello', profileId: 'p-1' });
      expect(hello).not.toHaveProperty('proof');
      expect(statuses.at(-1)).not.toHaveProperty('pairAgain');
    });

    it('paired, the broker with a wrong profile proof: refused, nothing sent', async () => {
      config.secret = 'remote-secret';
      const { conn, sockets, statuses } = setup();
      const s = await opened(conn, sockets);
      s.receive(await challengeFor(s, { secret: 'another-secret' }));
      await untilClosed(s);
      const last = expectRefused(s, statuses);
      expect(last).toMatchObject({ broker: 'tether.test:8443' });
      expect(last.lastRefusal!.message).toContain('tether.test:8443');
      // The port steps are for this computer's Tether only.
      expect(last).not.toHaveProperty('otherProgram');
    });

    it('refuses a profile proof computed for another host', async () => {
      config.secret = 'remote-secret';
      const { conn, sockets, statuses } = setup();
      const s = await opened(conn, sockets);
      s.receive(await challengeFor(s, { secret: 'remote-secret', endpoint: 'evil.test:8443' }));
      await untilClosed(s);
      expectRefused(s, statuses);
    });

    it("never holds a broker to the local folder's pairing key", async () => {
      config.pairingKey = PAIRING_KEY;
      const { conn, sockets } = setup();
      const s = await opened(conn, sockets);
      const { hello } = await handshake(s, { pairingKey: OTHER_PAIRING_KEY });
      expect(hello).not.toHaveProperty('proof');
    });
  });
});

describe('DaemonConnection: the local socket did not open (what answers on the port?)', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const config: DaemonConfig = { port: 47615, label: 'Work', profileId: 'p-1', extVersion: '0.1.0', tabs: [], halted: false, secret: 's3cret' };

  /** A connection whose port answers as answers says, in turn (the last one repeats); probed lists the URLs asked. */
  function setup(answers: PortAnswer[], extra: Partial<DaemonConfig> = {}) {
    const sockets: FakeSocket[] = [];
    const statuses: ConnectionStatus[] = [];
    const probed: string[] = [];
    const conn = new DaemonConnection({
      openSocket: (url, protocols) => {
        const s = new FakeSocket(url, protocols);
        sockets.push(s);
        return s;
      },
      getConfig: async () => ({ ...config, ...extra }),
      relay: async () => ({ ok: true, value: {} }),
      reportStatus: (s) => statuses.push(s),
      reportAck: () => undefined,
      reportUnpaired: () => undefined,
      reload: () => undefined,
      userAgent: 'UA',
      random: () => 1,
      probeLocal: async (url) => {
        probed.push(url);
        return answers.length > 1 ? answers.shift()! : answers[0]!;
      },
    });
    track(conn);
    return { conn, sockets, statuses, probed };
  }

  /** Starts conn; its first socket fails before it opens, as Chrome reports a refused upgrade or a refused connection (1006). */
  async function failFirst(conn: DaemonConnection, sockets: FakeSocket[]): Promise<FakeSocket> {
    conn.start();
    await flush();
    const s = sockets[0]!;
    s.close();
    await flush();
    return s;
  }

  it('a plain HTTP server (404 to the upgrade and to /health): another program, not Tether; nothing sent', async () => {
    const { conn, sockets, statuses, probed } = setup([{ kind: 'http', status: 404, tether: false }]);
    const s = await failFirst(conn, sockets);
    expect(probed).toEqual(['http://127.0.0.1:47615/health']);
    expect(s.sent).toEqual([]);
    const last = statuses.at(-1)!;
    expect(last).toMatchObject({ state: 'disconnected', port: 47615, otherProgram: true, lastRefusal: { code: 'unverified' } });
    expect(last.lastRefusal!.message).toBe(
      'Another program, not Tether, answers on 127.0.0.1:47615: it refused the extension\'s WebSocket and answered HTTP 404, which Tether never does. The extension sent it nothing (no hello, no secret) and obeys none of its requests.',
    );
    // It keeps trying with the usual backoff, so it connects soon after the port is free.
    await advance(250);
    expect(sockets).toHaveLength(2);
  });

  it('a server that accepts and never answers: another program', async () => {
    const { conn, sockets, statuses } = setup([{ kind: 'silent' }]);
    await failFirst(conn, sockets);
    expect(statuses.at(-1)).toMatchObject({ otherProgram: true, lastRefusal: { code: 'unverified' } });
    expect(statuses.at(-1)!.lastRefusal!.message).toContain('accepted the connection but gave no HTTP answer');
  });

  it('nothing listening (connection refused): Tether is not running, with no refusal; a freed port clears an earlier one', async () => {
    const { conn, sockets, statuses } = setup([{ kind: 'http', status: 200, tether: false }, { kind: 'none' }]);
    await failFirst(conn, sockets);
    expect(statuses.at(-1)).toMatchObject({ otherProgram: true, lastRefusal: { code: 'unverified' } });
    expect(statuses.at(-1)!.lastRefusal!.message).toContain('answered HTTP 200');
    // The user quit that program: the next attempt finds nothing on the port.
    await advance(250);
    sockets[1]!.close();
    await flush();
    const last = statuses.at(-1)!;
    expect(last.state).toBe('disconnected');
    expect(last).not.toHaveProperty('lastRefusal');
    expect(last).not.toHaveProperty('otherProgram');
  });

  it('while nothing listens, probes the port once a minute, not after every failed socket', async () => {
    const { conn, sockets, statuses, probed } = setup([{ kind: 'none' }]);
    const failFrom = Date.now();
    await failFirst(conn, sockets);
    expect(probed).toHaveLength(1);
    expect(statuses.at(-1)).not.toHaveProperty('otherProgram');
    // Retries within the quiet minute: sockets, no probes.
    let failed = 1;
    while (Date.now() - failFrom < LOCAL_PROBE_QUIET_MS - BACKOFF_CAP_MS) {
      await advance(BACKOFF_CAP_MS);
      for (; failed < sockets.length; failed++) sockets[failed]!.close();
      await flush();
    }
    expect(failed).toBeGreaterThan(5);
    expect(probed).toHaveLength(1);
    // Past it, the next failure probes again (another program may have taken the port).
    await advance(2 * BACKOFF_CAP_MS);
    for (; failed < sockets.length; failed++) sockets[failed]!.close();
    await flush();
    expect(probed).toHaveLength(2);
    // The popup's Reconnect probes at once, quiet minute or not.
    conn.reconnect();
    await flush();
    for (; failed < sockets.length; failed++) sockets[failed]!.close();
    await flush();
    expect(probed).toHaveLength(3);
  });

  it('gives up a socket whose upgrade is never answered after OPEN_WAIT_MS, then asks the port what answers there', async () => {
    const { conn, sockets, statuses, probed } = setup([{ kind: 'silent' }]);
    conn.start();
    await flush();
    await advance(OPEN_WAIT_MS - 100);
    expect(sockets[0]!.readyState).toBe(0);
    expect(statuses.at(-1)).not.toHaveProperty('otherProgram');
    await advance(200);
    expect(sockets[0]!.readyState).toBe(3);
    expect(sockets[0]!.sent).toEqual([]);
    expect(probed).toEqual(['http://127.0.0.1:47615/health']);
    expect(statuses.at(-1)).toMatchObject({ otherProgram: true, lastRefusal: { code: 'unverified' } });
    // A remote broker's socket gets longer; one that opened is never cut for it.
    const remote = setup([{ kind: 'silent' }], { brokerUrl: 'wss://tether.test/extension' });
    remote.conn.start();
    await flush();
    await advance(OPEN_WAIT_MS + 100);
    expect(remote.sockets[0]!.readyState).toBe(0);
    await advance(REMOTE_OPEN_WAIT_MS);
    expect(remote.sockets[0]!.readyState).toBe(3);
    const opened = setup([{ kind: 'silent' }]);
    opened.conn.start();
    await flush();
    opened.sockets[0]!.open();
    await advance(OPEN_WAIT_MS + 100);
    // (It was closed by the challenge's wait, CHALLENGE_WAIT_MS, which asks the port nothing.)
    expect(opened.probed).toEqual([]);
  });

  it("an answer like Tether's /health: a refused socket, not another program", async () => {
    const { conn, sockets, statuses } = setup([{ kind: 'http', status: 200, tether: true }]);
    await failFirst(conn, sockets);
    const last = statuses.at(-1)!;
    expect(last).toMatchObject({ lastRefusal: { code: 'socket_refused' } });
    expect(last).not.toHaveProperty('otherProgram');
    expect(last.lastRefusal!.message).toContain('--allow-extension');
  });

  it('never probes the local port for a remote broker, nor after a socket that opened', async () => {
    const { conn, sockets, probed } = setup([{ kind: 'http', status: 404, tether: false }], { brokerUrl: 'wss://tether.test/extension' });
    await failFirst(conn, sockets);
    expect(probed).toEqual([]);
    const local = setup([{ kind: 'http', status: 404, tether: false }]);
    local.conn.start();
    await flush();
    local.sockets[0]!.open();
    local.sockets[0]!.close();
    await flush();
    expect(local.probed).toEqual([]);
  });

  it('a socket that proves itself after a probe said another program: the flag goes with the hello', async () => {
    const { conn, sockets, statuses } = setup([{ kind: 'http', status: 404, tether: false }]);
    await failFirst(conn, sockets);
    expect(statuses.at(-1)).toMatchObject({ otherProgram: true });
    await advance(250);
    const s = sockets[1]!;
    s.open();
    await handshake(s, { secret: 's3cret' });
    s.receive(ACK);
    expect(statuses.at(-1)!.state).toBe('connected');
    expect(statuses.at(-1)).not.toHaveProperty('otherProgram');
    expect(statuses.at(-1)).not.toHaveProperty('lastRefusal');
  });
});

describe('portVerdict', () => {
  it('says nothing when nothing answers, and names the address otherwise', () => {
    expect(portVerdict(47615, { kind: 'none' })).toBeUndefined();
    expect(portVerdict(50000, { kind: 'http', status: 426, tether: false })).toMatchObject({ otherProgram: true, why: expect.stringContaining('127.0.0.1:50000') });
    // A Tether-like body with an error status is no Tether's /health.
    expect(portVerdict(50000, { kind: 'http', status: 500, tether: true })).toMatchObject({ otherProgram: true });
  });
});
