import type { Redis } from 'ioredis';
import type { LockSession } from '../adapters/adapter.js';
import { ErrorTally, type RunOutcome } from '../scenarios/scenario.js';
import { Samples } from '../stats.js';
import { cpuMsSince, redisDelta, redisSnapshot } from './redis-probe.js';

/**
 * `callers` concurrent callers in this process, each taking a new key every cycle (no contention),
 * for `durationMs` after `warmupMs`: cycles per second, the latency of a cycle (acquire + release),
 * and the CPU it cost this process and Redis (share of one core, and per cycle), the two places where
 * throughput stops growing.
 */
export async function runCallers(
  session: LockSession,
  admin: Redis,
  keyPrefix: string,
  callers: number,
  durationMs: number,
  warmupMs: number,
): Promise<RunOutcome> {
  const errors = new ErrorTally();
  const latencies = new Samples();
  let counting = false;
  const run = async (caller: number, until: number): Promise<void> => {
    for (let i = 0; performance.now() < until; i++) {
      const started = performance.now();
      try {
        const release = await session.acquire(`${keyPrefix}:${caller}:${i}`);
        await release();
        if (counting) latencies.add(performance.now() - started);
      } catch (error) {
        if (counting) errors.record(error);
      }
    }
  };
  if (warmupMs > 0) {
    const until = performance.now() + warmupMs;
    await Promise.all(Array.from({ length: callers }, (_, caller) => run(caller + callers, until)));
  }
  const redisFrom = await redisSnapshot(admin);
  const cpuFrom = process.cpuUsage();
  counting = true;
  const started = performance.now();
  const until = started + durationMs;
  await Promise.all(Array.from({ length: callers }, (_, caller) => run(caller, until)));
  const elapsedMs = performance.now() - started;
  const clientCpuMs = cpuMsSince(cpuFrom);
  const redis = redisDelta(redisFrom, await redisSnapshot(admin));
  const cycles = latencies.count;
  return {
    metrics: {
      callers,
      cyclesPerSec: (cycles / elapsedMs) * 1000,
      p50Ms: latencies.p(50),
      p99Ms: latencies.p(99),
      cycles,
      clientCpuPercent: (clientCpuMs / elapsedMs) * 100,
      redisCpuPercent: (redis.cpuMs / elapsedMs) * 100,
      clientCpuUsPerCycle: cycles ? (clientCpuMs * 1000) / cycles : NaN,
      redisCpuUsPerCycle: cycles ? (redis.cpuMs * 1000) / cycles : NaN,
    },
    errors: errors.toJSON(),
  };
}
