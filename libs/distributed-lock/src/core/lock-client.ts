import type { Cluster, Redis } from 'ioredis';
import type { LockClientOptions } from './config/lock-client-options.js';
import { resolveLockClientOptions } from './config/resolve-lock-client-options.js';
import type { RedisClient } from './connection/connection-strategy.js';
import { closeConnection, establishConnection } from './connection/establish-connection.js';
import { getLockContext, runInLockContext, runInNewLockContext, runWithCurrentLock } from './context/lock-context.js';
import { LockEvents } from './events/lock-events.js';
import { LockEngine } from './lock/lock-engine.js';
import type { LockHandle } from './lock/lock-handle.js';
import type { LockOptions, TryLockOptions } from './locks/acquire-options.js';
import { ReentrantLock } from './locks/reentrant-lock.js';
import type { Duration } from './util/duration.js';
import { assertLockName } from './util/validate.js';
import { createSubscriberPort } from './waiting/subscriber-port.js';

export interface LockClientStats {
  held: number;
  renewing: number;
  waitingChannels: number;
}

/**
 * Distributed locks on Redis, without any framework: Redisson's RLock semantics (reentrant,
 * watchdog-renewed, pub/sub wake-up) plus fencing tokens and a lock-lost signal.
 *
 * Owner: the current lock context (see `runInContext`); outside one, each acquisition is its own
 * owner and is released through its handle.
 */
export class LockClient {
  readonly events = new LockEvents();
  /** Where this client connects, for logs (no credentials). */
  readonly target: string;
  protected readonly engine: LockEngine;
  private readonly command: RedisClient;
  private readonly subscriber: RedisClient;
  private readonly ownsCommand: boolean;
  private readonly lazyConnect: boolean;
  private connecting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  /** Validates the options (throws InvalidLockConfigError) and prepares connections; `connect()` opens them. */
  constructor(options: LockClientOptions = {}, extraOptionKeys: readonly string[] = []) {
    const resolved = resolveLockClientOptions(options, extraOptionKeys);
    const { strategy } = resolved;
    let sharded: boolean;
    if (strategy) {
      this.command = strategy.createCommandClient();
      this.subscriber = strategy.createSubscriberClient(this.command);
      this.ownsCommand = true;
      this.target = strategy.target;
      sharded = strategy.shardedPubSub;
    } else {
      const client = resolved.client!;
      this.command = client;
      sharded = client.isCluster;
      this.subscriber = client.isCluster
        ? (client as Cluster).duplicate(undefined, { shardedSubscribers: true, lazyConnect: true })
        : (client as Redis).duplicate({ lazyConnect: true });
      this.ownsCommand = false;
      this.target = 'the ioredis client given in options.client';
    }
    for (const [role, connection] of [
      ['command', this.ownsCommand ? this.command : undefined],
      ['subscriber', this.subscriber],
    ] as const) {
      // Our own connections report errors as events (the Nest module logs them); without a listener
      // ioredis would print them to the console.
      connection?.on('error', (error: Error) =>
        this.events.emit('background-error', { operation: 'connection', name: role, error }),
      );
    }
    this.lazyConnect = resolved.lazyConnect;
    this.engine = new LockEngine(
      this.command,
      createSubscriberPort(this.subscriber, sharded),
      {
        keyPrefix: resolved.keyPrefix,
        watchdogTimeoutMs: resolved.watchdogTimeoutMs,
        operationTimeoutMs: resolved.operationTimeoutMs,
        shardedPubSub: sharded,
      },
      this.events,
    );
  }

  /** Creates a client and connects it: fails with LockConnectionError if Redis is unreachable or refuses us. */
  static async connect(options: LockClientOptions = {}): Promise<LockClient> {
    const client = new LockClient(options);
    await client.connect();
    return client;
  }

  /** Opens the connections (unless `lazyConnect`), proving each with a PING. Idempotent. */
  connect(): Promise<void> {
    this.connecting ??= this.lazyConnect
      ? Promise.resolve()
      : (async () => {
          await establishConnection(this.command, this.target);
          await establishConnection(this.subscriber, `${this.target} (subscriber connection)`);
        })();
    return this.connecting;
  }

  /**
   * Stops renewals, fails pending waits with LockClientClosedError, releases every lock this
   * client holds, and closes the connections it opened (never a client given in options). Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.engine.close();
      await Promise.all([closeConnection(this.subscriber), this.ownsCommand ? closeConnection(this.command) : undefined]);
    })();
    return this.closing;
  }

  get keyPrefix(): string {
    return this.engine.keys.prefix;
  }

  get watchdogTimeoutMs(): number {
    return this.engine.watchdogTimeoutMs;
  }

  /**
   * What this client is doing right now: locks held by this process, locks the watchdog renews, and
   * lock names with a pub/sub subscription (someone waiting). All zero when idle.
   */
  stats(): LockClientStats {
    return {
      held: this.engine.heldCount,
      renewing: this.engine.renewingCount,
      waitingChannels: this.engine.notifier.activeChannels,
    };
  }

  /** The connection lock scripts run on (for health checks and the fencing-protected resource). */
  get redis(): RedisClient {
    return this.command;
  }

  /** A Redisson-style lock object for `name`. Cheap: create one per use. */
  getLock(name: string): ReentrantLock {
    assertLockName(name);
    return new ReentrantLock(this.engine, name);
  }

  /** Acquires `name`, waiting as long as it takes (or up to `waitTime`, then LockAcquireTimeoutError). */
  async lock(name: string, leaseTimeOrOptions?: Duration | LockOptions): Promise<LockHandle> {
    return this.getLock(name).lock(leaseTimeOrOptions);
  }

  /** Acquires `name` within `waitTime` (default: no wait), or resolves false. */
  async tryLock(name: string, waitTimeOrOptions?: Duration | TryLockOptions, leaseTime?: Duration): Promise<LockHandle | false> {
    return this.getLock(name).tryLock(waitTimeOrOptions, leaseTime);
  }

  /** Releases one hold of `name` taken by the current lock context. */
  async unlock(name: string): Promise<void> {
    return this.getLock(name).unlock();
  }

  async isLocked(name: string): Promise<boolean> {
    return this.getLock(name).isLocked();
  }

  async isHeldByCurrentContext(name: string): Promise<boolean> {
    return this.getLock(name).isHeldByCurrentContext();
  }

  /** Alias of isHeldByCurrentContext, for Redisson users: our "thread" is the lock context. */
  async isHeldByCurrentThread(name: string): Promise<boolean> {
    return this.isHeldByCurrentContext(name);
  }

  async getHoldCount(name: string): Promise<number> {
    return this.getLock(name).getHoldCount();
  }

  async remainTimeToLive(name: string): Promise<number> {
    return this.getLock(name).remainTimeToLive();
  }

  async forceUnlock(name: string): Promise<boolean> {
    return this.getLock(name).forceUnlock();
  }

  /**
   * Runs `fn` under the lock and always releases it. `fn` gets the handle (token, signal); code it
   * calls sees the same owner, so it may re-enter the lock. A failure to release after `fn` succeeded
   * (lease lost meanwhile) is reported through the `lost` / `background-error` events, not thrown:
   * the work is done and the fencing token is what protects the resource from a stale holder.
   */
  async withLock<T>(name: string, fn: (lock: LockHandle) => T | Promise<T>, options?: LockOptions): Promise<T> {
    const lock = this.getLock(name);
    return await runInLockContext(async () => {
      const context = getLockContext()!;
      const handle = await lock.lock(options);
      try {
        return await runWithCurrentLock(context, handle, () => fn(handle));
      } finally {
        if (handle.isHeld) {
          await handle.unlock().catch((error: unknown) => this.engine.reportBackground('release', name, error));
        }
      }
    });
  }

  /** Runs `fn` as a new owner (a new lock context), e.g. one per job or per worker. */
  runInContext<T>(fn: () => T): T {
    return runInNewLockContext(fn);
  }

  /** The lock taken by the innermost `withLock` or decorated call around the running code. */
  currentLock(): LockHandle | undefined {
    return getLockContext()?.current;
  }
}
