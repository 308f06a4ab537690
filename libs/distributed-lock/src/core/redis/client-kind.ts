import { InvalidLockConfigError } from '../errors/invalid-lock-config.error.js';
import { UnsupportedRedisClientError } from '../errors/unsupported-redis-client.error.js';
import { describe } from '../util/duration.js';
import { GlidePort } from './glide.port.js';
import type { GlideSettingsLike } from './glide.types.js';
import { IoredisPort } from './ioredis.port.js';
import { NodeRedisClientPort, NodeRedisClusterPort, NodeRedisSentinelPort } from './node-redis-kinds.js';
import type { NodeRedisClientLike, NodeRedisClusterLike, NodeRedisSentinelLike } from './node-redis.types.js';
import type { PortedClient, RedisPort } from './redis-port.js';

/** The kinds of client object the library runs on. */
export type RedisClientKind = 'ported' | 'ioredis' | 'node-redis client' | 'node-redis cluster' | 'node-redis sentinel' | 'valkey-glide';

/** Where the supported clients are listed, for error messages. */
const CLIENTS_PAGE = 'see "Redis clients" in the documentation (guides/redis-clients)';

const isFunction = (value: object, name: string): boolean => typeof (value as Record<string, unknown>)[name] === 'function';

/**
 * What kind of client `value` is, told from its members (the library imports no client library to
 * compare classes with, and a user's copy of a package may not be the library's):
 * - a client with its own port (`redisPort()`, see PortedClient): the in-memory store of
 *   `nestjs-distributed-lock/testing`, a simulator's network.
 * - ioredis: `defineCommand` and a `status` text. Also iovalkey (Valkey's fork of ioredis).
 * - node-redis 5 and 6: `sendCommand` and `withTypeMapping` (new in 5); then a sentinel has
 *   `getMasterNode`, a cluster `getMasters` and `nodeClient`, a client `duplicate` and `isReady`.
 * - Valkey GLIDE settings: `{ glide, configuration }`, `glide` a class with `createClient` whose
 *   clients have `customCommand` (GLIDE 2.3+: dynamic `subscribe` and `getSubscriptions` too).
 * Recognised but not supported (UnsupportedRedisClientError, saying why and what to pass instead):
 * a GLIDE client itself (`customCommand`), GLIDE before 2.3, a node-redis pool (`execute`), a client
 * leased from a sentinel (`release`), node-redis 4 and node-redis' legacy mode (no
 * `withTypeMapping`). Anything else is a configuration error.
 */
export function redisClientKind(value: unknown): RedisClientKind {
  if (typeof value !== 'object' || value === null) return unknownClient(value);
  if (isFunction(value, 'redisPort')) return 'ported';
  if (isFunction(value, 'defineCommand') && typeof (value as { status?: unknown }).status === 'string') return 'ioredis';
  if (isGlideSettings(value)) return glideKind(value);
  if (isFunction(value, 'customCommand')) {
    throw new UnsupportedRedisClientError(
      'A Valkey GLIDE client',
      `pass its class and configuration instead, { glide: GlideClient (or GlideClusterClient), configuration }: the lock client creates two GLIDE clients from them, one for its commands and one for unlock notifications (GLIDE delivers messages only to a callback set when a client is created, and a client can neither be duplicated nor tell its configuration), and closes both (${CLIENTS_PAGE}).`,
    );
  }
  if (!isFunction(value, 'sendCommand')) return unknownClient(value);
  if (!isFunction(value, 'withTypeMapping')) {
    throw new UnsupportedRedisClientError(
      'A node-redis 4 client, or a node-redis client in legacy mode',
      'the lock client runs on node-redis 5 or 6, in its default mode. Upgrade node-redis (npm install redis@6), and pass the client itself rather than client.legacy().',
    );
  }
  if (isFunction(value, 'execute')) {
    throw new UnsupportedRedisClientError(
      'A node-redis client pool',
      'the lock client needs one connection (replica acknowledgement counts the writes of the connection that made them). Pass a client made with createClient (the pool can stay for your own commands).',
    );
  }
  if (isFunction(value, 'getMasterNode')) return 'node-redis sentinel';
  if (isFunction(value, 'getMasters') && isFunction(value, 'nodeClient')) return 'node-redis cluster';
  if (isFunction(value, 'duplicate') && 'isReady' in value) return 'node-redis client';
  if (isFunction(value, 'release')) {
    throw new UnsupportedRedisClientError(
      'A client leased from a node-redis sentinel (sentinel.acquire())',
      'pass the sentinel itself (createSentinel): a leased client does not follow a failover once released.',
    );
  }
  return unknownClient(value);
}

/** `{ glide, configuration }`: a class with `createClient`, and a configuration with `addresses`. */
function isGlideSettings(value: object): value is GlideSettingsLike {
  const { glide, configuration } = value as { glide?: unknown; configuration?: unknown };
  return (
    typeof glide === 'function' &&
    isFunction(glide, 'createClient') &&
    typeof configuration === 'object' &&
    configuration !== null &&
    Array.isArray((configuration as { addresses?: unknown }).addresses)
  );
}

function glideKind(settings: GlideSettingsLike): 'valkey-glide' {
  const client = settings.glide.prototype;
  if (!isFunction(client, 'customCommand')) return unknownClient(settings);
  if (!isFunction(client, 'subscribe') || !isFunction(client, 'getSubscriptions')) {
    throw new UnsupportedRedisClientError(
      'Valkey GLIDE before 2.3',
      'the lock client subscribes to unlock channels as waiters need them, which GLIDE clients can do from 2.3 on. Upgrade it (npm install @valkey/valkey-glide@2).',
    );
  }
  return 'valkey-glide';
}

function unknownClient(value: unknown): never {
  throw new InvalidLockConfigError(
    'client',
    `expected an ioredis (or iovalkey) Redis or Cluster, a node-redis client, cluster or sentinel (createClient, createCluster, createSentinel), Valkey GLIDE settings ({ glide: GlideClient or GlideClusterClient, configuration }), or an InMemoryLockStore; got ${describe(value)}.`,
  );
}

/**
 * The port of a lock client's `client` option: over the client the user brought, or, given Valkey
 * GLIDE settings, over the GLIDE clients the library creates from them (`requestTimeout` defaults to
 * `operationTimeoutMs`).
 */
export function lockClientPortOf(client: unknown, operationTimeoutMs: number): RedisPort {
  if (redisClientKind(client) === 'valkey-glide') return new GlidePort(client as GlideSettingsLike, operationTimeoutMs);
  return redisPortOf(client);
}

/** The port over a client the user brought (never opened or closed by the library, except a lazy ioredis client, which it connects). */
export function redisPortOf(client: unknown): RedisPort {
  switch (redisClientKind(client)) {
    case 'ported':
      return (client as PortedClient).redisPort();
    case 'ioredis':
      return new IoredisPort(client as object);
    case 'node-redis client':
      return new NodeRedisClientPort(client as NodeRedisClientLike);
    case 'node-redis cluster':
      return new NodeRedisClusterPort(client as NodeRedisClusterLike);
    case 'node-redis sentinel':
      return new NodeRedisSentinelPort(client as NodeRedisSentinelLike);
    case 'valkey-glide':
      throw new UnsupportedRedisClientError(
        'Valkey GLIDE settings',
        'here the library runs on a connection you made and makes none of its own (FencedResource): give it an ioredis, iovalkey or node-redis connection to that Redis.',
      );
  }
}
