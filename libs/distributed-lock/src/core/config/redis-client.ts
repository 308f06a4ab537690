import type { Cluster, Redis } from 'ioredis';

/** Any ioredis connection the library can run lock scripts on. */
export type RedisClient = Redis | Cluster;

/**
 * A client with ioredis' API that a user may pass as the `client` option: an ioredis `Redis` or
 * `Cluster`, or one of a fork such as iovalkey (Valkey's ioredis). Listed here is only what tells
 * such a client apart (defineCommand is an ioredis method the library does not call: it sends its
 * scripts as EVALSHA with an EVAL fallback, see LockNode); the library uses it as it uses ioredis (one
 * extra connection from `duplicate()`), and the conformance and compatibility tests run it so.
 */
export interface RedisCompatibleClient {
  readonly isCluster: boolean;
  readonly status: string;
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  duplicate(...args: never[]): unknown;
}

/**
 * A node-redis (the `redis` package, 5 or 6) client, cluster or sentinel, as `createClient`,
 * `createCluster` and `createSentinel` make them, connected (`await client.connect()`) before the lock
 * client connects. Listed here is only what tells them apart: the library does not depend on
 * node-redis (an optional peer), so neither its code nor its types load it. The library runs its
 * scripts on it and subscribes through one extra connection (a `duplicate()` of a client or cluster;
 * a sentinel's own subscriber); it never closes your client.
 */
export interface NodeRedisCompatibleClient {
  readonly isOpen: boolean;
  sendCommand(...args: never[]): unknown;
  withTypeMapping(...args: never[]): unknown;
}

/**
 * A Valkey GLIDE client as the lock client created it from GlideClientSettings: a `GlideClient` or
 * `GlideClusterClient` of your `@valkey/valkey-glide` (see LockClient.redis). Typed by shape, as the
 * library does not depend on GLIDE: narrow it to your GLIDE class.
 */
export interface GlideCommandClient {
  customCommand(...args: never[]): unknown;
  close(...args: never[]): unknown;
}

/**
 * What `LockClient.redis` returns: the client the lock scripts run on, as it is (RedLock: the first
 * node's). Which one depends on what the lock client was given, so narrow it to yours:
 * - an ioredis `Redis` or `Cluster` (RedisClient): the connection the library made (the `connection`
 *   option, `DISTRIBUTED_LOCK_REDIS_*`), or the ioredis client you passed;
 * - another client with ioredis' API that you passed (RedisCompatibleClient): iovalkey's, or the
 *   `InMemoryLockStore` of `nestjs-distributed-lock/testing`;
 * - your node-redis client, cluster or sentinel, as you passed it (NodeRedisCompatibleClient);
 * - with GLIDE settings, the GLIDE client the library created (GlideCommandClient), or, before
 *   `connect()`, the settings themselves (there is no client yet).
 */
export type LockClientRedis = RedisClient | RedisCompatibleClient | NodeRedisCompatibleClient | GlideCommandClient | GlideClientSettings;

/**
 * Valkey GLIDE (`@valkey/valkey-glide` 2.3 or later), as the `client` option: the client class,
 * `GlideClient` (standalone) or `GlideClusterClient`, and the configuration you would give its
 * `createClient`. The lock client creates two clients from them, one for its commands and one for
 * unlock notifications (GLIDE delivers pub/sub messages only to a callback set when a client is
 * created, and a client can neither be duplicated nor tell its configuration), and closes both.
 * `requestTimeout`, if the configuration has none, is the operation timeout (not GLIDE's 250 ms).
 * Typed structurally: the library does not depend on GLIDE (an optional peer).
 */
export interface GlideClientSettings {
  /** `GlideClient` or `GlideClusterClient`, from your `@valkey/valkey-glide`. */
  readonly glide: { createClient(configuration: never): Promise<object>; readonly prototype: object };
  /** What `createClient` takes: `addresses`, credentials, `useTLS`, `requestTimeout`... */
  readonly configuration: { readonly addresses: readonly { readonly host: string; readonly port?: number }[]; readonly [option: string]: unknown };
}
