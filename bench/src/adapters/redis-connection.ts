import { Redis } from 'ioredis';
import type { RedisTarget } from './adapter.js';

/** A plain ioredis connection with ioredis' defaults, connected (PING answered) before it is used. */
export async function connectRedis(target: RedisTarget): Promise<Redis> {
  const redis = new Redis({ host: target.host, port: target.port });
  await redis.ping();
  return redis;
}

/** Closes a connection opened by `connectRedis`, tolerating one that is already gone. */
export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
