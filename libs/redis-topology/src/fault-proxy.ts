import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import type { LinkConditions } from './fault-pipe.js';
import { ProxiedConnection, type ProxyTarget } from './proxied-connection.js';

export interface FaultProxyOptions {
  /** Port of the redis-server (or any TCP service) to forward to. */
  targetPort: number;
  /** Host to forward to; loopback unless the test says otherwise. */
  targetHost?: string;
}

export interface BlackholeOptions {
  /** Discard the bytes sent while black-holed instead of holding them until `heal()`. */
  drop?: boolean;
}

export interface FaultProxyStats {
  /** Connection pairs currently open. */
  connections: number;
  /** Client connections accepted since start. */
  accepted: number;
  /** Bytes delivered to the target / to the clients since start. */
  bytesToServer: number;
  bytesToClient: number;
  /** Bytes read but not delivered yet (delayed by latency or held by a black-hole). */
  bytesQueued: number;
  /** Bytes discarded by `blackhole({ drop: true })`. */
  bytesDropped: number;
}

const running = new Set<FaultProxy>();

/**
 * A TCP proxy on 127.0.0.1 between one client and a redis-server, so a test can break that one
 * client's link (latency, black-hole, reset, refused connections) while other clients keep a
 * healthy one. Faults apply to every connection through the proxy, current and future.
 */
export class FaultProxy {
  readonly host = '127.0.0.1';
  private boundPort = 0;
  private conditions: LinkConditions = { latencyMs: 0, blackhole: 'off' };
  private listener: Server | undefined;
  /** Every listener's 'close' (a refused one still closes only once its connections are gone). */
  private readonly listenersClosed: Promise<void>[] = [];
  private readonly connections = new Set<ProxiedConnection>();
  private accepted = 0;
  /** Byte counts of connections already gone, so the totals survive reset() and closed clients. */
  private readonly retired = { bytesToServer: 0, bytesToClient: 0, bytesDropped: 0 };
  private stopping: Promise<void> | undefined;

  private constructor(private readonly target: ProxyTarget) {}

  /** Starts a proxy on a free loopback port, forwarding to `targetHost:targetPort`. */
  static async start({ targetPort, targetHost = '127.0.0.1' }: FaultProxyOptions): Promise<FaultProxy> {
    if (!Number.isInteger(targetPort) || targetPort < 1 || targetPort > 65535) {
      throw new RangeError(`FaultProxy: targetPort must be a TCP port (1-65535), got ${String(targetPort)}`);
    }
    const proxy = new FaultProxy({ host: targetHost, port: targetPort });
    await proxy.listen(0);
    running.add(proxy);
    return proxy;
  }

  /** The port clients connect to (stays the same across refuse() / accept()). */
  get port(): number {
    return this.boundPort;
  }

  /** Delays every chunk in each direction by `ms` (a round trip grows by 2 * ms); 0 clears it. */
  setLatency(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`FaultProxy: latency must be >= 0 ms, got ${ms}`);
    // Chunks already on their way keep the delay they arrived with, as packets in flight would.
    this.conditions = { ...this.conditions, latencyMs: ms };
  }

  /**
   * Partitions the link: sockets stay open and nothing is delivered either way. Bytes sent meanwhile
   * are held and delivered in order on `heal()` (TCP would retransmit them), or discarded with
   * `{ drop: true }` - which leaves a protocol stream out of step, so follow it with `reset()` or
   * expect the client to give up on the connection. New connections are accepted, and held too.
   */
  blackhole({ drop = false }: BlackholeOptions = {}): void {
    this.conditions = { ...this.conditions, blackhole: drop ? 'drop' : 'hold' };
    // Stops the timers of delayed chunks: they are in flight, so the partition holds them as well.
    for (const connection of this.connections) connection.pump();
  }

  /** Aborts every current connection with a TCP RST; the proxy keeps listening, so clients reconnect. */
  reset(): void {
    for (const connection of [...this.connections]) {
      connection.reset();
      this.forget(connection);
    }
  }

  /** Closes the listener, so new connections are refused (ECONNREFUSED); current ones carry on. */
  refuse(): void {
    this.listener?.close();
    this.listener = undefined;
  }

  /** Listens again on the same port after `refuse()`. Rejects if someone took the port meanwhile. */
  async accept(): Promise<void> {
    if (this.stopping) throw new Error('FaultProxy: accept() after stop()');
    if (!this.listener) await this.listen(this.boundPort);
  }

  /** Ends every fault: no latency, no black-hole; everything delayed or held is delivered now, in order. */
  heal(): void {
    this.conditions = { latencyMs: 0, blackhole: 'off' };
    for (const connection of this.connections) connection.pump(true);
  }

  stats(): FaultProxyStats {
    const live = [...this.connections];
    const sum = (bytes: (connection: ProxiedConnection) => number): number => live.reduce((total, connection) => total + bytes(connection), 0);
    return {
      connections: live.length,
      accepted: this.accepted,
      bytesToServer: this.retired.bytesToServer + sum((c) => c.toServer.bytesForwarded),
      bytesToClient: this.retired.bytesToClient + sum((c) => c.toClient.bytesForwarded),
      bytesQueued: sum((c) => c.toServer.bytesQueued + c.toClient.bytesQueued),
      bytesDropped: this.retired.bytesDropped + sum((c) => c.toServer.bytesDropped + c.toClient.bytesDropped),
    };
  }

  /** Closes the listener and every connection; resolves once no socket or timer of it is left. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      running.delete(this);
      this.refuse();
      const closing = [...this.connections].map((connection) => connection.closed);
      for (const connection of this.connections) connection.destroy();
      await Promise.all([...closing, ...this.listenersClosed]);
    })();
    return this.stopping;
  }

  private listen(port: number): Promise<void> {
    const server = createServer({ allowHalfOpen: true }, (socket) => this.adopt(socket));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.host, () => {
        server.off('error', reject);
        this.listenersClosed.push(new Promise((closed) => server.once('close', () => closed())));
        this.listener = server;
        this.boundPort = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  private adopt(socket: Socket): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    this.accepted++;
    const connection = new ProxiedConnection(
      socket,
      this.target,
      () => this.conditions,
      (gone) => this.forget(gone),
    );
    this.connections.add(connection);
  }

  /** Drops a connection from the live set, keeping its byte counts in the totals. */
  private forget(connection: ProxiedConnection): void {
    if (!this.connections.delete(connection)) return;
    this.retired.bytesToServer += connection.toServer.bytesForwarded;
    this.retired.bytesToClient += connection.toClient.bytesForwarded;
    this.retired.bytesDropped += connection.toServer.bytesDropped + connection.toClient.bytesDropped;
  }
}

/** Stops every proxy still running (afterEach / afterAll safety net). */
export async function stopAllFaultProxies(): Promise<void> {
  await Promise.all([...running].map((proxy) => proxy.stop()));
}
