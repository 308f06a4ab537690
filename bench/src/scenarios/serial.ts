import type { LockSession } from '../adapters/adapter.js';
import { Samples } from '../stats.js';
import { ErrorTally, type RunOutcome } from './scenario.js';

/**
 * One caller, a new key every cycle: acquire, release, as fast as it goes for `durationMs` (after
 * `warmup` cycles that are not counted). The latency of a cycle is acquire + release.
 */
export async function runSerial(session: LockSession, keyPrefix: string, durationMs: number, warmup: number): Promise<RunOutcome> {
  const errors = new ErrorTally();
  let sequence = 0;
  const cycle = async (): Promise<void> => {
    const release = await session.acquire(`${keyPrefix}:${sequence++}`);
    await release();
  };
  for (let i = 0; i < warmup; i++) await cycle().catch((error: unknown) => errors.record(error));
  const warmupErrors = errors.errors;
  const latencies = new Samples();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;
  let now = started;
  while (now < deadline) {
    const begin = now;
    try {
      await cycle();
      now = performance.now();
      latencies.add(now - begin);
    } catch (error) {
      errors.record(error);
      now = performance.now();
    }
  }
  const elapsed = now - started;
  const cpu = process.cpuUsage(cpuBefore);
  return {
    metrics: {
      cyclesPerSec: (latencies.count / elapsed) * 1000,
      p50Ms: latencies.p(50),
      p99Ms: latencies.p(99),
      cycles: latencies.count,
      /** CPU time of this (client) process per cycle, user + system, in microseconds. */
      clientCpuUsPerCycle: latencies.count ? (cpu.user + cpu.system) / latencies.count : NaN,
      warmupErrors,
    },
    errors: errors.toJSON(),
  };
}
