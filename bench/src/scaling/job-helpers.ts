import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { RedisTarget } from '../adapters/adapter.js';
import { ADMIN_NAME } from './protocol.js';

export { sleep };

/** Below this many locks or waiters a per-unit memory figure is noise (one-off allocations of first use): not reported. */
export const PER_UNIT_MIN = 100;

/** A connection for INFO, CLIENT LIST and MEMORY USAGE, named so that connection counts leave it out. */
export async function adminConnection(target: RedisTarget): Promise<Redis> {
  const admin = new Redis({ host: target.host, port: target.port, connectionName: ADMIN_NAME });
  await admin.ping();
  return admin;
}

/** Runs `task(i)` for i = 0 .. count - 1, at most `concurrency` at a time; results in index order. */
export async function forEachConcurrently<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

/** Resolves once `done()` is true (checked every `everyMs`), or rejects after `timeoutMs`. */
export async function until(done: () => boolean, timeoutMs: number, what: string, everyMs = 20): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await sleep(everyMs);
  }
}
