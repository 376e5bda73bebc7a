// The one fake WebSocket of the connection tests: what DaemonConnection
// sends (parsed), and the daemon's side as methods (open, receive, close).
import type { SocketLike } from '../../src/offscreen/connection';

export class FakeSocket implements SocketLike {
  readyState = 0;
  /** The frames the extension sent, parsed. */
  sent: Array<Record<string, unknown>> = [];
  onopen: SocketLike['onopen'] = null;
  onmessage: SocketLike['onmessage'] = null;
  onclose: SocketLike['onclose'] = null;
  onerror: SocketLike['onerror'] = null;
  constructor(
    readonly url: string,
    readonly protocols: string[] = [],
  ) {}
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  /** Closes the socket (by either side); once, as a real socket's close event comes once. */
  close() {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.onclose?.({ code: 1006 } as CloseEvent);
  }
  /** The daemon accepted the connection. */
  open() {
    this.readyState = 1;
    this.onopen?.({} as Event);
  }
  /** The daemon sends frame. */
  receive(frame: object) {
    this.onmessage?.({ data: JSON.stringify(frame) } as MessageEvent);
  }
}
