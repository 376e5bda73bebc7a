// The remote broker: a Tether daemon on another machine, behind a TLS reverse
// proxy, that the extension dials instead of the local daemon (docs/remote.md).
// The user enters its URL in the popup; the service worker stores it and the
// offscreen document checks it again before dialling.

/** chrome.storage.local key: the remote broker's URL as parseBrokerUrl returned it; absent: the local daemon. */
export const BROKER_URL_KEY = 'brokerUrl';
/** chrome.storage.local key: the pairing secret for each remote broker, keyed by its origin (never shown or logged). */
export const BROKER_SECRETS_KEY = 'brokerSecrets';
/** chrome.storage.local key: what each remote broker's last hello_ack said (slug, label, version), keyed by its origin. */
export const BROKER_PROFILES_KEY = 'brokerProfiles';

/** The profile as a remote broker named it in its last hello_ack. */
export interface BrokerProfile {
  slug?: string;
  /** The slug it had before the broker forgot it: asked for again in hello, never shown. */
  slugHint?: string;
  label?: string;
  version?: string;
}

/** A checked broker URL. */
export interface Broker {
  /** What the extension dials: wss://HOST[:PORT]/extension. */
  url: string;
  /** The URL's origin (wss://HOST[:PORT], default port left out): the key of its pairing secret. */
  origin: string;
  /** HOST[:PORT], as the popup names the broker. */
  host: string;
}

export type BrokerParse = { ok: true; broker: Broker } | { ok: false; error: string };

/** The one path a broker serves the extension on (the daemon's /extension endpoint). */
const PATH = '/extension';
const EXAMPLE = 'wss://tether.example.org/extension';

/**
 * True for a host name that is this computer: localhost (and *.localhost,
 * which browsers resolve to loopback), 127.0.0.0/8 and [::1] (RFC 6761 §6.3,
 * RFC 1122 §3.2.1.3, RFC 4291 §2.5.3). host is URL.hostname (IPv6 in brackets).
 */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (h === '[::1]') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Checks what the user typed as the broker's URL. Accepted: wss://HOST[:PORT]
 * with the path /extension (or none, which means /extension), without user
 * name, password, query or fragment. Refused, each with a sentence that says
 * what to type instead: another scheme; ws:// to any host (to a non-loopback
 * host it would carry the pairing secret and every page the AI reads in
 * clear text; the loopback ws:// address is the local Tether, which the
 * extension finds by itself); another path.
 */
export function parseBrokerUrl(input: string): BrokerParse {
  const text = input.trim();
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return { ok: false, error: `"${clip(text)}" is not a URL. Enter the broker's address as ${EXAMPLE}.` };
  }
  if (u.protocol === 'ws:') {
    if (isLoopbackHost(u.hostname)) {
      return { ok: false, error: `${u.host} is this computer: to use the Tether app that runs here, clear this field (the extension finds it by itself).` };
    }
    return {
      ok: false,
      error: `Refused: ws:// is not encrypted, so the pairing secret and every page the AI reads would cross the network in clear text. A remote broker needs wss:// behind a TLS proxy: wss://${u.host}${PATH} (see docs/remote.md).`,
    };
  }
  if (u.protocol === 'https:' || u.protocol === 'http:') {
    return { ok: false, error: `The extension connects with a WebSocket: enter wss://${u.host}${PATH}, not ${u.protocol}//.` };
  }
  if (u.protocol !== 'wss:') {
    return { ok: false, error: `${u.protocol}// is not a broker address. Enter it as ${EXAMPLE}.` };
  }
  if (!u.hostname) return { ok: false, error: `The address has no host name. Enter it as ${EXAMPLE}.` };
  if (u.username || u.password) {
    return { ok: false, error: 'Leave the user name and password out of the address: the broker pairs this browser by a code instead.' };
  }
  if (u.search || u.hash) {
    return { ok: false, error: `Leave the query and fragment out of the address: wss://${u.host}${PATH}.` };
  }
  if (u.pathname !== '/' && u.pathname !== '' && u.pathname !== PATH) {
    return { ok: false, error: `A broker serves the extension on ${PATH}, not ${clip(u.pathname)}: wss://${u.host}${PATH}.` };
  }
  return { ok: true, broker: { url: `wss://${u.host}${PATH}`, origin: u.origin, host: u.host } };
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}…` : s;
}

/**
 * What the popup says after a WebSocket to broker closed before it opened.
 * Chrome gives a page's (and an offscreen document's) WebSocket only close
 * code 1006 for every such failure (WHATWG WebSocket "fail the WebSocket
 * connection"; RFC 6455 §7.1.7: the reason is hidden from scripts on
 * purpose), so the name not resolving, nothing listening, a refused or
 * invalid certificate and a proxy that answers without upgrading all look the
 * same. answered: what an HTTPS request to the broker's /health said, which
 * tells the last case apart (a status: TLS and the network work, the upgrade
 * was refused) from the others (undefined: no HTTPS answer either).
 */
export function dialFailure(broker: Broker, answered: number | undefined): string {
  if (answered === undefined) {
    return `Could not connect to ${broker.host} securely: check the address and that its certificate is valid. (Chrome does not tell the extension which failed: the name, the network, nothing listening on the port, or a certificate Chrome does not trust.)`;
  }
  return `${broker.host} answers over HTTPS (status ${answered} for /health) but did not accept the extension's WebSocket on ${PATH}: check that its Tether lists ${broker.host.replace(/:\d+$/, '')} in remote.hosts and that the proxy forwards ${PATH} (see docs/remote.md).`;
}

/** The HTTPS URL of the broker's /health, for dialFailure's probe. */
export function healthUrl(broker: Broker): string {
  return `https://${broker.host}/health`;
}
