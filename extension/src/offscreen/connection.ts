// DaemonConnection owns the WebSocket to the Tether daemon and its protocol:
// hello, then pairing (a new profile waits for the user's approval on the same
// socket), hello_ack / refused, then one response per request and a
// tabs_changed push whenever the shared tabs change. It reconnects with capped
// exponential backoff (slowly after too_many_profiles, within seconds and
// still showing its pairing code after pairing_displaced, not at all after a
// refusal that needs the user) and relays requests to the service worker.
// It dials the local daemon, or the remote broker the user chose instead
// (wss:// only, checked again here); for a remote broker it waits while the
// computer is offline and dials at once when it comes back online.
import { METHODS, type DownloadEvent, type Error as WireError, type HelloAck, type Hello, type Pairing, type Refused, type Reload, type Request, type Response, type TabsChanged } from '../protocol.gen';
import { dialFailure, healthUrl, parseBrokerUrl, type Broker } from '../shared/broker';
import { toWireError } from '../shared/errors';
import {
  AUTH_SUBPROTOCOL_PREFIX,
  HALTING_CODES,
  isMethod,
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
}

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
 * The WebSocket subprotocols to offer: "tether", and once paired
 * AUTH_SUBPROTOCOL_PREFIX + "<profileId>.<secret>", so the daemon knows this
 * profile before its hello and never closes its socket to make room for
 * sockets that said nothing. Only values that are valid subprotocol tokens.
 */
export function socketProtocols(profileId: string, secret: string | undefined): string[] {
  const out = [SUBPROTOCOL];
  const auth = `${AUTH_SUBPROTOCOL_PREFIX}${profileId}.${secret ?? ''}`;
  if (secret && /^[A-Za-z0-9!#$%&'*+\-.^_`|~]+$/.test(auth)) out.push(auth);
  return out;
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
  /** Counts attempts, so a late probe answer does not overwrite a newer state. */
  private generation = 0;
  /** tabs_changed frames produced while not acked; sent right after the next hello_ack. */
  private pending: TabsChanged[] = [];
  private nextDelay?: number;
  /** Requests relayed and not yet answered. */
  private running = 0;
  private drained?: () => void;
  /** Set by a reload frame: no request runs any more; the extension reloads once the running ones answered. */
  private reloading = false;

  constructor(private readonly deps: ConnectionDeps) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  /** The user asked to reconnect (popup button, new label): drop the socket and connect now. */
  reconnect(): void {
    this.halted = false;
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
    if (!this.stopped) void this.connect();
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
    void this.connect();
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
    let opened = false;
    let socket: SocketLike;
    try {
      socket = this.deps.openSocket(broker?.url ?? `ws://127.0.0.1:${config.port}/extension`, socketProtocols(config.profileId, secret));
    } catch (err) {
      console.warn('tether: cannot open WebSocket', err);
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      opened = true;
      if (this.linkError !== undefined) {
        this.linkError = undefined;
        if (this.reported === 'disconnected') this.report('connecting');
      }
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
      if (secret) hello.secret = secret;
      socket.send(JSON.stringify(hello));
    };
    socket.onmessage = (ev) => {
      if (typeof ev.data === 'string') this.onFrame(socket, ev.data, key);
    };
    socket.onerror = () => {
      // onclose follows and schedules the retry.
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      this.acked = false;
      this.pairingMessage = undefined;
      this.pairingCode = undefined;
      if (this.reported !== 'disconnected') this.report('disconnected');
      if (broker && !opened && this.linkError === undefined) void this.diagnose(broker, generation);
      this.scheduleReconnect();
    };
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
    this.retryTimer = setTimeout(() => void this.connect(), delay);
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
        this.lastRefusal = undefined;
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
