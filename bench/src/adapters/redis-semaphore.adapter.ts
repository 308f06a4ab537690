import type { Redis } from 'ioredis';
import { LEASE_MS, SCENARIOS, SEMAPHORE_PERMITS, SEMAPHORE_SCENARIOS, type LockAdapter } from './adapter.js';
import { closeRedis, connectRedis } from './redis-connection.js';

interface MutexLike {
  acquire(): Promise<void>;
  release(): Promise<void>;
}
type MutexConstructor = new (client: Redis, key: string, options: Record<string, number>) => MutexLike;
type SemaphoreConstructor = new (client: Redis, key: string, limit: number, options: Record<string, number>) => MutexLike;

/** acquireTimeout's README default is 10 s; a day is "unbounded" for a benchmark. */
const ACQUIRE_TIMEOUT_MS = 24 * 3600 * 1000;

/** redis-semaphore's Mutex, one object per acquisition (a Mutex is bound to its key). */
export const redisSemaphoreAdapter: LockAdapter = {
  id: 'redis-semaphore',
  label: 'redis-semaphore (Mutex)',
  packageName: 'redis-semaphore',
  scenarios: SCENARIOS,
  settings: {
    lockTimeout: LEASE_MS,
    acquireTimeout: ACQUIRE_TIMEOUT_MS,
    acquireAttemptsLimit: 'Infinity (default)',
    retryInterval: 10,
    refreshInterval: 8000,
    note: 'README defaults (lockTimeout 10000, retryInterval 10, refreshInterval = 0.8 x lockTimeout) except acquireTimeout (default 10000, here one day); new Mutex(client, name) per acquisition',
  },
  async open(target) {
    const { Mutex } = (await import('redis-semaphore')) as unknown as { Mutex: MutexConstructor };
    const redis = await connectRedis(target);
    return {
      async acquire(key) {
        const mutex = new Mutex(redis, key, { lockTimeout: LEASE_MS, acquireTimeout: ACQUIRE_TIMEOUT_MS });
        await mutex.acquire();
        return () => mutex.release();
      },
      close: () => closeRedis(redis),
    };
  },
};

/** redis-semaphore's Semaphore (one permit per acquisition), one object per acquisition, against our semaphore. */
export const redisSemaphoreSemaphoreAdapter: LockAdapter = {
  id: 'redis-semaphore-semaphore',
  label: 'redis-semaphore (Semaphore)',
  packageName: 'redis-semaphore',
  scenarios: SEMAPHORE_SCENARIOS,
  primitive: 'semaphore',
  settings: {
    limit: SEMAPHORE_PERMITS,
    lockTimeout: LEASE_MS,
    acquireTimeout: ACQUIRE_TIMEOUT_MS,
    acquireAttemptsLimit: 'Infinity (default)',
    retryInterval: 10,
    refreshInterval: 8000,
    note: `README defaults except acquireTimeout (one day, as for the Mutex row); new Semaphore(client, name, ${SEMAPHORE_PERMITS}) per acquisition, one permit each`,
  },
  async open(target) {
    const { Semaphore } = (await import('redis-semaphore')) as unknown as { Semaphore: SemaphoreConstructor };
    const redis = await connectRedis(target);
    return {
      async acquire(key) {
        const semaphore = new Semaphore(redis, key, SEMAPHORE_PERMITS, { lockTimeout: LEASE_MS, acquireTimeout: ACQUIRE_TIMEOUT_MS });
        await semaphore.acquire();
        return () => semaphore.release();
      },
      close: () => closeRedis(redis),
    };
  },
};
