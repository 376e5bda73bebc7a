// The proofs of protocol 4 (protocol/proof.go in Go, which documents the
// scheme): HMAC-SHA256 (RFC 2104) with WebCrypto, over
//   "tether-4 daemon" | "tether-4 extension", endpoint, named profile id,
//   extension nonce, daemon nonce
// joined with "\n", as 64 lowercase hex digits. A paired profile's key is
// SHA-256 of its secret; before pairing, the local daemon proves it holds
// the pairing key of tether.json.

/** 64 lowercase hex digits: a nonce, a proof, a pairing key. */
export const HEX64 = /^[0-9a-f]{64}$/;

const encoder = new TextEncoder();

function toHex(buf: ArrayBuffer): string {
  return Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** A fresh nonce: 32 random bytes as 64 hex digits. */
export function newNonce(): string {
  const b = new Uint8Array(32);
  crypto.getRandomValues(b);
  return toHex(b.buffer);
}

/** The key of a paired profile's proofs: SHA-256 of its secret's UTF-8 bytes (protocol.ProfileKey). */
export async function profileKey(secret: string): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(secret)));
}

/** A pairing key's bytes, or undefined unless it is 64 lowercase hex digits. */
export function parseKey(hex: string): Uint8Array<ArrayBuffer> | undefined {
  if (!HEX64.test(hex)) return undefined;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export interface ProofFields {
  /** What the extension dialled: 127.0.0.1:<port>, or the remote broker's host. */
  endpoint: string;
  /** The profile id the socket named ('' when none). */
  named: string;
  extNonce: string;
  daemonNonce: string;
}

async function proof(key: Uint8Array<ArrayBuffer>, side: string, f: ProofFields): Promise<string> {
  const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const msg = [side, f.endpoint, f.named, f.extNonce, f.daemonNonce].join('\n');
  return toHex(await crypto.subtle.sign('HMAC', k, encoder.encode(msg)));
}

/** The proof in a paired socket's profile subprotocol, over the extension's nonce only (protocol.NamedProof). */
export async function namedProof(key: Uint8Array<ArrayBuffer>, f: Omit<ProofFields, 'daemonNonce'>): Promise<string> {
  const k = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const msg = ['tether-4 named', f.endpoint, f.named, f.extNonce].join('\n');
  return toHex(await crypto.subtle.sign('HMAC', k, encoder.encode(msg)));
}

/** The daemon's proof (protocol.DaemonProof). */
export function daemonProof(key: Uint8Array<ArrayBuffer>, f: ProofFields): Promise<string> {
  return proof(key, 'tether-4 daemon', f);
}

/** The extension's proof (protocol.ExtensionProof); named is then the hello's profile id. */
export function extensionProof(key: Uint8Array<ArrayBuffer>, f: ProofFields): Promise<string> {
  return proof(key, 'tether-4 extension', f);
}

/** Whether a received proof equals the expected one (both hex; compared without an early exit). */
export function proofEquals(got: unknown, want: string): boolean {
  if (typeof got !== 'string' || got.length !== want.length) return false;
  let diff = 0;
  for (let i = 0; i < want.length; i++) diff |= got.charCodeAt(i) ^ want.charCodeAt(i);
  return diff === 0;
}
