// DaemonConnection owns the WebSocket to the Tether daemon and its protocol:
// the daemon's challenge first (it proves it is the Tether this browser
// paired with, or the one that wrote its folder: shared/proof.ts; without
// that proof the extension sends nothing and obeys nothing), then hello
// with the extension's own proof, then pairing (a new profile waits for the user's approval on the same
// socket), hello_ack / refused, then one response per request and a
// tabs_changed push whenever the shared tabs change. It reconnects with capped
// exponential backoff (slowly after too_many_profiles, within seconds and
// still showing its pairing code after pairing_displaced, not at all after a
// refusal that needs the user) and relays requests to the service worker.
// It dials the local daemon, or the remote broker the user chose instead
// (wss:// only, checked again here); for a remote broker it waits while the
// computer is offline and dials at once when it comes back online.
import { METHODS, type Challenge, type DownloadEvent, type Error as WireError, type HelloAck, type Hello, type Pairing, type Refused, type Reload, type Request, type Response, type TabsChanged } from '../protocol.gen';
import { dialFailure, healthUrl, parseBrokerUrl, type Broker } from '../shared/broker';
import { toWireError } from '../shared/errors';
import { daemonProof, extensionProof, HEX64, namedProof, newNonce, parseKey, profileKey, proofEquals, type ProofFields } from '../shared/proof';
import {
  HALTING_CODES,
  isMethod,
  NONCE_SUBPROTOCOL_PREFIX,
  PROFILE_SUBPROTOCOL_PREFIX,
  PROTOCOL_VERSION,
  QUICK_RETRY_CODES,
  QUICK_RETRY_MAX_MS,
  QUICK_RETRY_MIN_MS,
  SLOW_RETRY_CODES,
  SLOW_RETRY_MS,
  SUBPROTOCOL,
  type ConnectionStatus,
  type DaemonConfig,
  type Outcome,
} from '../shared/messages';

/** The part of WebSocket the connection uses (a fake in tests). */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: Event) => unknown) | null;
  onmessage: ((ev: MessageEvent) => unknown) | null;
  onclose: ((ev: CloseEvent) => unknown) | null;
  onerror: ((ev: Event) => unknown) | null;
}

export interface ConnectionDeps {
  /** Opens the socket, offering protocols as WebSocket subprotocols. */
  openSocket(url: string, protocols: string[]): SocketLike;
  getConfig(): Promise<DaemonConfig>;
  /** Runs a request in the service worker; deadline is a Date.now() value. */
  relay(request: Request, deadline: number): Promise<Outcome>;
  reportStatus(status: ConnectionStatus): void;
  /** broker: the remote broker's origin the ack came from; undefined for the local daemon. */
  reportAck(ack: HelloAck, broker: string | undefined): void;
  /**
   * The daemon (broker: the remote broker's origin; undefined for the local
   * daemon) holds this profile as a new one: it sent a pairing frame, or
   * refused it pairing_denied. Whatever slug it gave before is gone there
   * (tether profiles forget, a new config folder), so the popup stops
   * showing it.
   */
  reportUnpaired(broker: string | undefined): void;
  /** The daemon rewrote the extension's folder: save state and reload (chrome.runtime.reload). */
  reload(frame: Reload): void;
  userAgent: string;
  random?: () => number;
  /** navigator.onLine (default: always online). */
  isOnline?: () => boolean;
  /**
   * Asks url (the broker's https://…/health) once: its HTTP status, or
   * undefined when no HTTPS answer came (network, name or certificate).
   * Used only after a remote broker's WebSocket failed to open.
   */
  probe?: (url: string) => Promise<number | undefined>;
  /**
   * Asks the local daemon's url (http://127.0.0.1:<port>/health) once, with
   * no credentials: what answered (PortAnswer). Used only after the local
   * WebSocket failed to open, which Chrome reports as 1006 alike for
   * nothing listening and for a program that refused the upgrade.
   */
  probeLocal?: (url: string) => Promise<PortAnswer>;
}

/**
 * What answered a GET of the local port's /health: none (the request
 * failed at once: nothing listens, connection refused; a program that
 * closes without an HTTP answer looks the same to fetch), silent (the
 * connection was accepted but no answer came in time), or an HTTP answer
 * with its status and whether its body is Tether's health (name "tether").
 */
export type PortAnswer = { kind: 'none' } | { kind: 'silent' } | { kind: 'http'; status: number; tether: boolean };

/** How long probeLocal waits for an answer before it reports 'silent'. */
export const PORT_PROBE_MS = 3_000;
/**
 * After a probe found nothing on the local port (Tether not running, the
 * usual case while the extension retries), the failed sockets of the next
 * minute are not followed by a probe: the retries cost one loopback
 * connection each instead of two. A probe that found another program is
 * repeated at every failure, so quitting it clears the popup at once, and
 * the popup's Reconnect always probes.
 */
export const LOCAL_PROBE_QUIET_MS = 60_000;

export const BACKOFF_START_MS = 250;
export const BACKOFF_CAP_MS = 5000;
/** Used when a request carries no usable timeoutMs. */
const DEFAULT_TIMEOUT_MS = 30_000;

/** Delay before reconnect attempt number attempt (0-based): doubling, capped, with jitter in [50%, 100%]. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 2 ** Math.min(attempt, 16));
  return Math.round(base * (0.5 + random() / 2));
}

/** How long before the daemon's timeout the extension answers "timeout". */
export function timeoutMargin(timeoutMs: number): number {
  return Math.min(500, Math.max(50, timeoutMs * 0.1));
}

type Incoming = HelloAck | Pairing | Refused | Request | Reload;

/** How long a reload waits for the requests already running to answer. */
export const RELOAD_DRAIN_MS = 15_000;

/** A pairing code as the daemon makes them (protocol.Pairing.code). */
const PAIRING_CODE = /^[2-9A-HJKMNP-Z]{6}$/;

/**
 * The WebSocket subprotocols to offer: "tether", the socket's fresh nonce
 * (NONCE_SUBPROTOCOL_PREFIX), and once paired PROFILE_SUBPROTOCOL_PREFIX +
 * "<profile id>.<named proof>" (shared/proof.ts namedProof), so the daemon
 * proves itself with that profile's key and never closes the socket to
 * make room for sockets that said nothing. No secret: only proofs of it
 * cross the socket.
 */
export function socketProtocols(profileId: string, named: string | undefined, nonce: string): string[] {
  const out = [SUBPROTOCOL, `${NONCE_SUBPROTOCOL_PREFIX}${nonce}`];
  if (named !== undefined && PROFILE_ID.test(profileId) && HEX64.test(named)) out.push(`${PROFILE_SUBPROTOCOL_PREFIX}${profileId}.${named}`);
  return out;
}

/** A profile id as the daemon accepts it (protocol.ValidProfileID). */
const PROFILE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** How long the extension waits for the daemon's challenge once the socket opened (the daemon sends it at once). */
export const CHALLENGE_WAIT_MS = 4_000;

/**
 * How long a socket may stay opening (its HTTP upgrade unanswered) before
 * the attempt is given up: a program on the port that accepts connections
 * and never answers kept the popup on "Connecting" (Chrome's own limit on
 * an opening handshake is minutes). Then, as for any socket that closed
 * before it opened, the port is asked what answers there. Tether answers
 * the upgrade at once; a remote broker gets longer (a slow link, a proxy).
 */
export const OPEN_WAIT_MS = 10_000;
export const REMOTE_OPEN_WAIT_MS = 30_000;

/** The refusal code the popup shows when the program on the port did not prove it is Tether. */
export const UNVERIFIED = 'unverified';

/** The refusal code when a program answering like Tether's /health refused the local socket before it opened (portVerdict). */
export const PORT_REFUSED = 'socket_refused';

/** What the extension knows when the challenge comes: its secret, and the pairing key of tether.json (local daemon only). */
interface Expected {
  secret?: string;
  pairingKey?: string;
  profileId: string;
  /** Where the socket went, for the messages: "port 47615" or the broker's host. */
  where: string;
  remote: boolean;
}

/** A checked challenge: the hello's proof (undefined: pair as a new profile), or why the daemon is not trusted. */
type Verdict = { ok: true; proof?: string } | { ok: false; why: string; pairAgain?: boolean; otherProgram?: boolean };

/** How the messages name the local daemon's address. */
const loopback = (port: number) => `127.0.0.1:${port}`;

/** The sentence every "another program" message ends with: what the extension did. */
const SENT_NOTHING = 'The extension sent it nothing (no hello, no secret) and obeys none of its requests.';

/**
 * Why the program answering the local port (when its WebSocket did not
 * open) is not Tether, from its answer to /health (PortAnswer): undefined
 * for none (nothing listens: Tether is not running). otherProgram is false
 * only when the answer is Tether's health: a Tether that refused this
 * extension's socket (broker/handshake.go refuses an Origin it does not
 * allow), or a program posing as one.
 */
export function portVerdict(port: number, answer: PortAnswer): { why: string; otherProgram: boolean } | undefined {
  if (answer.kind === 'none') return undefined;
  if (answer.kind === 'silent') {
    return { otherProgram: true, why: `Another program, not Tether, answers on ${loopback(port)}: it accepted the connection but gave no HTTP answer within ${PORT_PROBE_MS / 1000} seconds, and no WebSocket. ${SENT_NOTHING}` };
  }
  if (answer.tether && answer.status === 200) {
    return { otherProgram: false, why: `The program on ${loopback(port)} answers like Tether but refused this extension's socket: a Tether that does not allow this extension (tether serve --allow-extension with the id chrome://extensions shows), or a program posing as Tether. The extension sent it nothing.` };
  }
  return { otherProgram: true, why: `Another program, not Tether, answers on ${loopback(port)}: it refused the extension's WebSocket and answered HTTP ${answer.status}, which Tether never does. ${SENT_NOTHING}` };
}

/**
 * Checks the daemon's challenge (protocol.Challenge) against what the
 * extension holds, before anything else is sent:
 *  - paired: the profile proof must verify. Without one, the daemon does
 *    not know this profile: a remote broker (TLS names it) or a local
 *    daemon proving the folder's pairing key is asked to pair it anew;
 *    any other program is refused, with Pair again offered (pairAgain)
 *    only when the folder has no pairing key (then the user may have made
 *    Tether forget this browser, and can start over from the popup; with
 *    a key, the folder's own Tether would have proved it);
 *  - not paired: with a pairing key, the pairing proof must verify; without
 *    one (a folder Tether did not write, a remote broker) the first
 *    pairing trusts the daemon that answers, as the user approves it there.
 */
export async function checkChallenge(frame: unknown, f: Omit<ProofFields, 'daemonNonce'>, e: Expected): Promise<Verdict> {
  const ch = frame as Partial<Challenge> | null;
  if (typeof ch !== 'object' || ch === null || ch.type !== 'challenge' || typeof ch.nonce !== 'string' || !HEX64.test(ch.nonce)) {
    return noChallenge(e.where, e.remote, false);
  }
  const fields: ProofFields = { ...f, daemonNonce: ch.nonce };
  const pairing = e.pairingKey ? parseKey(e.pairingKey) : undefined;
  const pairingProved = async () => pairing !== undefined && proofEquals(ch.pairingProof, await daemonProof(pairing, fields));
  if (e.secret) {
    const key = await profileKey(e.secret);
    if (ch.profileProof !== undefined && ch.profileProof !== '') {
      if (!proofEquals(ch.profileProof, await daemonProof(key, fields))) {
        if (e.remote) return { ok: false, why: `The program answering on ${e.where} is not the Tether this browser paired with: it could not prove it holds this browser's pairing key. The extension sent it nothing and obeys none of its requests. The extension tries again every 30 seconds.` };
        return { ok: false, otherProgram: true, why: `Another program, not Tether, answers on ${e.where}: it is not the Tether this browser paired with, as it could not prove it holds this browser's pairing key. ${SENT_NOTHING}` };
      }
      return { ok: true, proof: await extensionProof(key, { ...fields, named: e.profileId }) };
    }
    if (e.remote || (await pairingProved())) return { ok: true };
    if (pairing !== undefined) {
      // The folder's own Tether would have proved its key: pairing anew with this program cannot help.
      return { ok: false, otherProgram: true, why: `Another program, not Tether, answers on ${e.where}: it is not the Tether this browser paired with, nor the Tether that wrote this extension's folder, as it could not prove it holds either key. ${SENT_NOTHING} If it is another Tether you mean to use, write the extension folder again from it (its window's Extension page, or tether browser).` };
    }
    return {
      ok: false,
      pairAgain: true,
      why: `The program answering on ${e.where} does not know this browser's pairing: it is not the Tether this browser paired with, or that Tether forgot this browser (tether profiles forget, or a new config folder). The extension sent it nothing. If you made Tether forget this browser, press Pair again; otherwise start the Tether you paired with.`,
    };
  }
  if (pairing !== undefined && !(await pairingProved())) {
    return { ok: false, otherProgram: true, why: `Another program, not Tether, answers on ${e.where}: it is not the Tether that wrote this extension's folder, as it could not prove it holds the folder's pairing key (tether.json), so the extension did not ask it to pair. ${SENT_NOTHING} If it is another Tether you mean to use, write the extension folder again from it (its window's Extension page, or tether browser).` };
  }
  return { ok: true };
}

/**
 * The verdict on a socket whose first frame was not a challenge, or that
 * sent none in time (silent): Tether's first frame is always its
 * challenge, so a first frame of any other kind comes from another program;
 * silence may also be a Tether older than protocol 4.
 */
function noChallenge(where: string, remote: boolean, silent: boolean): Extract<Verdict, { ok: false }> {
  if (remote) return { ok: false, why: `The program answering on ${where} did not prove it is Tether (it sent no challenge): it is a Tether older than this extension (update Tether) or another program. The extension sent it nothing.` };
  if (!silent) return { ok: false, otherProgram: true, why: `Another program, not Tether, answers on ${where}: it sent no challenge (Tether's first frame is always its challenge, proving it holds this browser's key) but other frames. ${SENT_NOTHING}` };
  return { ok: false, otherProgram: true, why: `Another program, not Tether, answers on ${where}, or a Tether older than this extension (update it): it sent no challenge within ${CHALLENGE_WAIT_MS / 1000} seconds, which Tether sends first to prove it holds this browser's key. ${SENT_NOTHING}` };
}

/** At most this many tabs_changed frames wait for a hello_ack; older ones are dropped (hello carries the state). */
const MAX_PENDING_TABS_CHANGED = 50;

export class DaemonConnection {
  private socket?: SocketLike;
  private attempt = 0;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private stopped = false;
  private halted = false;
  private port = 0;
  private lastRefusal?: ConnectionStatus['lastRefusal'];
  private pairingMessage?: string;
  private pairingCode?: string;
  /** The last challenge came without this profile's proof from a daemon that may have forgotten it: the popup offers Pair again. */
  private pairAgain = false;
  /** The program on the local port is not Tether (a failed proof, or an HTTP answer that is not Tether's): the popup says how to free the port. */
  private otherProgram = false;
  private reported?: ConnectionStatus['state'];
  /** True between hello_ack and the socket's close: requests and pushes may flow. */
  private acked = false;
  /**
   * Secrets issued during this connection's lifetime, in case storage lags
   * behind, keyed like storage: 'local', or the remote broker's origin (a
   * secret never goes to another daemon than the one that issued it).
   */
  private secrets = new Map<string, string>();
  /** The remote broker of the last attempt (undefined: the local daemon). */
  private broker?: Broker;
  /** The broker URL as configured, when it does not parse (shown, never dialled). */
  private badBroker?: string;
  /** Why the last attempt to reach the remote broker failed; cleared once a socket opens. */
  private linkError?: string;
  private offline = false;
  /** Until then, a failed local socket is not followed by a probe (LOCAL_PROBE_QUIET_MS). */
  private quietProbeUntil = 0;
  /** Counts attempts, so a late probe answer does not overwrite a newer state. */
  private generation = 0;
  /** tabs_changed frames produced while not acked; sent right after the next hello_ack. */
  private pending: TabsChanged[] = [];
  private nextDelay?: number;
  /** Requests relayed and not yet answered. */
  private running = 0;
  private drained?: () => void;
  /** The attempt under way (or the last one): see settled(). */
  private attempting: Promise<void> = Promise.resolve();
  /** Set by a reload frame: no request runs any more; the extension reloads once the running ones answered. */
  private reloading = false;

  constructor(private readonly deps: ConnectionDeps) {}

  start(): void {
    this.stopped = false;
    this.dial();
  }

  /**
   * The user pressed Pair again: forget the local daemon's secret held
   * here (the service worker removed the stored one first) and connect as
   * a new profile, which the user approves in Tether.
   */
  pairAgainWithLocal(): void {
    this.secrets.delete('local');
    this.pairAgain = false;
    this.reconnect();
  }

  /** The user asked to reconnect (popup button, new label): drop the socket and connect now. */
  reconnect(): void {
    this.halted = false;
    this.pairAgain = false;
    this.otherProgram = false;
    this.quietProbeUntil = 0; // the user looks: say afresh what holds the port
    this.attempt = 0;
    this.nextDelay = undefined;
    this.lastRefusal = undefined;
    this.linkError = undefined;
    this.offline = false;
    this.reported = undefined;
    clearTimeout(this.retryTimer);
    const old = this.socket;
    this.socket = undefined;
    this.acked = false;
    old?.close(1000, 'reconnecting');
    if (!this.stopped) this.dial();
  }

  /**
   * The browser's online event (the offscreen document's window): a remote
   * broker that is not connected is dialled at once, with the backoff
   * starting over. An open socket is kept: Chrome closes the sockets a
   * network change broke, and its close schedules the next attempt.
   */
  networkUp(): void {
    if (this.stopped || this.halted || this.socket || (!this.broker && !this.offline)) return;
    this.attempt = 0;
    this.nextDelay = undefined;
    clearTimeout(this.retryTimer);
    this.dial();
  }

  /** The browser's offline event: a remote broker that is not connected waits for networkUp instead of retrying. */
  networkDown(): void {
    if (this.stopped || this.halted || this.socket || !this.broker) return;
    clearTimeout(this.retryTimer);
    this.offline = true;
    this.report('disconnected');
  }

  /** Pushes a tabs_changed frame now, or right after the next hello_ack. */
  pushTabsChanged(frame: TabsChanged): void {
    const socket = this.socket;
    if (this.acked && socket && socket.readyState === 1) {
      socket.send(JSON.stringify(frame));
      return;
    }
    this.pending.push(frame);
    if (this.pending.length > MAX_PENDING_TABS_CHANGED) this.pending.shift();
  }

  /** Sends a frame now if the connection is acked and open; false otherwise (nothing queued). */
  pushNow(frame: DownloadEvent): boolean {
    const socket = this.socket;
    if (!this.acked || !socket || socket.readyState !== 1) return false;
    socket.send(JSON.stringify(frame));
    return true;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.socket?.close(1000, 'stopping');
  }

  /** True once a refusal needs the user (see HALTING_CODES): no more attempts until reconnect(). */
  get isHalted(): boolean {
    return this.halted;
  }

  /** Starts an attempt (connect); settled() waits for it. */
  private dial(): void {
    this.attempting = this.connect();
  }

  /**
   * Resolves once the attempt under way has opened its socket or given up:
   * opening a paired socket first computes its named proof with WebCrypto,
   * which takes a turn of the event loop (tests wait on it).
   */
  settled(): Promise<void> {
    return this.attempting;
  }

  private async connect(): Promise<void> {
    if (this.stopped || this.halted) return;
    let config: DaemonConfig;
    try {
      config = await this.deps.getConfig();
    } catch (err) {
      console.warn('tether: no config from the service worker yet', err);
      this.scheduleReconnect();
      return;
    }
    if (config.halted) {
      this.halted = true;
      return;
    }
    if (this.stopped || this.halted || this.socket) return;
    this.port = config.port;
    this.badBroker = undefined;
    let broker: Broker | undefined;
    if (config.brokerUrl !== undefined) {
      const parsed = parseBrokerUrl(config.brokerUrl);
      if (!parsed.ok) {
        // Never dialled: the popup says why, and choosing another URL reconnects.
        this.broker = undefined;
        this.badBroker = config.brokerUrl;
        this.linkError = parsed.error;
        this.halted = true;
        this.report('disconnected');
        return;
      }
      broker = parsed.broker;
    }
    if (broker?.origin !== this.broker?.origin) this.linkError = undefined;
    this.broker = broker;
    if (broker && !(this.deps.isOnline?.() ?? true)) {
      // Loopback works offline; a remote broker waits for the online event.
      this.offline = true;
      this.report('disconnected');
      return;
    }
    const wasOffline = this.offline;
    this.offline = false;
    if (this.reported === undefined || wasOffline) this.report('connecting');
    // hello carries the tabs as of now: frames queued before are older.
    this.pending = [];
    const key = broker?.origin ?? 'local';
    const secret = this.secrets.get(key) ?? config.secret;
    const generation = ++this.generation;
    const nonce = newNonce();
    const named = secret && PROFILE_ID.test(config.profileId) ? config.profileId : '';
    const endpoint = broker ? broker.host.toLowerCase() : `127.0.0.1:${config.port}`;
    const expected: Expected = { profileId: config.profileId, where: broker ? broker.host : loopback(config.port), remote: broker !== undefined };
    if (secret) expected.secret = secret;
    if (!broker && config.pairingKey) expected.pairingKey = config.pairingKey;
    let opened = false;
    // 'challenge': waiting for the daemon's proof; 'checking' it; 'hello'
    // sent: from then on frames are the protocol's.
    let phase: 'challenge' | 'checking' | 'hello' = 'challenge';
    let challengeTimer: ReturnType<typeof setTimeout> | undefined;
    let namedBy: string | undefined;
    if (named) {
      try {
        namedBy = await namedProof(await profileKey(secret!), { endpoint, named, extNonce: nonce });
      } catch (err) {
        console.warn('tether: cannot compute the named proof', err);
      }
      // Another attempt may have started while this one computed.
      if (this.stopped || this.halted || this.socket || generation !== this.generation) return;
    }
    let socket: SocketLike;
    try {
      socket = this.deps.openSocket(broker?.url ?? `ws://127.0.0.1:${config.port}/extension`, socketProtocols(config.profileId, namedBy, nonce));
    } catch (err) {
      console.warn('tether: cannot open WebSocket', err);
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    const openTimer = setTimeout(() => {
      if (!opened && this.socket === socket) socket.close();
    }, broker ? REMOTE_OPEN_WAIT_MS : OPEN_WAIT_MS);
    const sendHello = (proof: string | undefined) => {
      const hello: Hello = {
        type: 'hello',
        protocol: PROTOCOL_VERSION,
        profileId: config.profileId,
        label: config.label,
        extVersion: config.extVersion,
        userAgent: this.deps.userAgent,
        tabs: config.tabs,
      };
      if (config.versionName) hello.versionName = config.versionName;
      if (config.installType) hello.installType = config.installType;
      if (config.install) hello.install = config.install;
      if (config.slug) hello.slug = config.slug;
      if (proof) hello.proof = proof;
      socket.send(JSON.stringify(hello));
    };
    socket.onopen = () => {
      opened = true;
      clearTimeout(openTimer);
      if (this.linkError !== undefined) {
        this.linkError = undefined;
        if (this.reported === 'disconnected') this.report('connecting');
      }
      challengeTimer = setTimeout(() => {
        if (phase === 'challenge' && this.socket === socket) this.untrusted(socket, noChallenge(expected.where, expected.remote, true), false);
      }, CHALLENGE_WAIT_MS);
    };
    socket.onmessage = (ev) => {
      if (typeof ev.data !== 'string' || this.socket !== socket) return;
      if (phase === 'hello') {
        this.onFrame(socket, ev.data, key);
        return;
      }
      if (phase === 'checking') return; // the daemon sends nothing before hello: not Tether's
      phase = 'checking';
      clearTimeout(challengeTimer);
      let frame: unknown;
      try {
        frame = JSON.parse(ev.data);
      } catch {
        frame = undefined;
      }
      void checkChallenge(frame, { endpoint, named, extNonce: nonce }, expected).then((verdict) => {
        if (this.socket !== socket) return;
        if (!verdict.ok) {
          this.untrusted(socket, verdict, true);
          return;
        }
        phase = 'hello';
        this.otherProgram = false;
        sendHello(verdict.proof);
      }, (err: unknown) => {
        if (this.socket === socket) this.untrusted(socket, { ok: false, why: `The extension could not check Tether's proof (${String(err)}); it sent nothing.` }, false);
      });
    };
    socket.onerror = () => {
      // onclose follows and schedules the retry.
    };
    socket.onclose = () => {
      clearTimeout(challengeTimer);
      clearTimeout(openTimer);
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.acked = false;
      this.pairingMessage = undefined;
      this.pairingCode = undefined;
      if (this.reported !== 'disconnected') this.report('disconnected');
      if (broker && !opened && this.linkError === undefined) void this.diagnose(broker, generation);
      if (!broker && !opened && Date.now() >= this.quietProbeUntil) void this.diagnoseLocal(config.port, generation);
      this.scheduleReconnect();
    };
  }

  /**
   * The program on the port did not prove it is Tether (verdict.why):
   * nothing more is sent on socket, which is closed; the popup says why
   * (lastRefusal with code UNVERIFIED, and pairAgain when the user may
   * have made Tether forget this browser). slow: retry after SLOW_RETRY_MS
   * (a wrong proof), else with the usual backoff (no challenge came: an
   * older Tether that may be updated any moment).
   */
  private untrusted(socket: SocketLike, verdict: Extract<Verdict, { ok: false }>, slow: boolean): void {
    this.lastRefusal = { code: UNVERIFIED, message: verdict.why, at: Date.now() };
    this.pairAgain = verdict.pairAgain === true;
    this.otherProgram = verdict.otherProgram === true;
    this.pairingMessage = undefined;
    this.pairingCode = undefined;
    this.socket = undefined;
    this.acked = false;
    if (slow) this.nextDelay = SLOW_RETRY_MS;
    this.report('disconnected');
    socket.close(1000, 'unverified');
    this.scheduleReconnect();
  }

  /**
   * After broker's WebSocket closed before it opened (Chrome says only
   * 1006), asks its /health over HTTPS once per run of failures, and shows
   * what that tells apart (dialFailure) until a socket opens again.
   */
  private async diagnose(broker: Broker, generation: number): Promise<void> {
    let status: number | undefined;
    try {
      status = this.deps.probe ? await this.deps.probe(healthUrl(broker)) : undefined;
    } catch {
      status = undefined;
    }
    if (generation !== this.generation || this.socket || this.broker?.origin !== broker.origin || this.stopped) return;
    this.linkError = dialFailure(broker, status);
    this.report('disconnected');
  }

  /**
   * After the local WebSocket on port closed before it opened, asks what
   * answers there (deps.probeLocal): another program (an HTTP server, or
   * one that accepts and stays silent) is reported as UNVERIFIED with
   * otherProgram, so the popup does not say "Tether is not running" when
   * starting Tether cannot work (the port is taken); a Tether-like answer
   * as a refused socket; nothing listening clears what an earlier probe
   * said. The next attempt follows the usual backoff either way.
   */
  private async diagnoseLocal(port: number, generation: number): Promise<void> {
    if (!this.deps.probeLocal) return;
    let answer: PortAnswer;
    try {
      answer = await this.deps.probeLocal(`http://${loopback(port)}/health`);
    } catch {
      answer = { kind: 'none' };
    }
    if (generation !== this.generation || this.socket || this.broker || this.stopped || this.halted) return;
    const verdict = portVerdict(port, answer);
    if (answer.kind === 'none') this.quietProbeUntil = Date.now() + LOCAL_PROBE_QUIET_MS;
    if (!verdict) {
      if (this.lastRefusal?.code !== PORT_REFUSED && !this.otherProgram) return;
      this.lastRefusal = undefined;
      this.otherProgram = false;
      this.report('disconnected');
      return;
    }
    this.lastRefusal = { code: verdict.otherProgram ? UNVERIFIED : PORT_REFUSED, message: verdict.why, at: Date.now() };
    this.otherProgram = verdict.otherProgram;
    this.pairAgain = false;
    this.report('disconnected');
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.halted) return;
    clearTimeout(this.retryTimer);
    if (this.broker && !(this.deps.isOnline?.() ?? true)) {
      this.offline = true;
      this.report('disconnected');
      return; // networkUp dials.
    }
    const delay = this.nextDelay ?? backoffDelay(this.attempt++, this.deps.random);
    this.nextDelay = undefined;
    this.retryTimer = setTimeout(() => this.dial(), delay);
  }

  private onFrame(socket: SocketLike, data: string, key: string): void {
    let frame: Incoming;
    try {
      frame = JSON.parse(data) as Incoming;
    } catch {
      console.warn('tether: ignoring a frame that is not JSON');
      return;
    }
    if (this.socket !== socket) return;
    switch (frame?.type) {
      case 'hello_ack': {
        this.attempt = 0;
        this.quietProbeUntil = 0;
        this.lastRefusal = undefined;
        this.pairAgain = false;
        this.otherProgram = false;
        this.pairingMessage = undefined;
        this.pairingCode = undefined;
        if (typeof frame.secret === 'string' && frame.secret) this.secrets.set(key, frame.secret);
        this.acked = true;
        this.deps.reportAck(frame, this.broker?.origin);
        this.report('connected');
        const pending = this.pending;
        this.pending = [];
        for (const f of pending) socket.send(JSON.stringify(f));
        return;
      }
      case 'pairing':
        // The daemon holds the socket until the user decides, or lets it go
        // after 10 minutes (refused pairing_expired): no timeout here.
        this.pairingMessage = String(frame.message ?? '');
        this.pairingCode = typeof frame.code === 'string' && PAIRING_CODE.test(frame.code) ? frame.code : undefined;
        this.lastRefusal = undefined;
        this.deps.reportUnpaired(this.broker?.origin);
        this.report('pairing');
        return;
      case 'refused': {
        const code = String(frame.code);
        if (QUICK_RETRY_CODES.includes(code)) {
          // Pushed out of the daemon's waiting list by other hellos: the
          // code stays valid (the daemon gives it back, and an approval
          // given meanwhile pairs the next hello), so the popup keeps it.
          const random = this.deps.random ?? Math.random;
          this.nextDelay = Math.round(QUICK_RETRY_MIN_MS + (QUICK_RETRY_MAX_MS - QUICK_RETRY_MIN_MS) * random());
          this.pairingMessage = String(frame.message);
          this.socket = undefined;
          this.acked = false;
          this.report('pairing');
          socket.close(1000, 'refused');
          this.scheduleReconnect();
          return;
        }
        this.lastRefusal = { code, message: String(frame.message), at: Date.now() };
        this.pairingMessage = undefined;
        this.pairingCode = undefined;
        if (code === 'pairing_denied') this.deps.reportUnpaired(this.broker?.origin);
        if (HALTING_CODES.includes(code)) this.halted = true;
        else if (SLOW_RETRY_CODES.includes(code)) this.nextDelay = SLOW_RETRY_MS;
        this.socket = undefined;
        this.acked = false;
        this.report('disconnected');
        socket.close(1000, 'refused');
        this.scheduleReconnect();
        return;
      }
      case 'reload':
        if (!this.acked || this.reloading) return;
        void this.onReload(frame);
        return;
      case 'request':
        if (!this.acked) {
          console.warn('tether: ignoring a request before hello_ack');
          return;
        }
        void this.onRequest(socket, frame);
        return;
      default:
        console.warn('tether: ignoring an unknown frame type', (frame as { type?: unknown })?.type);
    }
  }

  /**
   * The daemon rewrote the folder with a newer build: requests that come
   * from now on are refused unrun (so none is cut short by the reload), the
   * running ones answer first (RELOAD_DRAIN_MS at most), then the service
   * worker saves the shared tabs and reloads the extension.
   */
  private async onReload(frame: Reload): Promise<void> {
    this.reloading = true;
    if (this.running > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, RELOAD_DRAIN_MS);
        this.drained = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    this.deps.reload(frame);
  }

  private async onRequest(socket: SocketLike, req: Request): Promise<void> {
    if (typeof req.id !== 'string') return;
    const send = (body: Pick<Response, 'result' | 'error'>) => {
      const res: Response = { type: 'response', id: req.id, ...body };
      if (this.socket === socket && socket.readyState === 1) socket.send(JSON.stringify(res));
    };
    if (this.reloading) {
      send({ error: { code: 'internal', message: 'The Tether extension is reloading to update itself; nothing was done. Call the tool again in a few seconds.' } });
      return;
    }
    this.running++;
    try {
      await this.runRequest(req, send);
    } finally {
      if (--this.running === 0) this.drained?.();
    }
  }

  private async runRequest(req: Request, send: (body: Pick<Response, 'result' | 'error'>) => void): Promise<void> {
    if (!isMethod(req.method)) {
      send({ error: { code: 'bad_request', message: `Unknown method ${JSON.stringify(req.method)}; this extension supports ${METHODS.join(', ')}. Update the Tether extension if the daemon is newer.` } });
      return;
    }
    const budget = typeof req.timeoutMs === 'number' && req.timeoutMs > 0 ? req.timeoutMs : DEFAULT_TIMEOUT_MS;
    const deadline = Date.now() + budget - timeoutMargin(budget);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => resolve({
        ok: false,
        error: {
          code: 'timeout',
          message: `The browser did not finish ${req.method} within ${(budget / 1000).toFixed(1)}s (the page may be slow or still loading). Call browser_snapshot to see the page's current state, then retry if needed.`,
        },
      }), Math.max(0, deadline - Date.now()));
    });
    // The service worker gets a slightly earlier deadline so its own, more
    // specific timeout message wins the race when it has one.
    const work = this.deps.relay(req, deadline - 100).catch((err: unknown): Outcome => ({ ok: false, error: relayFailure(req.method, err) }));
    const outcome = await Promise.race([work, timedOut]);
    clearTimeout(timer);
    send(outcome.ok ? { result: outcome.value } : { error: outcome.error });
  }

  private report(state: ConnectionStatus['state']): void {
    this.reported = state;
    const status: ConnectionStatus = { state, port: this.port, since: Date.now() };
    if (this.lastRefusal) status.lastRefusal = this.lastRefusal;
    if (this.pairAgain && state !== 'connected') status.pairAgain = true;
    if (this.otherProgram && state === 'disconnected' && this.lastRefusal) status.otherProgram = true;
    if (state === 'pairing' && this.pairingMessage !== undefined) status.pairing = this.pairingMessage;
    if (state === 'pairing' && this.pairingCode !== undefined) status.pairingCode = this.pairingCode;
    if (this.halted) status.halted = true;
    if (this.broker) status.broker = this.broker.host;
    else if (this.badBroker !== undefined) status.broker = this.badBroker;
    if (this.linkError !== undefined && state !== 'connected' && state !== 'pairing') status.linkError = this.linkError;
    if (this.offline) status.offline = true;
    this.deps.reportStatus(status);
  }
}

/**
 * The methods that change nothing in the browser (the daemon's
 * Method.Mutates is false for all but wait_for, which only waits): one of
 * them cut short can simply be sent again.
 */
const RETRYABLE: ReadonlySet<string> = new Set(['snapshot', 'tabs_list', 'find', 'read', 'console', 'screenshot', 'read_url', 'wait_for']);

/**
 * True when err is Chrome's report that the service worker went away
 * while it held the request: it was stopped (idle, or killed) or restarted
 * before answering, so the message channel closed.
 */
export function isServiceWorkerGone(err: unknown): boolean {
  const text = String(err instanceof Error ? err.message : err);
  return /message channel closed before a response was received|message port closed before a response was received/i.test(text);
}

/**
 * The wire error for a request whose relay to the service worker failed:
 * when the service worker went away mid-call (isServiceWorkerGone), says
 * so plainly instead of Chrome's internal text, and whether the call can
 * simply be repeated (a read) or its outcome is unknown (an action, which
 * may have happened: look before repeating it); anything else as
 * toWireError.
 */
export function relayFailure(method: string, err: unknown): WireError {
  if (!isServiceWorkerGone(err)) return toWireError(err);
  if (RETRYABLE.has(method)) {
    return {
      code: 'internal',
      message: 'The Tether extension restarted during this call (Chrome stopped its service worker), so it was not answered. It only reads the page and changed nothing: call the tool again.',
    };
  }
  const what = ACTION_NAMES[method] ?? method.replace(/_/g, ' ');
  return {
    code: 'internal',
    message: `The Tether extension restarted during this call (Chrome stopped its service worker), so whether the ${what} happened is unknown. Do not repeat it blindly: call browser_snapshot to see the page, then decide.`,
  };
}

/** What each action does, for relayFailure's sentence. */
const ACTION_NAMES: Readonly<Record<string, string>> = {
  navigate: 'navigation',
  click: 'click',
  type: 'typing',
  tab_new: 'opening of the new tab',
  tab_close: 'closing of the tab',
  tab_select: 'selection of the tab',
  select_option: 'option selection',
  hover: 'hover',
  drag: 'drag',
  scroll: 'scroll',
  press_key: 'key press',
  file_upload: 'file upload',
  handle_dialog: 'arming of the dialog answer',
  history: 'history step',
  evaluate: 'evaluation',
};
