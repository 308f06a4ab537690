import type { RedisOptions } from 'ioredis';
import type { CommonConnectionConfig } from '../config/connection-config.js';

/**
 * The ioredis options every connection we create starts from:
 * - lazyConnect, so start-up can connect explicitly and report failure instead of retrying forever;
 * - no auto-pipelining: with it, ioredis sends each script call as EVAL with the whole Lua text and
 *   builds a pipeline per event-loop turn, which costs more than the round trips it shares (measured
 *   in `npm run bench`); set `redisOptions.enableAutoPipelining` to turn it on anyway;
 * - few retries per command, so an unreachable Redis turns into a typed error quickly (waiters keep
 *   retrying on their own, bounded by their wait time);
 * - a short disconnect timeout: ioredis otherwise keeps a 2 s timer alive after disconnecting a
 *   socket that had already failed, which holds the process open after app.close().
 */
export function baseRedisOptions(config: CommonConnectionConfig): RedisOptions {
  const options: RedisOptions = {
    lazyConnect: true,
    enableAutoPipelining: false,
    maxRetriesPerRequest: 2,
    connectTimeout: 5000,
    disconnectTimeout: 100,
  };
  if (config.username !== undefined) options.username = config.username;
  if (config.password !== undefined) options.password = config.password;
  if (config.tls === true) options.tls = {};
  else if (config.tls) options.tls = { ...config.tls };
  return { ...options, ...config.redisOptions };
}
