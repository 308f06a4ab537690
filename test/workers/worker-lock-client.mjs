// The lock client of a worker process, from the environment: REDIS_* (any mode) for the library's own
// ioredis connections; with LOCK_TEST_CLIENT=node-redis, a node-redis client, cluster or sentinel made
// here from the same variables and given as `client` (single, cluster, sentinel). `data` is the
// connection's plain GET/SET for the worker's own counter, and EVAL (`script`) for its checks.
import { LockClient } from './core.mjs';

const addresses = (list) =>
  list.split(',').map((address) => {
    const at = address.lastIndexOf(':');
    return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
  });

async function nodeRedisFromEnv(env) {
  const { createClient, createCluster, createSentinel } = await import('redis');
  switch (env.DISTRIBUTED_LOCK_REDIS_MODE) {
    case 'single':
      return createClient({ socket: { host: env.DISTRIBUTED_LOCK_REDIS_HOST, port: Number(env.DISTRIBUTED_LOCK_REDIS_PORT) } });
    case 'cluster':
      return createCluster({ rootNodes: addresses(env.DISTRIBUTED_LOCK_REDIS_NODES).map((socket) => ({ socket })) });
    case 'sentinel':
      return createSentinel({ name: env.DISTRIBUTED_LOCK_REDIS_SENTINEL_MASTER, sentinelRootNodes: addresses(env.DISTRIBUTED_LOCK_REDIS_SENTINELS) });
    default:
      throw new Error(`no node-redis client for DISTRIBUTED_LOCK_REDIS_MODE=${env.DISTRIBUTED_LOCK_REDIS_MODE}`);
  }
}

export async function lockClientFromEnv(options = {}, env = process.env) {
  if (env.LOCK_TEST_CLIENT !== 'node-redis') {
    const client = await LockClient.connect(options);
    const redis = client.redis;
    const data = {
      get: (key) => redis.get(key),
      set: (key, value) => redis.set(key, value),
      script: (lua, keys, args) => redis.eval(lua, keys.length, ...keys, ...args),
    };
    return { client, data, status: () => redis.status, close: () => client.close() };
  }
  const native = await nodeRedisFromEnv(env);
  native.on('error', () => undefined); // the lock client reports its own; node-redis throws an unheard one
  await native.connect();
  const client = await LockClient.connect({ ...options, client: native });
  return {
    client,
    data: {
      get: (key) => native.get(key),
      set: (key, value) => native.set(key, String(value)),
      script: (lua, keys, args) => native.eval(lua, { keys, arguments: args.map(String) }),
    },
    status: () => (native.isReady ? 'ready' : native.isOpen ? 'reconnecting' : 'closed'),
    close: async () => {
      await client.close();
      await native.close();
    },
  };
}
