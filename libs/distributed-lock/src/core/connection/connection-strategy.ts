import type { Cluster, Redis } from 'ioredis';
import type { RedisMode } from './connection-config.js';

/** Any ioredis connection the library can run lock scripts on. */
export type RedisClient = Redis | Cluster;

/**
 * A client with ioredis' API that a user may pass as the `client` option: an ioredis `Redis` or
 * `Cluster`, or one of a fork such as iovalkey (Valkey's ioredis). Listed here is only what tells
 * such a client apart; the library uses it as it uses ioredis (scripts with defineCommand and
 * EVALSHA, one extra connection from `duplicate()`), and the conformance and compatibility tests
 * run it so.
 */
export interface RedisCompatibleClient {
  readonly isCluster: boolean;
  readonly status: string;
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  duplicate(...args: never[]): unknown;
}

/**
 * One place lock state lives: a connection that runs the lock scripts, and a separate one for
 * subscriptions (a subscribed connection cannot run commands). Created with lazyConnect.
 */
export interface NodeConnections {
  command: RedisClient;
  subscriber: RedisClient;
  /** Where, for error messages. */
  target: string;
}

/**
 * How to reach Redis in one deployment mode. One implementation per mode; the client picks it from
 * configuration, so application code never changes between modes.
 */
export interface ConnectionStrategy {
  readonly mode: RedisMode;
  /** Where we connect and which setting said so, for error messages. */
  readonly target: string;
  /**
   * Unlock notifications may go over sharded pub/sub (SPUBLISH/SSUBSCRIBE) instead of PUBLISH/SUBSCRIBE
   * (a cluster); they do when the servers have it (Redis 7+), which PubSubSelector asks at connect time.
   */
  readonly shardedPubSub: boolean;
  /** One node for every mode but redlock, which has one per independent master. */
  createNodes(): NodeConnections[];
  /** master-slave only: connections to replicas, for reads that may be stale by design. */
  createReplicaReaders?(): RedisClient[];
}
