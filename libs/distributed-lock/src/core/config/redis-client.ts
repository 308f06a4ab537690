import type { Cluster, Redis } from 'ioredis';

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
