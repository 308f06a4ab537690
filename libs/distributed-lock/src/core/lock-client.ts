import type { LockClientOptions } from './config/lock-client-options.js';
import type { LockClientRedis } from './config/redis-client.js';
import type { PubSubChoice } from './events/pubsub-choice.js';
import { getLockContext, runInNewLockContext } from './context/lock-context.js';
import type { LockEvents } from './events/lock-events.js';
import type { LockEngine } from './engine/lock-engine.js';
import type { LockHandle } from './context/lock-handle.js';
import type { LockOptions, TryLockOptions } from './locks/acquire-options.js';
import type { BaseLock } from './locks/base-lock.js';
import type { FairLock } from './locks/fair/fair-lock.js';
import type { MultiLock } from './locks/multi/multi-lock.js';
import type { ReadWriteLock } from './locks/read-write/read-write-lock.js';
import { createFairLock, createMultiLock, createReadWriteLock, type FairLockOptions } from './locks/lock-objects.js';
import { RedLock } from './locks/redlock/red-lock.js';
import { ReentrantLock } from './locks/reentrant/reentrant-lock.js';
import type { RedisMode } from './config/connection-config.js';
import type { Clock } from './util/clock.js';
import type { Duration } from './util/duration.js';
import type {
  InspectedLockKind,
  ListLockNamesOptions,
  ListLocksOptions,
  LockInspection,
  LockInstanceInfo,
  LockNameList,
} from './inspection/lock-inspection.js';
import { assertLockName } from './util/validate.js';
import { createSemaphore, type Semaphore, type SemaphoreOptions } from './locks/semaphore/semaphore.js';
import { LockClientParts, type HealthTargets, type LockCircuitStatus, type LockClientStats } from './lock-client.composition.js';
import { createElection, type LeaderElection, type LeaderElectionOptions } from './leader/leader-election.js';

/** How many plain lock objects `getLock` keeps for reuse before it starts afresh. */
const PLAIN_LOCK_CACHE_SIZE = 1000;

/**
 * Distributed locks on Redis, without any framework: Redisson's RLock semantics (reentrant,
 * watchdog-renewed, pub/sub wake-up) plus fencing tokens and a lock-lost signal.
 *
 * Owner: the current lock context (see `runInNewContext`); outside one, each acquisition is its own
 * owner and is released through its handle.
 */
export class LockClient {
  readonly events: LockEvents;
  /** Where this client connects, for logs (no credentials). */
  readonly target: string;
  /** The deployment mode ('client' when an ioredis client was given). */
  readonly mode: RedisMode | 'client';
  private readonly parts: LockClientParts;
  /** What this client's lock objects run on (their LockRuntime). */
  private readonly engine: LockEngine;
  /** Recently used plain lock objects by name (see getLock). */
  private readonly plainLocks = new Map<string, BaseLock>();

  /** Validates the options (throws InvalidLockConfigError) and prepares connections; `connect()` opens them. */
  constructor(options: LockClientOptions = {}, extraOptionKeys: readonly string[] = []) {
    this.parts = new LockClientParts(options, extraOptionKeys);
    ({ events: this.events, target: this.target, mode: this.mode, engine: this.engine } = this.parts);
  }

  /** Creates a client and connects it: fails with LockConnectionError if Redis is unreachable or refuses us. */
  static async connect(options: LockClientOptions = {}): Promise<LockClient> {
    const client = new LockClient(options);
    await client.connect();
    return client;
  }

  /**
   * Opens the connections (unless `lazyConnect`), proving each with a PING, and chooses the pub/sub
   * kind (`unlockNotifications`). Every node must answer, except in redlock mode, where a majority is
   * enough and the others keep reconnecting. Idempotent.
   */
  connect(): Promise<void> {
    return this.parts.connect();
  }

  /**
   * Which pub/sub unlock notifications use, and why (also the `pubsub` event): known after
   * `connect()`, or, with lazyConnect, after the first lock call.
   */
  get unlockNotifications(): PubSubChoice | undefined {
    return this.parts.connections.pubsub.current;
  }

  /**
   * Stops renewals, fails pending waits with LockClientClosedError, releases every lock this
   * client holds, waits (up to one operation timeout) for that and for the acquisitions in flight,
   * whose late grants it gives back, and closes the connections it opened (never a client given in
   * options). Idempotent.
   */
  close(): Promise<void> {
    return this.parts.close();
  }

  get keyPrefix(): string {
    return this.engine.keys.prefix;
  }

  get watchdogTimeoutMs(): number {
    return this.engine.watchdogTimeoutMs;
  }

  /** The clock every lease, timeout and wait of this client runs on (see LockClientOptions.clock). */
  get clock(): Clock {
    return this.engine.clock;
  }

  /**
   * What this client is doing right now: locks held by this process, locks the watchdog renews, and
   * lock names with a pub/sub subscription (someone waiting). All zero when idle.
   */
  stats(): LockClientStats {
    return this.parts.stats();
  }

  /**
   * The circuit breaker of each Redis node (one, or one per RedLock master), in the order of the nodes;
   * empty when it is turned off (`circuitBreaker: false`) or on a cluster client (see LockClientOptions.circuitBreaker).
   */
  circuits(): LockCircuitStatus[] {
    return this.parts.circuits();
  }

  /**
   * The client lock scripts run on (RedLock: the first node's), as it is, for your own data: an ioredis
   * `Redis` or `Cluster`, your node-redis client, the GLIDE client the library created... (see
   * LockClientRedis). Narrow it to the client you configured: `locks.redis as Redis`.
   */
  get redis(): LockClientRedis {
    return this.engine.redis.native as LockClientRedis;
  }

  /**
   * @internal For the Nest layer: `listener` runs each time a command connection is ready (again): the
   * first connect, and every reconnect after an outage.
   */
  onConnectionReady(listener: () => void): void {
    this.parts.connections.onCommandReady(listener);
  }

  /** @internal The connections a health check looks at (DistributedLockHealthIndicator). */
  healthTargets(): HealthTargets {
    return this.parts.healthTargets();
  }

  /** A Redisson-style lock object for `name` (RedLock over all nodes in redlock mode). Cheap: create one per use. */
  getLock(name: string): BaseLock {
    let lock = this.plainLocks.get(name);
    if (lock) return lock;
    assertLockName(name);
    lock = this.mode === 'redlock' ? new RedLock(this.engine, name) : new ReentrantLock(this.engine, name);
    // Lock objects hold no state of their own: keep recent ones, so a hot name does not rebuild its keys.
    if (this.plainLocks.size >= PLAIN_LOCK_CACHE_SIZE) this.plainLocks.clear();
    this.plainLocks.set(name, lock);
    return lock;
  }

  /**
   * A fair lock: granted in arrival order across processes, through a queue in Redis that survives
   * crashed waiters (see FairLock). Not available in redlock mode (UnsupportedLockOperationError).
   */
  getFairLock(name: string, options: FairLockOptions = {}): FairLock {
    return createFairLock(this.engine, this.mode, name, options);
  }

  /**
   * A read-write lock: `readLock()` shared, `writeLock()` exclusive, both reentrant, watchdog-renewed
   * and fenced (see ReadWriteLock). Not available in redlock mode (UnsupportedLockOperationError).
   */
  getReadWriteLock(name: string): ReadWriteLock {
    return createReadWriteLock(this.engine, this.mode, name);
  }

  /**
   * Several locks taken all or nothing, in a canonical order (no deadlock between overlapping sets),
   * released together. Names become plain locks; pass lock objects (e.g. a read lock) to mix kinds.
   * In a cluster the names may live in different slots.
   */
  getMultiLock(locks: readonly (string | BaseLock)[]): MultiLock {
    return createMultiLock(this.engine, locks, (name) => this.getLock(name));
  }

  /**
   * Acquires `name`, waiting as long as it takes (or up to `waitTime`, then LockAcquireTimeoutError).
   * A duration given alone is the lease (Redisson's `lock(leaseTime)`): `lock(name, '5s')` holds it at
   * most 5 s, without the watchdog. To bound the wait, say so: `lock(name, { waitTime: '5s' })`.
   */
  async lock(name: string, leaseTimeOrOptions?: Duration | LockOptions): Promise<LockHandle> {
    return this.getLock(name).lock(leaseTimeOrOptions);
  }

  /**
   * Acquires `name` within `waitTime` (default: no wait), or resolves false. A duration given alone is
   * the wait (Redisson's `tryLock(waitTime, leaseTime)`): `tryLock(name, '5s')` waits up to 5 s and holds
   * the lock with the watchdog; the lease comes second, or as `{ leaseTime }`.
   */
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
    return this.getLock(name).withLock(fn, options);
  }

  // --- Inspection -------------------------------------------------------------------------------

  /**
   * Who holds the lock `name` (owner id, and the process: host, pid, instanceName), its holds, fencing
   * token, time held, remaining lease, whether the watchdog renews it, and who waits (waiting
   * processes of a plain lock, the fair queue, the readers of a read-write lock), read in one script.
   * Without `kind`, the kind in use under that name (plain, else fair, else read-write). In redlock
   * mode, as the first node sees it.
   */
  inspect(name: string, kind?: InspectedLockKind): Promise<LockInspection> {
    return this.engine.inspector.inspect(name, kind);
  }

  /**
   * The locks held (or waited for) whose names match the glob `pattern` (default `*`), found by SCAN
   * over the key prefix on every master (never KEYS), each inspected as by `inspect`, sorted by name;
   * at most `limit` names (default 100).
   */
  list(pattern?: string, options?: ListLocksOptions): Promise<LockInspection[]> {
    return this.engine.inspector.list(pattern, options);
  }

  /**
   * The names of the locks matching the glob `pattern` (default `*`), with the kinds under each, found
   * by SCAN like `list` but not inspected: sorted, at most `limit` (default 1,000, at most 100,000).
   * To page through many locks: list the names, then `inspect` one page.
   */
  listNames(pattern?: string, options?: ListLockNamesOptions): Promise<LockNameList> {
    return this.engine.inspector.names(pattern, options);
  }

  /** The processes registered for inspection now (each lock client registers at its first acquisition), by SCAN. */
  listInstances(): Promise<LockInstanceInfo[]> {
    return this.engine.inspector.instances();
  }

  /**
   * Runs `fn` as a new owner: a new lock context, whatever context the caller is in (one per job, per
   * worker, per concurrent branch that must exclude the others). Locks `fn` takes are re-entered by
   * code it calls, and exclude every other context.
   */
  runInNewContext<T>(fn: () => T): T {
    return runInNewLockContext(fn);
  }

  /** The lock taken by the innermost `withLock` or decorated call around the running code. */
  currentLock(): LockHandle | undefined {
    return getLockContext()?.current;
  }

  // Primitives built on the locks' leases: semaphores and leader election.

  /**
   * A semaphore of `size` permits (Redisson's RPermitExpirableSemaphore): `acquire(n)` /
   * `tryAcquire(n, waitTime)` take permits, each acquisition a lease of its own (watchdog-renewed, or
   * `leaseTime`) with its own fencing token and signal, released through its handle; waiters served
   * in arrival order across processes (see Semaphore). Not available in redlock mode
   * (UnsupportedLockOperationError).
   */
  getSemaphore(name: string, options: SemaphoreOptions): Semaphore {
    return createSemaphore(this.engine, this.mode, name, options);
  }

  /**
   * Stands for the leadership of `name` among every candidate of every process: `onElected` gets
   * the term (fencing token, signal) when this candidate leads, `onRevoked` is told when the term
   * ends. The leadership is a watchdog-renewed lease (watchdogTimeout) on the lock `leader:<name>`:
   * handed to a waiting candidate at once on `resign()` or close, taken over within the lease when the
   * leader dies or pauses (see LeaderElection). Works in every mode.
   */
  elect(name: string, options: LeaderElectionOptions = {}): LeaderElection {
    return createElection(
      (lockName) => this.getLock(lockName),
      name,
      options,
      (error) => this.engine.background.report('elect', name, error),
      this.engine.clock,
    );
  }
}
