/**
 * What the library uses of node-redis (the `redis` package, 5 and 6), typed structurally: neither its code
 * nor its type declarations import node-redis, so an application without it installs and loads
 * nothing of it. `createClient`, `createCluster` and `createSentinel` return objects that have these
 * members (checked by compiling the docs' snippets against node-redis in test/docs).
 */

/** node-redis calls a subscription's listener with the message first. */
export type NodeRedisListener = (message: string, channel: string) => void;

/** Options every command of the library is sent with: node-redis' default reply types (strings, numbers, arrays), whatever type mapping the user's client was given. */
export interface NodeRedisCommandOptions {
  typeMapping: Record<string, never>;
}

interface NodeRedisEvents {
  on(event: string, listener: (...args: never[]) => void): unknown;
  off(event: string, listener: (...args: never[]) => void): unknown;
}

interface NodeRedisPubSub {
  subscribe(channel: string, listener: NodeRedisListener): Promise<unknown>;
  unsubscribe(channel: string, listener: NodeRedisListener): Promise<unknown>;
  sSubscribe(channel: string, listener: NodeRedisListener): Promise<unknown>;
  sUnsubscribe(channel: string, listener: NodeRedisListener): Promise<unknown>;
}

/** A node-redis client (`createClient`): one connection. */
export interface NodeRedisClientLike extends NodeRedisEvents, NodeRedisPubSub {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  sendCommand(args: readonly string[], options?: NodeRedisCommandOptions): Promise<unknown>;
  duplicate(): NodeRedisClientLike;
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): void;
}

/** A cluster master as node-redis' `cluster.masters` lists it. */
export interface NodeRedisMasterNode {
  readonly host: string;
  readonly port: number;
}

/** A node-redis cluster client (`createCluster`): routes each command by its first key. */
export interface NodeRedisClusterLike extends NodeRedisEvents, NodeRedisPubSub {
  readonly isOpen: boolean;
  readonly masters: readonly NodeRedisMasterNode[];
  sendCommand(firstKey: string | undefined, isReadonly: boolean | undefined, args: readonly string[], options?: NodeRedisCommandOptions): Promise<unknown>;
  /** The connected client of one node. */
  nodeClient(node: NodeRedisMasterNode): Promise<NodeRedisClientLike>;
  duplicate(overrides?: { minimizeConnections?: boolean }): NodeRedisClusterLike;
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  destroy(): void;
}

/** A node-redis sentinel client (`createSentinel`): commands go to the current master, subscriptions through its own connection to it. */
export interface NodeRedisSentinelLike extends NodeRedisEvents, NodeRedisPubSub {
  readonly isOpen: boolean;
  readonly isReady: boolean;
  sendCommand(isReadonly: boolean | undefined, args: readonly string[], options?: NodeRedisCommandOptions): Promise<unknown>;
}
