import type { Redis } from 'ioredis';
import { LEASE_MS, SCENARIOS, type LockAdapter } from './adapter.js';
import { closeRedis, connectRedis } from './redis-connection.js';

interface UniversalLock {
  acquire(): Promise<unknown>;
  release(handle: unknown): Promise<unknown>;
}
interface UniversalModule {
  IoredisAdapter: new (client: Redis) => unknown;
  createLock(config: Record<string, unknown>): UniversalLock;
}

/** retryAttempts' README default is 3; this many attempts 100 ms apart never run out in a benchmark. */
const RETRY_ATTEMPTS = 1_000_000_000;

/** redlock-universal's createLock (simple, single-node lock), one lock object per acquisition. */
export const redlockUniversalAdapter: LockAdapter = {
  id: 'redlock-universal',
  label: 'redlock-universal',
  packageName: 'redlock-universal',
  scenarios: SCENARIOS,
  settings: {
    ttl: LEASE_MS,
    retryAttempts: RETRY_ATTEMPTS,
    retryDelay: 100,
    performance: 'standard (default)',
    circuitBreaker: 'enabled (default)',
    note: 'README defaults except ttl (default 30000, here 10000 like everyone) and retryAttempts (default 3); createLock({ adapter: new IoredisAdapter(client), key }) per acquisition',
  },
  async open(target) {
    const module = (await import('redlock-universal')) as unknown as UniversalModule;
    const redis = await connectRedis(target);
    const adapter = new module.IoredisAdapter(redis);
    return {
      async acquire(key) {
        const lock = module.createLock({ adapter, key, ttl: LEASE_MS, retryAttempts: RETRY_ATTEMPTS });
        const handle = await lock.acquire();
        return () => lock.release(handle);
      },
      close: () => closeRedis(redis),
    };
  },
};
