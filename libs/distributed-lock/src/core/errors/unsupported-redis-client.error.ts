import { DistributedLockError } from './distributed-lock.error.js';

/**
 * A Redis client of a kind the library recognises but cannot run on (Valkey GLIDE, a node-redis
 * pool, node-redis 4 or its legacy mode), or something asked of a client that its kind does not have
 * (`LockClient.redis`, the ioredis connection, on a node-redis client).
 */
export class UnsupportedRedisClientError extends DistributedLockError {
  readonly code = 'LOCK_UNSUPPORTED_CLIENT' as const;

  constructor(
    readonly client: string,
    remedy: string,
  ) {
    super(`${client}: ${remedy}`);
  }
}
