// The daemon's side of protocol 4's handshake, for the connection tests: it
// reads what a socket offered (its nonce, the profile it names, where it
// went), answers with a challenge built with shared/proof.ts as the daemon
// builds it (protocol/proof.go), and waits for the extension's hello.
//
// The extension checks the challenge with WebCrypto, which runs outside
// vitest's fake timers, so waiting uses Node's own timers (never faked);
// vi.waitFor would move the fake clock on each try.
import { setTimeout as realSetTimeout } from 'node:timers';
import { expect } from 'vitest';
import type { Challenge } from '../../src/protocol.gen';
import { NONCE_SUBPROTOCOL_PREFIX, PROFILE_SUBPROTOCOL_PREFIX, PROTOCOL_VERSION, SUBPROTOCOL } from '../../src/shared/messages';
import { daemonProof, extensionProof, HEX64, namedProof, newNonce, parseKey, profileKey } from '../../src/shared/proof';

/** What the helpers need of a test's fake socket. */
export interface HandshakeSocket {
  readonly url: string;
  readonly protocols: string[];
  readonly readyState: number;
  readonly sent: unknown[];
  receive(frame: object): void;
}

/** A daemon's pairing key, as tether.json carries it. */
export const PAIRING_KEY = '0123456789abcdef'.repeat(4);
/** Another daemon's pairing key (the daemon always proves one). */
export const OTHER_PAIRING_KEY = 'fedcba9876543210'.repeat(4);

export interface Offered {
  /** The socket's nonce (tether.nonce.<64 hex>). */
  nonce: string;
  /** The profile id the socket named (tether.profile.<id>.<named proof>), '' when none. */
  named: string;
  /** The named proof that came with it ('' when none). */
  namedProof: string;
  /** What the socket dialled, as the daemon derives it: 127.0.0.1:<port>, or the broker's host. */
  endpoint: string;
}

/** Reads a socket's subprotocols as the daemon does (broker/handshake.go offered), checking their form. */
export function offered(s: HandshakeSocket): Offered {
  expect(s.protocols[0]).toBe(SUBPROTOCOL);
  const nonces = s.protocols.filter((p) => p.startsWith(NONCE_SUBPROTOCOL_PREFIX)).map((p) => p.slice(NONCE_SUBPROTOCOL_PREFIX.length));
  expect(nonces).toHaveLength(1);
  expect(nonces[0]).toMatch(HEX64);
  const named = s.protocols.filter((p) => p.startsWith(PROFILE_SUBPROTOCOL_PREFIX)).map((p) => p.slice(PROFILE_SUBPROTOCOL_PREFIX.length));
  expect(named.length).toBeLessThanOrEqual(1);
  const url = new URL(s.url);
  const endpoint = url.protocol === 'ws:' ? `127.0.0.1:${url.port}` : url.host.toLowerCase();
  const [id = '', proof = ''] = (named[0] ?? '').split('.');
  return { nonce: nonces[0]!, named: id, namedProof: proof, endpoint };
}

export interface DaemonKeys {
  /** The secret of the named profile as the daemon knows it: the challenge carries its profileProof. */
  secret?: string;
  /** The daemon's pairing key (default: OTHER_PAIRING_KEY, one the extension does not hold). */
  pairingKey?: string;
  /** Prove for this endpoint instead of the one the socket dialled (a relay on another port). */
  endpoint?: string;
}

/** The challenge a daemon holding keys sends on s (protocol.Challenge). */
export async function challengeFor(s: HandshakeSocket, keys: DaemonKeys = {}): Promise<Challenge> {
  const o = offered(s);
  const fields = { endpoint: keys.endpoint ?? o.endpoint, named: o.named, extNonce: o.nonce, daemonNonce: newNonce() };
  const ch: Challenge = { type: 'challenge', protocol: PROTOCOL_VERSION, nonce: fields.daemonNonce, pairingProof: await daemonProof(parseKey(keys.pairingKey ?? OTHER_PAIRING_KEY)!, fields) };
  if (keys.secret !== undefined && o.named !== '') ch.profileProof = await daemonProof(await profileKey(keys.secret), fields);
  return ch;
}

/** The proof a hello on s answering ch must carry for secret (protocol.ExtensionProof over the hello's profile id). */
export async function helloProof(s: HandshakeSocket, ch: Challenge, secret: string, profileId: string): Promise<string> {
  const o = offered(s);
  return extensionProof(await profileKey(secret), { endpoint: o.endpoint, named: profileId, extNonce: o.nonce, daemonNonce: ch.nonce });
}

/** Waits (in real time) until cond holds: the extension's checks run in WebCrypto, outside the fake clock. */
export async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (cond()) return;
    await new Promise<void>((resolve) => realSetTimeout(resolve, 1));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Lets the extension finish checking a challenge that should be refused: waits until s is closed. */
export async function untilClosed(s: HandshakeSocket): Promise<void> {
  await until(() => s.readyState === 3, 'the socket to close');
}

/**
 * Plays a genuine daemon holding keys on the open socket s: checks that the
 * extension said nothing yet, sends the challenge, waits for the hello and
 * checks it is protocol 4 with the right proof (keys.secret's, or none when
 * the daemon does not know the profile) and never a secret. Returns the
 * hello and the challenge.
 */
export async function handshake(s: HandshakeSocket, keys: DaemonKeys = {}): Promise<{ hello: Record<string, unknown>; challenge: Challenge }> {
  expect(s.sent, 'the extension spoke before the challenge').toEqual([]);
  const challenge = await challengeFor(s, keys);
  s.receive(challenge);
  await until(() => s.sent.length > 0, 'the hello');
  const hello = s.sent[0] as Record<string, unknown>;
  expect(hello).toMatchObject({ type: 'hello', protocol: 4 });
  expect(hello).not.toHaveProperty('secret');
  const o = offered(s);
  if (o.named !== '' && keys.secret !== undefined) {
    // The named proof is the one the daemon checks before it exempts the socket (broker/handshake.go holdNamed).
    expect(o.namedProof).toBe(await namedProof(await profileKey(keys.secret), { endpoint: o.endpoint, named: o.named, extNonce: o.nonce }));
  }
  if (challenge.profileProof !== undefined && keys.secret !== undefined) {
    expect(hello.proof).toBe(await helloProof(s, challenge, keys.secret, String(hello.profileId)));
  } else {
    expect(hello).not.toHaveProperty('proof');
  }
  return { hello, challenge };
}
