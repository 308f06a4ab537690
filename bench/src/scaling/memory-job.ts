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
/** The expiry tried on the counters left behind, to measure what a TTL adds to each (one day). */
export const COUNTER_TTL_MS = 86_400_000;

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
 * Our fencing counters: `locks` names locked and released in turn (never more than CONCURRENCY held),
 * so that only their counters stay, in a keyspace sized for them; then what a TTL on each adds while it
 * lives, and whether a counter that is gone (expired, evicted, lost) is overtaken by the next token.
 */
async function counters(admin: Redis, session: HoldSession, locks: number): Promise<Record<string, number>> {
  const counterName = (i: number): string => `bench:memory:counter:${i}`;
  const fences = Array.from({ length: locks }, (_, i) => session.keysOf(counterName(i)).fence!);
  const before = await usedMemory(admin);
  await forEachConcurrently(locks, CONCURRENCY, async (i) => (await session.hold(counterName(i))).release());
  const withoutTtl = await usedMemory(admin);
  for (let i = 0; i < fences.length; i += 10_000) {
    const pipeline = admin.pipeline();
    for (const fence of fences.slice(i, i + 10_000)) pipeline.pexpire(fence, COUNTER_TTL_MS);
    await pipeline.exec();
  }
  const withTtl = await usedMemory(admin);
  const last = Number(await admin.get(fences[0]!));
  await admin.del(fences[0]!);
  const again = await session.hold(counterName(0));
  await again.release();
  const perCounter = (withoutTtl - before) / locks;
  return {
    redisBytesPerCounter: perCounter,
    redisBytesPerCounterWithTtl: (withTtl - before) / locks,
    counterKeyBytes: await averageMemoryUsage(admin, fences.slice(1, SAMPLED_KEYS + 1)),
    bytesPerMillionNames: perCounter * 1e6,
    // 1 when the token drawn after the counter was deleted is still above the last one issued.
    tokenIncreasesAfterCounterLoss: again.token !== undefined && again.token > last ? 1 : 0,
  };
}

/**
 * Holds `locks` locks at once and reads Redis's used_memory before and while they are held, plus
 * MEMORY USAGE of a sample of the lock keys, and this process's heap per held lock. For a library with
 * fencing counters (ours), first the counters alone (see `counters`).
 */
export async function runMemoryJob(job: MemoryJob): Promise<RunOutcome> {
  const holder = holderFor(job.library);
  if (!holder) throw new CouldNotRun(`${job.library}: no hold implementation in the scaling set`);
  const admin = await adminConnection(job.target);
  const session = await holder.open(job.target, PERIOD_MS);
  await (await session.hold('bench:memory:warm-up')).release();
  const counterMetrics =
    session.keysOf('x').fence === undefined ? { redisBytesPerCounter: 0, bytesPerMillionNames: 0 } : await counters(admin, session, job.locks);

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
