import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { LEASE_MS, SCENARIOS, type LockAdapter } from './adapter.js';
import { closeRedis, connectRedis } from './redis-connection.js';

/** Retry pause of the baseline when the key is taken (only the contended scenario waits). */
const RETRY_MS = 10;
const COMPARE_AND_DELETE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0";

type RawRedis = Redis & { benchCompareAndDelete(key: string, token: string): Promise<number> };

/**
 * The floor: what any correct single-node lock must do at least. Acquire is one `SET key token NX PX`,
 * release one compare-and-delete script (registered with defineCommand, so EVALSHA). Two round trips
 * per cycle and nothing else: no reentrancy, no fencing token, no renewal, no pub/sub; a waiter polls.
 */
export const rawAdapter: LockAdapter = {
  id: 'raw',
  label: 'raw SET NX PX + Lua CAD',
  packageName: '',
  settings: { acquire: 'SET key token NX PX 10000', release: 'EVALSHA compare-and-delete (defineCommand)', retryDelayMs: RETRY_MS, leaseMs: LEASE_MS },
  scenarios: SCENARIOS,
  async open(target) {
    const redis = (await connectRedis(target)) as RawRedis;
    redis.defineCommand('benchCompareAndDelete', { numberOfKeys: 1, lua: COMPARE_AND_DELETE });
    const prefix = randomUUID();
    let sequence = 0;
    return {
      async acquire(key) {
        const token = `${prefix}:${++sequence}`;
        while ((await redis.set(key, token, 'PX', LEASE_MS, 'NX')) !== 'OK') await sleep(RETRY_MS);
        return () => redis.benchCompareAndDelete(key, token);
      },
      close: () => closeRedis(redis),
    };
  },
};
