import type { Redis } from 'ioredis';
import { CouldNotRun } from '../adapters/adapter.js';
import type { RunOutcome } from '../scenarios/scenario.js';
import { holderFor, type HoldSession } from './holders.js';
import { adminConnection, forEachConcurrently, sleep } from './job-helpers.js';
import type { MemoryJob } from './protocol.js';
import { heapAfterGc, redisSnapshot } from './redis-probe.js';

const CONCURRENCY = 256;
/** Keys whose MEMORY USAGE is averaged. */
const SAMPLED_KEYS = 50;
/** A long period: nothing renews or expires while memory is measured. */
const PERIOD_MS = 600_000;

const name = (i: number): string => `bench:memory:${i}`;

/** used_memory once the server has settled (client buffers of the last replies drained). */
async function usedMemory(admin: Redis): Promise<number> {
  await sleep(100);
  return (await redisSnapshot(admin)).usedMemory;
}

async function averageMemoryUsage(admin: Redis, keys: string[]): Promise<number> {
  const sizes = await Promise.all(keys.map((key) => admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0') as Promise<number | null>));
  const found = sizes.filter((size): size is number => typeof size === 'number');
  return found.length ? found.reduce((a, b) => a + b, 0) / found.length : NaN;
}

/**
 * What names leave behind once released: `locks` names locked and released in turn (never more than
 * CONCURRENCY held), then used_memory per name and the distinct fencing counters they drew from (ours:
 * one per key prefix, or per cluster slot, whatever the number of names), and whether a counter that is
 * gone (expired, evicted, lost) is overtaken by the next token.
 */
async function leftBehind(admin: Redis, session: HoldSession, locks: number): Promise<Record<string, number>> {
  const nameOf = (i: number): string => `bench:memory:name:${i}`;
  const before = await usedMemory(admin);
  await forEachConcurrently(locks, CONCURRENCY, async (i) => (await session.hold(nameOf(i))).release());
  const after = await usedMemory(admin);
  const fences = [...new Set(Array.from({ length: locks }, (_, i) => session.keysOf(nameOf(i)).fence!))];
  const last = Number(await admin.get(fences[0]!));
  await admin.del(fences[0]!);
  const again = await session.hold(nameOf(0));
  await again.release();
  return {
    redisBytesPerNameLeft: (after - before) / locks,
    fenceCounters: fences.length,
    // 1 when the token drawn after the counter was deleted is still above the last one issued.
    tokenIncreasesAfterCounterLoss: again.token !== undefined && again.token > last ? 1 : 0,
  };
}

/**
 * Holds `locks` locks at once and reads Redis's used_memory before and while they are held, plus
 * MEMORY USAGE of a sample of the lock keys, and this process's heap per held lock. For a library with
 * fencing counters (ours), first what released names leave behind (see `leftBehind`).
 */
export async function runMemoryJob(job: MemoryJob): Promise<RunOutcome> {
  const holder = holderFor(job.library);
  if (!holder) throw new CouldNotRun(`${job.library}: no hold implementation in the scaling set`);
  const admin = await adminConnection(job.target);
  const session = await holder.open(job.target, PERIOD_MS);
  await (await session.hold('bench:memory:warm-up')).release();
  const counterMetrics = session.keysOf('x').fence === undefined ? { redisBytesPerNameLeft: 0, fenceCounters: 0 } : await leftBehind(admin, session, job.locks);

  const keysBefore = await admin.dbsize();
  const before = await usedMemory(admin);
  const heapBefore = heapAfterGc();
  const held = await forEachConcurrently(job.locks, CONCURRENCY, (i) => session.hold(name(i)));
  const whileHeld = await usedMemory(admin);
  const heapHeld = heapAfterGc();
  const keysHeld = (await admin.dbsize()) - keysBefore;
  const sampled = Array.from({ length: Math.min(SAMPLED_KEYS, job.locks) }, (_, i) => session.keysOf(name(i)).lock);
  const lockKeyBytes = await averageMemoryUsage(admin, sampled);
  await forEachConcurrently(job.locks, CONCURRENCY, (i) => held[i]!.release());
  const keysLeft = (await admin.dbsize()) - keysBefore;
  admin.disconnect();
  return {
    metrics: {
      locks: job.locks,
      redisBytesPerHeldLock: (whileHeld - before) / job.locks,
      lockKeyBytes,
      keysPerHeldLock: keysHeld / job.locks,
      keysLeftPerName: keysLeft / job.locks,
      heapBytesPerHeldLock: (heapHeld - heapBefore) / job.locks,
      ...counterMetrics,
    },
    errors: { errors: 0 },
  };
}
