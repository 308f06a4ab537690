import type { Redis } from 'ioredis';
import { LEASE_MS, SCENARIOS, type LockAdapter } from './adapter.js';
import { closeRedis, connectRedis } from './redis-connection.js';

/** The part of the Redlock API (node-redlock and its sesamecare fork share it) that the benchmark uses. */
interface RedlockLock {
  release(): Promise<unknown>;
}
export interface RedlockLike {
  acquire(resources: string[], duration: number): Promise<RedlockLock>;
  on(event: 'error', listener: (error: unknown) => void): unknown;
}
export type RedlockConstructor = new (clients: Redis[], settings: Record<string, number>) => RedlockLike;

/** README defaults of both Redlock packages; only retryCount is changed (-1: retry until acquired). */
export const REDLOCK_SETTINGS = {
  driftFactor: 0.01,
  retryCount: -1,
  retryDelay: 200,
  retryJitter: 200,
  automaticExtensionThreshold: 500,
};

/** A Redlock-API adapter over one ioredis client (one "node"), acquire([key], 10000) / release(). */
export function redlockAdapter(id: string, label: string, packageName: string, load: () => Promise<RedlockConstructor>): LockAdapter {
  return {
    id,
    label,
    packageName,
    scenarios: SCENARIOS,
    settings: {
      ...REDLOCK_SETTINGS,
      note: 'README defaults except retryCount (default 10, here -1 = unlimited); one ioredis client; acquire([name], 10000), release()',
      leaseMs: LEASE_MS,
    },
    async open(target) {
      const Redlock = await load();
      const redis = await connectRedis(target);
      const redlock = new Redlock([redis], { ...REDLOCK_SETTINGS });
      // Redlock reports every failed attempt (a busy resource included) as an 'error' event.
      redlock.on('error', () => undefined);
      return {
        async acquire(key) {
          const lock = await redlock.acquire([key], LEASE_MS);
          return () => lock.release();
        },
        close: () => closeRedis(redis),
      };
    },
  };
}

export const redlockV5Adapter = redlockAdapter('redlock', 'redlock', 'redlock', async () => {
  // redlock 5.0.0-beta.2's "exports" map hides its type declarations: import it untyped.
  const specifier: string = 'redlock';
  const module = (await import(specifier)) as { default: RedlockConstructor };
  return module.default;
});

export const sesameRedlockAdapter = redlockAdapter('sesame-redlock', '@sesamecare-oss/redlock', '@sesamecare-oss/redlock', async () => {
  const module = (await import('@sesamecare-oss/redlock')) as unknown as { Redlock: RedlockConstructor };
  return module.Redlock;
});
