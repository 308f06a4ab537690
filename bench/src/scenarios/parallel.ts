import type { LockSession } from '../adapters/adapter.js';
import { ErrorTally, type RunOutcome } from './scenario.js';

/**
 * `callers` concurrent callers in this process, each taking a new key every cycle (no contention):
 * how many acquire + release cycles the library completes per second when many are in flight.
 */
export async function runParallel(session: LockSession, keyPrefix: string, callers: number, durationMs: number, warmupMs: number): Promise<RunOutcome> {
  const errors = new ErrorTally();
  let cycles = 0;
  let counting = false;
  const run = async (caller: number, until: number): Promise<void> => {
    for (let i = 0; performance.now() < until; i++) {
      try {
        const release = await session.acquire(`${keyPrefix}:${caller}:${i}`);
        await release();
        if (counting) cycles += 1;
      } catch (error) {
        if (counting) errors.record(error);
      }
    }
  };
  if (warmupMs > 0) {
    const until = performance.now() + warmupMs;
    await Promise.all(Array.from({ length: callers }, (_, caller) => run(caller + callers, until)));
  }
  counting = true;
  const started = performance.now();
  const until = started + durationMs;
  await Promise.all(Array.from({ length: callers }, (_, caller) => run(caller, until)));
  const elapsed = performance.now() - started;
  return { metrics: { cyclesPerSec: (cycles / elapsed) * 1000, cycles, callers }, errors: errors.toJSON() };
}
