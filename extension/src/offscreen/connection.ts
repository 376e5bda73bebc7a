// DaemonConnection owns the WebSocket to the Tether daemon and its protocol:
// hello, hello_ack / refused, then one response per request. It reconnects
// with capped exponential backoff and relays requests to the service worker.
import type { HelloAck, Hello, Refused, Request, Response } from '../protocol.gen';
import { toWireError } from '../shared/errors';
import { isMethod, PROTOCOL_VERSION, type ConnectionStatus, type DaemonConfig, type Outcome } from '../shared/messages';

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
  openSocket(url: string): SocketLike;
  getConfig(): Promise<DaemonConfig>;
  /** Runs a request in the service worker; deadline is a Date.now() value. */
  relay(request: Request, deadline: number): Promise<Outcome>;
  reportStatus(status: ConnectionStatus): void;
  reportAck(ack: HelloAck): void;
  userAgent: string;
  random?: () => number;
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

type Incoming = HelloAck | Refused | Request;

export class DaemonConnection {
  private socket?: SocketLike;
  private attempt = 0;
  private retryTimer?: ReturnType<typeof setTimeout>;
  private stopped = false;
  private halted = false;
  private port = 0;
  private lastRefusal?: ConnectionStatus['lastRefusal'];
  private reported?: ConnectionStatus['state'];

  constructor(private readonly deps: ConnectionDeps) {}

  start(): void {
    this.stopped = false;
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.socket?.close(1000, 'stopping');
  }

  /** True once the daemon refused us for a protocol mismatch: no more attempts. */
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
    this.port = config.port;
    if (this.reported === undefined) this.report('connecting');
    let socket: SocketLike;
    try {
      socket = this.deps.openSocket(`ws://127.0.0.1:${config.port}/extension`);
    } catch (err) {
      console.warn('tether: cannot open WebSocket', err);
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      const hello: Hello = {
        type: 'hello',
        protocol: PROTOCOL_VERSION,
        profileId: config.profileId,
        label: config.label,
        extVersion: config.extVersion,
        userAgent: this.deps.userAgent,
      };
      socket.send(JSON.stringify(hello));
    };
    socket.onmessage = (ev) => {
      if (typeof ev.data === 'string') this.onFrame(socket, ev.data);
    };
    socket.onerror = () => {
      // onclose follows and schedules the retry.
    };
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      if (this.reported !== 'disconnected') this.report('disconnected');
      this.scheduleReconnect();
    };
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.halted) return;
    clearTimeout(this.retryTimer);
    const delay = backoffDelay(this.attempt++, this.deps.random);
    this.retryTimer = setTimeout(() => void this.connect(), delay);
  }

  private onFrame(socket: SocketLike, data: string): void {
    let frame: Incoming;
    try {
      frame = JSON.parse(data) as Incoming;
    } catch {
      console.warn('tether: ignoring a frame that is not JSON');
      return;
    }
    switch (frame?.type) {
      case 'hello_ack':
        this.attempt = 0;
        this.lastRefusal = undefined;
        this.deps.reportAck(frame);
        this.report('connected');
        return;
      case 'refused':
        this.lastRefusal = { code: String(frame.code), message: String(frame.message), at: Date.now() };
        if (frame.code === 'protocol_mismatch') this.halted = true;
        this.report('disconnected');
        socket.close(1000, 'refused');
        return;
      case 'request':
        void this.onRequest(socket, frame);
        return;
      default:
        console.warn('tether: ignoring an unknown frame type', (frame as { type?: unknown })?.type);
    }
  }

  private async onRequest(socket: SocketLike, req: Request): Promise<void> {
    if (typeof req.id !== 'string') return;
    const send = (body: Pick<Response, 'result' | 'error'>) => {
      const res: Response = { type: 'response', id: req.id, ...body };
      if (this.socket === socket && socket.readyState === 1) socket.send(JSON.stringify(res));
    };
    if (!isMethod(req.method)) {
      send({ error: { code: 'bad_request', message: `Unknown method ${JSON.stringify(req.method)}; this extension supports navigate, snapshot, click, type and tabs_list. Update the Tether extension if the daemon is newer.` } });
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
    const work = this.deps.relay(req, deadline - 100).catch((err: unknown): Outcome => ({ ok: false, error: toWireError(err) }));
    const outcome = await Promise.race([work, timedOut]);
    clearTimeout(timer);
    send(outcome.ok ? { result: outcome.value } : { error: outcome.error });
  }

  private report(state: ConnectionStatus['state']): void {
    this.reported = state;
    const status: ConnectionStatus = { state, port: this.port, since: Date.now() };
    if (this.lastRefusal) status.lastRefusal = this.lastRefusal;
    this.deps.reportStatus(status);
  }
}
