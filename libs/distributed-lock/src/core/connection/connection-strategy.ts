import type { Cluster, Redis } from 'ioredis';
import type { RedisMode } from './connection-config.js';

/** Any ioredis connection the library can run lock scripts on. */
export type RedisClient = Redis | Cluster;

/**
 * How to reach Redis in one deployment mode. One implementation per mode; the client picks it from
 * configuration, so application code never changes between modes.
 */
export interface ConnectionStrategy {
  readonly mode: RedisMode;
  /** Where we connect and which setting said so, for error messages. */
  readonly target: string;
  /** Unlock notifications over sharded pub/sub (SPUBLISH/SSUBSCRIBE) instead of PUBLISH/SUBSCRIBE. */
  readonly shardedPubSub: boolean;
  /** The connection that runs lock scripts. Created with lazyConnect; the client connects it. */
  createCommandClient(): RedisClient;
  /** A separate connection for subscriptions (a subscribed connection cannot run commands). */
  createSubscriberClient(command: RedisClient): RedisClient;
}
