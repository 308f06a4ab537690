import type { LockAdapter } from './adapter.js';
import { nodeRedissonAdapter } from './node-redisson.adapter.js';
import { ourAdapters } from './ours.adapter.js';
import { rawAdapter } from './raw.adapter.js';
import { redisSemaphoreAdapter, redisSemaphoreSemaphoreAdapter } from './redis-semaphore.adapter.js';
import { redlockUniversalAdapter } from './redlock-universal.adapter.js';
import { redlockV5Adapter, sesameRedlockAdapter } from './redlock.adapter.js';

export * from './adapter.js';

/** Every row of the benchmark, in table order: the baseline, ours (and its family), then the peers. */
export const ADAPTERS: readonly LockAdapter[] = [
  rawAdapter,
  ...ourAdapters,
  redlockV5Adapter,
  sesameRedlockAdapter,
  redisSemaphoreAdapter,
  redlockUniversalAdapter,
  nodeRedissonAdapter,
  redisSemaphoreSemaphoreAdapter,
];

/** The lock peers (semaphore rows are compared among themselves, see compareSemaphores). */
export const PEER_IDS: readonly string[] = ADAPTERS.filter((a) => a.packageName && a.packageName !== 'nestjs-distributed-lock' && !a.primitive).map(
  (a) => a.id,
);

export function adapterById(id: string): LockAdapter {
  const adapter = ADAPTERS.find((a) => a.id === id);
  if (!adapter) throw new Error(`unknown library "${id}"; known: ${ADAPTERS.map((a) => a.id).join(', ')}`);
  return adapter;
}
