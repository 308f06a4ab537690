import { RedisClientNotConnectedError } from '../errors/redis-client-not-connected.error.js';
import { fromGlide, glideFailure } from './glide-errors.js';
import type { GlideClientLike } from './glide.types.js';
import type { ConnectionEvent, ConnectionStatus } from './redis-port.js';

/**
 * One GLIDE client the library makes (from the configuration the user gave) and closes, and what the
 * core needs to know of its connection. GLIDE reconnects by itself (for ever, with back-off) and
 * reports no connection event, so the events the core listens to are told from the client's own
 * replies instead:
 * - `error`, when a command fails because no answer came (TimeoutError, ConnectionError) after the
 *   last one had succeeded: the start of an outage, once, not once per failing command;
 * - `ready`, when a command succeeds again after that: waiters whose attempts failed look again;
 * - `end`, when GLIDE closed the client by itself (a ClosingError the library did not cause): the
 *   status is then `end`, and `connect()` creates a new client (see ConnectionRevival).
 * `status` is `ready` while the client is open, whatever the network does: health checks PING
 * (nothing else would know), and a command waits for GLIDE's reconnection within its timeout.
 */
export class GlideClientHolder {
  private client: GlideClientLike | undefined;
  private creating: Promise<GlideClientLike> | undefined;
  /** Closed by the library: for good. */
  private closed = false;
  /** Closed by GLIDE itself: a new client may be created. */
  private lost = false;
  /** The last command failed for want of an answer (see the class comment). */
  private failing = false;
  private readonly listeners = new Map<ConnectionEvent, Set<(error?: Error) => void>>();
  /** A reply: the connection answers (again). */
  private readonly observeReply = (reply: unknown): unknown => {
    if (this.failing) {
      this.failing = false;
      this.emit('ready');
    }
    return reply;
  };
  /** A failure: learn from it, and rethrow it as the layers above read it (fromGlide). */
  private readonly observeFailure = (error: unknown): never => {
    this.noteFailure(error);
    throw fromGlide(error);
  };

  constructor(
    /** For messages: "Valkey GLIDE client", "Valkey GLIDE client (subscriptions)". */
    readonly description: string,
    private readonly create: () => Promise<object>,
  ) {}

  get status(): ConnectionStatus {
    if (this.closed || this.lost) return 'end';
    if (this.client) return 'ready';
    return this.creating ? 'connecting' : 'wait';
  }

  /** The client, if it exists and is open. */
  get current(): GlideClientLike | undefined {
    return this.client;
  }

  /** Creates the client (GLIDE connects while creating it), once; again after GLIDE closed it by itself. */
  connect(): Promise<void> {
    return this.open().then(() => undefined);
  }

  /** The open client, created first if need be. */
  open(): Promise<GlideClientLike> {
    if (this.client) return Promise.resolve(this.client);
    if (this.closed) return Promise.reject(new RedisClientNotConnectedError(`${this.description} (closed)`));
    this.creating ??= this.create().then(
      (client) => {
        this.creating = undefined;
        if (this.closed) {
          (client as GlideClientLike).close();
          throw new RedisClientNotConnectedError(`${this.description} (closed)`);
        }
        this.client = client as GlideClientLike;
        this.lost = false;
        this.failing = false;
        return this.client;
      },
      (error: unknown) => {
        this.creating = undefined;
        throw error;
      },
    );
    return this.creating;
  }

  /** Runs `command` on the client (created first if need be), and learns from its outcome (see the class comment). */
  run<T>(command: (client: GlideClientLike) => Promise<T>): Promise<T> {
    const client = this.client;
    if (client) return command(client).then(this.observeReply, this.observeFailure) as Promise<T>;
    return this.open().then((opened) => command(opened).then(this.observeReply, this.observeFailure) as Promise<T>);
  }

  /** Closes the client for good (GLIDE's close is immediate: replies still awaited fail with ClosingError). */
  close(): void {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    client?.close();
  }

  on(event: ConnectionEvent, listener: (error?: Error) => void): void {
    let registered = this.listeners.get(event);
    if (!registered) this.listeners.set(event, (registered = new Set()));
    registered.add(listener);
  }

  off(event: ConnectionEvent, listener: (error?: Error) => void): void {
    this.listeners.get(event)?.delete(listener);
  }

  private noteFailure(error: unknown): void {
    const failure = glideFailure(error);
    if (failure === 'timeout' || failure === 'connection') {
      if (this.failing) return;
      this.failing = true;
      this.emit('error', error as Error);
    } else if (failure === 'closed' && !this.closed && this.client) {
      // GLIDE closed the client by itself: every later command would fail the same way.
      this.client = undefined;
      this.lost = true;
      this.emit('error', error as Error);
      this.emit('end');
    }
  }

  private emit(event: ConnectionEvent, error?: Error): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) listener(error);
  }
}
