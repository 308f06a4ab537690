import type { RedisClient } from '../config/redis-client.js';
import type { RedisMode } from '../config/connection-config.js';

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
