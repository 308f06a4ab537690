import type * as Ioredis from 'ioredis';
import { InvalidLockConfigError } from '../errors/invalid-lock-config.error.js';
import { requireIoredis } from './ioredis.require.cjs';

let ioredis: typeof Ioredis | undefined;

/**
 * ioredis, loaded the first time the library makes connections of its own (the `connection` option,
 * or the DISTRIBUTED_LOCK_REDIS_* variables when no `client` is given): ioredis is an optional peer,
 * which an application that passes its own client (node-redis, Valkey GLIDE, iovalkey, the in-memory
 * store) need not install. Without it, a configuration error that says so.
 */
export function loadIoredis(): typeof Ioredis {
  if (ioredis) return ioredis;
  try {
    ioredis = requireIoredis();
  } catch (error) {
    if (!isMissingModule(error, 'ioredis')) throw error;
    throw new InvalidLockConfigError(
      'connection',
      'the lock client makes its own Redis connections with ioredis (from the `connection` option, or from the DISTRIBUTED_LOCK_REDIS_* variables when neither `connection` nor `client` is given), and ioredis is not installed. Install it (npm install ioredis), or give a client you made as `client` (node-redis, Valkey GLIDE, iovalkey).',
    );
  }
  return ioredis;
}

/** Whether `error` says that the package `name` itself cannot be found (not one of its own dependencies). */
function isMissingModule(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'MODULE_NOT_FOUND' && typeof message === 'string' && message.split('\n', 1)[0]!.includes(`'${name}'`);
}
