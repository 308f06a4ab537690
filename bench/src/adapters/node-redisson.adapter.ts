import { LEASE_MS, SCENARIOS, type LockAdapter } from './adapter.js';

interface RLockLike {
  lock(leaseTime: number, unit: unknown): Promise<void>;
  unlock(): Promise<void>;
}
interface RedissonModule {
  Redisson: new (config: Record<string, unknown>) => { getLock(name: string): RLockLike; quit(): Promise<void>; redis: { ping(): Promise<unknown> } };
  TimeUnit: { MILLISECONDS: unknown };
}

/** node-redisson's RLock, one lock object (so one random client id, i.e. one owner) per acquisition. */
export const nodeRedissonAdapter: LockAdapter = {
  id: 'node-redisson',
  label: 'node-redisson',
  packageName: 'node-redisson',
  scenarios: SCENARIOS,
  settings: {
    eventAdapter: 'pubsub (default)',
    lockWatchdogTimeout: '30000 (default; not used with a lease)',
    leaseMs: LEASE_MS,
    note: 'README defaults; lock(10000, MILLISECONDS) waits without limit (pub/sub wake-up); getLock(name) per acquisition',
  },
  async open(target) {
    const { Redisson, TimeUnit } = (await import('node-redisson')) as unknown as RedissonModule;
    const redisson = new Redisson({ redis: { options: { host: target.host, port: target.port } } });
    await redisson.redis.ping();
    return {
      async acquire(key) {
        const lock = redisson.getLock(key);
        await lock.lock(LEASE_MS, TimeUnit.MILLISECONDS);
        return () => lock.unlock();
      },
      close: () => redisson.quit(),
    };
  },
};
