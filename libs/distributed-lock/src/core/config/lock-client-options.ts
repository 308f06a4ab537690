import type { ConnectionConfig } from './connection-config.js';
import type { GlideClientSettings, NodeRedisCompatibleClient, RedisCompatibleClient } from './redis-client.js';
import type { Clock } from '../util/clock.js';
import type { LockMetricsOptions } from '../metrics/lock-metrics.options.js';
import type { Duration } from '../util/duration.js';

/** How many replicas must confirm a lock write, and how long to wait for them. */
export interface ReplicaAckOptions {
  replicas: number;
  /** Default 500 ms (DEFAULT_REPLICA_ACK_TIMEOUT_MS says why). */
  timeout?: Duration;
}

/**
 * The circuit breaker of each Redis node (see LockClientOptions.circuitBreaker): it opens after
 * `failures` calls in a row got no reply (the operation timeout passed, or the connection was down),
 * and then refuses calls at once with LockCircuitOpenError; `resetAfter` later one probe (a PING)
 * asks the node, and its reply closes the circuit.
 */
export interface CircuitBreakerOptions {
  /** Failures in a row that open the circuit (default 5, at least 1). */
  failures?: number;
  /** How long the circuit stays open before a probe, and after a failed probe (default 1 s). */
  resetAfter?: Duration;
}

/**
 * A store that brings its own connection to the library, as the in-memory store of
 * `nestjs-distributed-lock/testing` does: what `redisPort()` returns is the library's own business
 * (its internal PortedClient), so it is opaque here.
 */
export interface StoreWithOwnPort {
  redisPort(): object;
}

/**
 * A client the lock client can run on (see LockClientOptions.client). Typed by shape, so that it stays
 * typed where ioredis is not installed: an ioredis `Redis` or `Cluster` is a RedisCompatibleClient.
 */
export type LockStoreClient = RedisCompatibleClient | NodeRedisCompatibleClient | GlideClientSettings | StoreWithOwnPort;

/** Options of the framework-free `LockClient` (the Nest module accepts the same, plus its own). */
export interface LockClientOptions {
  /** Where Redis is. Omit it (and `client`) to read `DISTRIBUTED_LOCK_REDIS_*` environment variables. */
  connection?: ConnectionConfig;
  /**
   * A client you already have: ioredis (`Redis` or `Cluster`; iovalkey's work too), or node-redis 5 or 6
   * (`createClient`, `createCluster` or `createSentinel`, connected first). The library runs its
   * scripts on it and opens one extra connection for subscriptions (`duplicate()`; a node-redis
   * sentinel subscribes through its own); it never closes your client. For Valkey GLIDE, its class and
   * configuration (`{ glide: GlideClient, configuration }`, see GlideClientSettings): the library
   * creates its GLIDE clients and closes them. In unit tests, an `InMemoryLockStore` (from
   * `nestjs-distributed-lock/testing`) instead: no Redis needed. An array of clients (3 or more, each
   * to an independent master) is RedLock over them, as `connection: { mode: 'redlock' }` is over nodes.
   */
  client?: LockStoreClient | readonly LockStoreClient[];
  /** Prefix of every key and channel (default `DISTRIBUTED_LOCK_KEY_PREFIX` or `'lock:'`). */
  keyPrefix?: string;
  /**
   * Keep the keys of every script in one hash slot although the client is not a cluster client: for
   * a server that shards behind one endpoint and refuses scripts whose keys span slots (Redis Cloud /
   * Redis Software without the OSS Cluster API, Azure Managed Redis with the Enterprise cluster
   * policy, other sharding proxies). The fencing counter is then one per slot, as in a cluster, and
   * calls issued together travel in one batch per slot. A cluster client always does so (default
   * `DISTRIBUTED_LOCK_ONE_SLOT_PER_SCRIPT`, or false).
   */
  oneSlotPerScript?: boolean;
  /**
   * Lease of a lock taken without leaseTime; the watchdog renews it every third of this while the
   * owner holds it (default `DISTRIBUTED_LOCK_WATCHDOG_TIMEOUT` or 30 s, minimum 30 ms).
   */
  watchdogTimeout?: Duration;
  /**
   * Longest a single Redis round trip of a lock operation may take before it fails with
   * LockBackendError (default 5 s). A late success of an abandoned acquisition is released again.
   */
  operationTimeout?: Duration;
  /**
   * Fail fast during an outage: after `failures` calls in a row to a Redis node got no reply (the
   * operation timeout passed, or the connection was down), calls to it are refused at once with
   * LockCircuitOpenError (a LockBackendError: nothing was sent, nothing changed) instead of each
   * waiting out the operation timeout, until a probe (one PING every `resetAfter`) gets a reply.
   * Callers with a waitTime keep waiting through it; lease renewals are still sent. One breaker per
   * node (each RedLock master has its own); not applied to a cluster client, whose one connection
   * object serves every shard. Default `{ failures: 5, resetAfter: '1s' }`; `false` turns it off.
   */
  circuitBreaker?: CircuitBreakerOptions | false;
  /** Do not connect at start-up; the first lock call connects (default false: connect, fail fast). */
  lazyConnect?: boolean;
  /**
   * Replica acknowledgement: after acquiring or renewing, `WAIT replicas timeout` on the same
   * connection; if fewer replicas confirm, an acquisition is undone (ReplicaAckError) and a renewal
   * does not extend the local lease. Best effort: it narrows, but cannot close, the window in which a
   * failover loses a lock. Default `DISTRIBUTED_LOCK_REPLICA_ACK` / `DISTRIBUTED_LOCK_REPLICA_ACK_TIMEOUT`, or off.
   * Not available in redlock mode (its nodes are independent masters). Can be set per lock too.
   */
  replicaAck?: ReplicaAckOptions | false;
  /**
   * While callers of other processes wait for a lock, the longest this process keeps handing it to
   * its own waiting callers, counted from the acquisition that began its turn (default 100 ms; and at
   * most MAX_HANDOVER_STREAK hand-overs). Then the lock goes to the process that has waited longest,
   * so a process on a slow link, or with long critical sections, cannot starve the others. Longer
   * turns favour throughput within a process; shorter ones, turn-taking between processes.
   */
  handoverTurn?: Duration;
  /** Environment to read when `connection` is omitted (default `process.env`). */
  env?: Record<string, string | undefined>;
  /**
   * OpenTelemetry metrics (wait and hold times, acquisitions, hand-overs, lost leases, renewals,
   * waiters, held locks): recorded when a MeterProvider is registered with `@opentelemetry/api`
   * before the client connects, or given here. `metricName` maps lock names to bounded labels.
   * `false`: none, even with a provider registered.
   */
  metrics?: LockMetricsOptions | false;
  /**
   * A readable name for this process in lock inspection (`inspect`, `list`, the command-line
   * inspector), beside its host and pid (default `DISTRIBUTED_LOCK_INSTANCE_NAME`, or none).
   */
  instanceName?: string;
  /**
   * Every clock read and timer of this client (leases, timeouts, waits, renewals, back-offs): default
   * Node's (`systemClock`). Give your own to run the library in virtual time, as a simulator or a test
   * of lease expiry does; its `now()` must be monotonic.
   */
  clock?: Clock;
  /**
   * This client's id: the first half of every owner id it makes, its waiting marks, its process
   * channel (default a random UUID, new per client). Set it only to make a test reproducible: two live
   * clients with the same id would be one owner to Redis.
   */
  clientId?: string;
}

export const LOCK_CLIENT_OPTION_KEYS = [
  'connection',
  'client',
  'keyPrefix',
  'oneSlotPerScript',
  'watchdogTimeout',
  'operationTimeout',
  'circuitBreaker',
  'lazyConnect',
  'replicaAck',
  'handoverTurn',
  'env',
  'metrics',
  'instanceName',
  'clock',
  'clientId',
] as const;

export const DEFAULT_KEY_PREFIX = 'lock:';
export const DEFAULT_WATCHDOG_TIMEOUT_MS = 30_000;
export const MIN_WATCHDOG_TIMEOUT_MS = 30;
export const DEFAULT_OPERATION_TIMEOUT_MS = 5_000;
export const DEFAULT_HANDOVER_TURN_MS = 100;
/** Failures in a row that open a node's circuit: a few, so that one lost reply does not refuse the calls after it. */
export const DEFAULT_CIRCUIT_FAILURES = 5;
/**
 * How long a node's circuit stays open before a probe: 1 s, the longest back-off of a waiting caller,
 * so that a Redis that is back is used again about as soon as waiters would try it anyway (one PING per
 * second per node is all an outage costs).
 */
export const DEFAULT_CIRCUIT_RESET_AFTER_MS = 1000;
/**
 * How long `WAIT` may wait for replicas by default. Redis answers as soon as the replicas acknowledge
 * (it asks them at once with REPLCONF GETACK): one round trip, milliseconds on a LAN, tens across
 * zones. Some servers only look at acknowledgements on a fixed tick instead: Dragonfly's WAIT every
 * 100 ms, so a 100 ms timeout there fails a healthy replica whenever the tick comes a little late,
 * and each such false failure undoes an acquisition (ReplicaAckError). 500 ms leaves five such ticks
 * plus a cross-zone round trip. It costs only when replicas really lag or are down: each acquisition
 * or renewal then holds its connection that long before failing, still a tenth of the default
 * operationTimeout (5 s) and of the default watchdog's renewal period (10 s).
 */
export const DEFAULT_REPLICA_ACK_TIMEOUT_MS = 500;
