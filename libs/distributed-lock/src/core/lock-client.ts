import type { LockClientOptions } from './config/lock-client-options.js';
import { resolveLockClientOptions } from './config/resolve-lock-client-options.js';
import type { RedisClient } from './config/redis-client.js';
import { LockConnections } from './connection/lock-connections.js';
import type { PubSubChoice } from './events/pubsub-choice.js';
import { getLockContext, runInNewLockContext } from './context/lock-context.js';
import { UnsupportedLockOperationError } from './errors/unsupported-lock-operation.error.js';
import { LockEvents } from './events/lock-events.js';
import { LockEngine } from './engine/lock-engine.js';
import type { LockHandle } from './context/lock-handle.js';
import type { LockOptions, TryLockOptions } from './locks/acquire-options.js';
import { BaseLock } from './locks/base-lock.js';
import { FairLock } from './locks/fair/fair-lock.js';
import { MultiLock } from './locks/multi/multi-lock.js';
import { ReadWriteLock } from './locks/read-write/read-write-lock.js';
import { RedLock } from './locks/redlock/red-lock.js';
import { ReentrantLock } from './locks/reentrant/reentrant-lock.js';
import type { RedisMode } from './config/connection-config.js';
import type { Clock } from './util/clock.js';
import { describe, toMilliseconds, type Duration } from './util/duration.js';
import { ClientMetrics } from './metrics/client-metrics.js';
import type {
  InspectedLockKind,
  ListLockNamesOptions,
  ListLocksOptions,
  LockInspection,
  LockInstanceInfo,
  LockNameList,
} from './inspection/lock-inspection.js';
import { assertKnownKeys, assertLockName, isPlainObject } from './util/validate.js';
import { InvalidLockArgumentError } from './errors/invalid-lock-argument.error.js';
import { createSemaphore, type Semaphore, type SemaphoreOptions } from './locks/semaphore/semaphore.js';
import { createLockServices, type LockServices } from './locks/lock-services.js';
import { InstanceRegistration } from './inspection/instance-registration.js';
import { LockInspector } from './inspection/lock-inspector.js';
import { LockLines } from './waiting/lock-lines.js';
import { LOCK_SCRIPT_BATCH } from './lock-scripts.js';
import { createElection, type LeaderElection, type LeaderElectionOptions } from './leader/leader-election.js';

/** How many plain lock objects `getLock` keeps for reuse before it starts afresh. */
const PLAIN_LOCK_CACHE_SIZE = 1000;

/** Options of `getFairLock`. */
export interface FairLockOptions {
  /**
   * How long a queued waiter's place survives without a refresh (default 5 s; waiters refresh every
   * third of it): the longest a crashed waiter can hold up the ones behind it.
   */
  queueTimeout?: Duration;
}

export interface LockClientStats {
  held: number;
  renewing: number;
  waitingChannels: number;
}

/** One Redis node's circuit breaker, as `LockClient.circuits()` reports it (see LockClientOptions.circuitBreaker). */
export interface LockCircuitStatus {
  /** The node (host:port, or the client given; no credentials). */
  node: string;
  /** `closed`: calls are sent; `open`: refused at once; `half-open`: refused while a probe asks the node. */
  state: 'closed' | 'open' | 'half-open';
  /** Calls in a row that got no reply (0 after any reply). */
  failures: number;
  /** When it last changed state (ms since the epoch; the client's start if never). */
  since: number;
}

/**
 * Distributed locks on Redis, without any framework: Redisson's RLock semantics (reentrant,
 * watchdog-renewed, pub/sub wake-up) plus fencing tokens and a lock-lost signal.
 *
 * Owner: the current lock context (see `runInNewContext`); outside one, each acquisition is its own
 * owner and is released through its handle.
 */
export class LockClient {
  readonly events = new LockEvents();
  /** Where this client connects, for logs (no credentials). */
  readonly target: string;
  /** The deployment mode ('client' when an ioredis client was given). */
  readonly mode: RedisMode | 'client';
  protected readonly engine: LockEngine;
  protected readonly connections: LockConnections;
  /** What this client's lock objects are given (see LockServices). */
  private readonly services: LockServices;
  /** This process's label for lock inspection, written when it first takes part in locking. */
  private readonly instance: InstanceRegistration;
  private readonly inspector: LockInspector;
  private readonly lazyConnect: boolean;
  private connecting: Promise<void> | undefined;
  /** Recently used plain lock objects by name (see getLock). */
  private readonly plainLocks = new Map<string, BaseLock>();
  private closing: Promise<void> | undefined;
  /** OpenTelemetry metrics: started by connect() when a meter provider is there, stopped by close(). */
  private readonly metrics: ClientMetrics;

  /** Validates the options (throws InvalidLockConfigError) and prepares connections; `connect()` opens them. */
  constructor(options: LockClientOptions = {}, extraOptionKeys: readonly string[] = []) {
    const resolved = resolveLockClientOptions(options, extraOptionKeys);
    this.connections = new LockConnections(resolved, this.events);
    this.target = this.connections.target;
    this.mode = this.connections.mode;
    this.lazyConnect = resolved.lazyConnect;
    const { clientId, clock } = resolved;
    const nodes = this.connections.lockNodes(resolved.operationTimeoutMs, LOCK_SCRIPT_BATCH, resolved.oneSlotPerScript, resolved.circuitBreaker);
    const lines = new LockLines(this.connections.subscriberPort(), this.events, clock, clientId, resolved.handoverTurnMs);
    this.instance = new InstanceRegistration(nodes[0]!.redis, resolved.keyPrefix, clientId, resolved.instanceName, clock, (error) =>
      this.engine.background.report('register', undefined, error),
    );
    this.engine = new LockEngine(
      clientId,
      nodes,
      lines,
      {
        keyPrefix: resolved.keyPrefix,
        watchdogTimeoutMs: resolved.watchdogTimeoutMs,
        operationTimeoutMs: resolved.operationTimeoutMs,
        pubsub: this.connections.pubsub,
        replicaAck: resolved.replicaAck,
        oneSlotPerScript: resolved.oneSlotPerScript,
        clock,
      },
      this.events,
      () => this.instance.announce(),
      [...this.connections.replicaReaders],
    );
    const { engine } = this;
    this.inspector = new LockInspector({
      node: nodes[0]!,
      keys: engine.keys,
      clientId,
      waitedMs: (channel) => lines.waitedMs(channel),
      query: (operation, name, run) => engine.query(operation, name, run),
    });
    this.services = createLockServices(engine, (name, kind) => this.inspector.inspect(name, kind));
    // Waiters whose attempts failed while a command connection was down look again as soon as it is back.
    this.connections.onCommandReady(() => lines.wakeAll());
    // A new connection may lead to another server (a failover): its clock is read again (see NodeClock);
    // an open circuit breaker probes it at once rather than refusing calls until its next probe.
    this.connections.onCommandReady(() => {
      for (const node of nodes) {
        node.clock.reset();
        node.breaker?.probeNow();
      }
    });
    // Redis may have lost this process's inspection label (a restart): write it again.
    this.connections.onCommandReady(() => this.instance.refresh());
    this.metrics = new ClientMetrics(resolved.metrics, {
      events: this.events,
      waiting: () => lines.waiting,
      heldByKind: () => engine.held.countByKind(),
      circuits: () => this.circuits(),
    });
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
    this.connecting ??= (
      this.lazyConnect ? Promise.resolve() : this.connections.establish((target, error) => this.engine.background.report('connection', target, error))
    ).then(() => this.metrics.start());
    return this.connecting;
  }

  /**
   * Which pub/sub unlock notifications use, and why (also the `pubsub` event): known after
   * `connect()`, or, with lazyConnect, after the first lock call.
   */
  get unlockNotifications(): PubSubChoice | undefined {
    return this.connections.pubsub.current;
  }

  /**
   * Stops renewals, fails pending waits with LockClientClosedError, releases every lock this
   * client holds, and closes the connections it opened (never a client given in options). Idempotent.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.metrics.stop();
      // This process's label goes with the rest of the close (within its bound, see LockEngine.close).
      this.engine.background.run('register', undefined, () => this.engine.roundTrips.bounded(this.instance.stop()));
      await this.engine.close();
      for (const node of this.engine.nodes) node.stop(); // the circuit breakers' probes
      await this.connections.close();
    })();
    return this.closing;
  }

  get keyPrefix(): string {
    return this.engine.keys.prefix;
  }

  get watchdogTimeoutMs(): number {
    return this.engine.settings.watchdogTimeoutMs;
  }

  /** The clock every lease, timeout and wait of this client runs on (see LockClientOptions.clock). */
  get clock(): Clock {
    return this.engine.settings.clock;
  }

  /**
   * What this client is doing right now: locks held by this process, locks the watchdog renews, and
   * lock names with a pub/sub subscription (someone waiting). All zero when idle.
   */
  stats(): LockClientStats {
    return {
      held: this.engine.held.size,
      renewing: this.engine.renewingCount,
      waitingChannels: this.engine.lines.activeChannels,
    };
  }

  /**
   * The circuit breaker of each Redis node (one, or one per RedLock master), in the order of the nodes;
   * empty when it is turned off (`circuitBreaker: false`) or on a cluster client (see LockClientOptions.circuitBreaker).
   */
  circuits(): LockCircuitStatus[] {
    return this.engine.nodes.flatMap(({ breaker, target }) =>
      breaker ? [{ node: target, state: breaker.state, failures: breaker.failures, since: breaker.since }] : [],
    );
  }

  /** The ioredis client lock scripts run on (RedLock: the first node), for your own data; a node-redis client you passed is returned as is. */
  get redis(): RedisClient {
    return this.engine.redis.native as RedisClient;
  }

  /** A Redisson-style lock object for `name` (RedLock over all nodes in redlock mode). Cheap: create one per use. */
  getLock(name: string): BaseLock {
    let lock = this.plainLocks.get(name);
    if (lock) return lock;
    assertLockName(name);
    lock = this.mode === 'redlock' ? new RedLock(this.services, name) : new ReentrantLock(this.services, name);
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
    assertLockName(name);
    if (!isPlainObject(options)) throw new InvalidLockArgumentError('fair lock options', `expected an object, got ${describe(options)}.`);
    assertKnownKeys(options, ['queueTimeout'], 'fair lock options');
    const queueTimeoutMs = options.queueTimeout === undefined ? undefined : toMilliseconds(options.queueTimeout, 'queueTimeout', { min: 30 });
    this.assertSingleNode(name, 'use a fair lock');
    return new FairLock(this.services, name, queueTimeoutMs);
  }

  /**
   * A read-write lock: `readLock()` shared, `writeLock()` exclusive, both reentrant, watchdog-renewed
   * and fenced (see ReadWriteLock). Not available in redlock mode (UnsupportedLockOperationError).
   */
  getReadWriteLock(name: string): ReadWriteLock {
    assertLockName(name);
    this.assertSingleNode(name, 'use a read-write lock');
    return new ReadWriteLock(this.services, name);
  }

  /**
   * Several locks taken all or nothing, in a canonical order (no deadlock between overlapping sets),
   * released together. Names become plain locks; pass lock objects (e.g. a read lock) to mix kinds.
   * In a cluster the names may live in different slots.
   */
  getMultiLock(locks: readonly (string | BaseLock)[]): MultiLock {
    if (!Array.isArray(locks)) throw new InvalidLockArgumentError('multi-lock names', `expected an array of lock names, got ${describe(locks)}.`);
    return new MultiLock(
      this.services,
      locks.map((lock: unknown, i) => {
        if (lock instanceof BaseLock) return lock;
        if (typeof lock === 'object' && lock !== null) {
          throw new InvalidLockArgumentError(
            `multi-lock names[${i}]`,
            `expected a lock name or a lock object from this client (getLock, getFairLock, readLock()...), got ${lock.constructor?.name ?? 'an object'}.`,
          );
        }
        return this.getLockNamed(lock, `multi-lock names[${i}]`);
      }),
    );
  }

  private getLockNamed(name: unknown, argument: string): BaseLock {
    assertLockName(name, argument);
    return this.getLock(name);
  }

  private assertSingleNode(name: string, operation: string): void {
    if (this.mode === 'redlock') {
      throw new UnsupportedLockOperationError(
        name,
        `${operation} in redlock mode`,
        'its queue or reader set would live on independent masters that can disagree on order, so no waiter might ever win a majority. Use single, master-slave, sentinel or cluster mode for fair and read-write locks (plain locks and multi-locks work in redlock mode).',
      );
    }
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
    return this.inspector.inspect(name, kind);
  }

  /**
   * The locks held (or waited for) whose names match the glob `pattern` (default `*`), found by SCAN
   * over the key prefix on every master (never KEYS), each inspected as by `inspect`, sorted by name;
   * at most `limit` names (default 100).
   */
  list(pattern?: string, options?: ListLocksOptions): Promise<LockInspection[]> {
    return this.inspector.list(pattern, options);
  }

  /**
   * The names of the locks matching the glob `pattern` (default `*`), with the kinds under each, found
   * by SCAN like `list` but not inspected: sorted, at most `limit` (default 1,000, at most 100,000).
   * To page through many locks: list the names, then `inspect` one page.
   */
  listNames(pattern?: string, options?: ListLockNamesOptions): Promise<LockNameList> {
    return this.inspector.names(pattern, options);
  }

  /** The processes registered for inspection now (each lock client registers at its first acquisition), by SCAN. */
  listInstances(): Promise<LockInstanceInfo[]> {
    return this.inspector.instances();
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
    return createSemaphore(this.services, this.mode, name, options);
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
      this.engine.settings.clock,
    );
  }
}
