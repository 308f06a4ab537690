import { connect, type Socket } from 'node:net';
import { FaultPipe, type LinkConditions } from './fault-pipe.js';

/** Where a proxy forwards to: only ever the address its test gave it. */
export interface ProxyTarget {
  readonly host: string;
  readonly port: number;
}

/**
 * One client socket accepted by the proxy, the socket opened to the target for it, and a pipe for
 * each direction. Both sides are half-open capable, so a FIN travels through the pipe behind the
 * data sent before it instead of cutting that data off.
 */
export class ProxiedConnection {
  readonly toServer: FaultPipe;
  readonly toClient: FaultPipe;
  /** Settles once both sockets have closed (what `stop()` waits for, so no handle outlives it). */
  readonly closed: Promise<void>;
  private readonly upstream: Socket;

  constructor(
    private readonly client: Socket,
    target: ProxyTarget,
    conditions: () => LinkConditions,
    onGone: (connection: ProxiedConnection) => void,
  ) {
    // Connected at once even while black-holed: the fault sits on the client's link, and the
    // client's own connect has already succeeded, as it would through a black-holed route.
    this.upstream = connect({ host: target.host, port: target.port, allowHalfOpen: true });
    const sockets = [client, this.upstream];
    // Without this, Nagle's algorithm would add its own delay to small pipelined replies.
    for (const socket of sockets) socket.setNoDelay(true);
    this.toServer = new FaultPipe(client, this.upstream, conditions);
    this.toClient = new FaultPipe(this.upstream, client, conditions);
    // An abrupt failure of one side (an RST, a target that refuses) is passed on as a reset of the
    // other: the client sees what it would see on a direct connection, only a moment later.
    for (const socket of sockets) socket.on('error', () => this.reset());
    // Once a side is closed, nothing more can be delivered to it; what it sent before closing
    // (its FIN included) still travels on to the other side.
    client.once('close', () => this.toClient.close());
    this.upstream.once('close', () => this.toServer.close());
    this.closed = Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('close', resolve)))).then(() => {
      onGone(this);
    });
  }

  /** Re-applies changed conditions; `flush` delivers everything queued now (heal). */
  pump(flush = false): void {
    this.toServer.pump(flush);
    this.toClient.pump(flush);
  }

  /** Aborts both sides with a TCP RST, as a middlebox dropping the connection state would. */
  reset(): void {
    this.closePipes();
    for (const socket of [this.client, this.upstream]) {
      if (socket.destroyed) continue;
      // resetAndDestroy() on a socket still connecting waits for the connect; do not wait for it.
      if (socket.connecting) socket.destroy();
      else socket.resetAndDestroy();
    }
  }

  /** Closes both sides normally (FIN), dropping anything still queued. */
  destroy(): void {
    this.closePipes();
    this.client.destroy();
    this.upstream.destroy();
  }

  private closePipes(): void {
    this.toServer.close();
    this.toClient.close();
  }
}
