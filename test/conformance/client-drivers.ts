import { LockClient, type LockClientOptions } from 'nestjs-distributed-lock';
import * as nodeRedis6 from 'redis';
import * as nodeRedis5 from 'redis5';
import type { Topology } from 'redis-topology';

/** Which client library the conformance suite's lock clients run on (as the lock client names it in its `target`). */
export type DriverName = 'ioredis' | 'node-redis' | 'valkey-glide';

/** The few plain commands the suites send for their own data (counters, logs), whatever the client library. */
export interface DataCommands {
  get(key: string): Promise<string | null>;
  set(key: string, value: string | number): Promise<unknown>;
  rpush(key: string, value: string): Promise<unknown>;
  llen(key: string): Promise<number>;
  lrange(key: string, start: number, stop: number): Promise<string[]>;
}

/** Counts the sends of one script (by its SHA) on a lock client's connection, until restored. */
export interface ScriptSendCounter {
  readonly count: number;
  restore(): void;
}

/** A lock client of the suite, and what closes what it was made on (after the lock client). */
export interface DriverClient {
  readonly client: LockClient;
  close(): Promise<void>;
}

/**
 * How the suite makes a lock client of a topology, and reaches the connection underneath. ioredis:
 * the library's own connections, configured from the topology's environment variables. node-redis:
 * a client made and connected here (createClient, createCluster or createSentinel, as an application
 * would), given to the lock client as `options.client`, and closed after it.
 */
export interface ClientDriver {
  readonly name: DriverName;
  /** The client library and its major version, for test titles: 'node-redis 5'. */
  readonly label: string;
  /** The lock client's `target` on it (undefined: the library's own connections, whose target names the mode). */
  readonly target?: string;
  connect(topology: Topology, overrides: Omit<LockClientOptions, 'env' | 'connection'>): Promise<DriverClient>;
  data(client: LockClient): DataCommands;
  countScriptSends(client: LockClient, sha: string): ScriptSendCounter;
}

/** Replaces `object[method]` with a wrapper that counts the calls `matches` accepts. */
export function countCalls(object: object, method: string, matches: (args: unknown[]) => boolean): ScriptSendCounter {
  const target = object as Record<string, (...args: unknown[]) => unknown>;
  const original = target[method]!;
  let count = 0;
  target[method] = function (this: unknown, ...args: unknown[]) {
    if (matches(args)) count += 1;
    return original.apply(this, args);
  };
  return {
    get count() {
      return count;
    },
    restore: () => {
      target[method] = original;
    },
  };
}

export const IOREDIS: ClientDriver = {
  name: 'ioredis',
  label: 'ioredis',
  async connect(topology, overrides) {
    const client = await LockClient.connect({ ...overrides, env: topology.env });
    return { client, close: () => client.close() };
  },
  // An ioredis client (or the in-memory store) has these commands itself.
  data: (client) => client.redis as unknown as DataCommands,
  countScriptSends: (client, sha) => countCalls(client.redis, 'evalsha', (args) => args[0] === sha),
};

/** A node-redis connection as the suite drives it: opened here, closed after the lock client. */
interface NodeRedisConnection {
  connect(): Promise<unknown>;
  close(): Promise<unknown>;
  on(event: string, listener: () => void): unknown;
}

type NodeSocket = { host: string; port: number };

/** What the suite uses of a node-redis major: its three factories (5 and 6 take the same options here). */
interface NodeRedisLibrary {
  createClient(options: { socket: NodeSocket }): NodeRedisConnection;
  createCluster(options: { rootNodes: { socket: NodeSocket }[] }): NodeRedisConnection;
  createSentinel(options: { name: string; sentinelRootNodes: NodeSocket[] }): NodeRedisConnection;
}

/** The node-redis client, cluster or sentinel of a topology, not connected yet, made with `library`. */
function nodeRedisFor(library: NodeRedisLibrary, topology: Topology): NodeRedisConnection {
  const [first] = topology.servers;
  switch (topology.mode) {
    case 'single':
      return library.createClient({ socket: { host: first!.host, port: first!.port } });
    case 'cluster':
      return library.createCluster({ rootNodes: topology.servers.slice(0, 3).map((server) => ({ socket: { host: server.host, port: server.port } })) });
    case 'sentinel':
      return library.createSentinel({
        name: topology.env.DISTRIBUTED_LOCK_REDIS_SENTINEL_MASTER!,
        sentinelRootNodes: topology.sentinels.map((sentinel) => ({ host: sentinel.host, port: sentinel.port })),
      });
    default:
      throw new Error(`no node-redis client for ${topology.mode} mode: the library makes its own (ioredis) connections there`);
  }
}

/** node-redis' commands, camel-cased, behind the suites' names. */
interface NodeRedisData {
  get(key: string): Promise<string | null>;
  set(key: string, value: string): Promise<unknown>;
  rPush(key: string, value: string): Promise<number>;
  lLen(key: string): Promise<number>;
  lRange(key: string, start: number, stop: number): Promise<string[]>;
}

/** Lock clients on a node-redis client of `library` (the `redis` package of one major), in its default settings. */
function nodeRedisDriver(label: string, library: NodeRedisLibrary): ClientDriver {
  return {
    name: 'node-redis',
    label,
    target: 'the node-redis client given in options.client',
    connect: async (topology, overrides) => connectNodeRedis(nodeRedisFor(library, topology), overrides),
    data: nodeRedisData,
    countScriptSends: countNodeRedisScriptSends,
  };
}

async function connectNodeRedis(native: NodeRedisConnection, overrides: Omit<LockClientOptions, 'env' | 'connection'>): Promise<DriverClient> {
  // node-redis throws an 'error' event nobody listens to; the lock client reports its own.
  native.on('error', () => undefined);
  await native.connect();
  try {
    const client = await LockClient.connect({ ...overrides, client: native as never });
    return {
      client,
      close: async () => {
        await client.close();
        await native.close();
      },
    };
  } catch (error) {
    await native.close();
    throw error;
  }
}

function nodeRedisData(client: LockClient): DataCommands {
  const native = client.redis as unknown as NodeRedisData;
  return {
    get: (key) => native.get(key),
    set: (key, value) => native.set(key, String(value)),
    rpush: (key, value) => native.rPush(key, value),
    llen: (key) => native.lLen(key),
    lrange: (key, start, stop) => native.lRange(key, start, stop),
  };
}

/** Every command goes through sendCommand; its arguments are the one array among the parameters. */
function countNodeRedisScriptSends(client: LockClient, sha: string): ScriptSendCounter {
  return countCalls(client.redis, 'sendCommand', (args) => {
    const command = args.find(Array.isArray) as string[] | undefined;
    return command?.[0] === 'EVALSHA' && command[1] === sha;
  });
}

/** node-redis 6, the current major (RESP3 by default): the whole suite in single mode, its core in cluster and sentinel mode. */
export const NODE_REDIS: ClientDriver = nodeRedisDriver('node-redis 6', nodeRedis6);

/** node-redis 5 (RESP2 by default), the peer range's older major (the `redis5` alias of the workspace): the core. */
export const NODE_REDIS_5: ClientDriver = nodeRedisDriver('node-redis 5', nodeRedis5);
