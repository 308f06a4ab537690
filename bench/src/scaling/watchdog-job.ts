import { monitorEventLoopDelay } from 'node:perf_hooks';
import { CouldNotRun } from '../adapters/adapter.js';
import type { RunOutcome } from '../scenarios/scenario.js';
import { DEFAULT_RENEWAL_PERIOD_MS } from './curves.js';
import { holderFor } from './holders.js';
import { adminConnection, forEachConcurrently, PER_UNIT_MIN, sleep, until } from './job-helpers.js';
import type { WatchdogJob } from './protocol.js';
import { cpuMsSince, heapAfterGc, redisDelta, redisSnapshot } from './redis-probe.js';

/** Acquisitions in flight while taking the locks (taking them is not what is measured). */
const HOLD_CONCURRENCY = 256;
/** The event-loop delay histogram samples this often; its values include this period, which is subtracted. */
const LOOP_RESOLUTION_MS = 10;

interface Round {
  start: number;
  end: number;
  renewals: number;
}

/** Renewals grouped by the timer tick that started them: starts further apart than half a period begin a new round. */
function rounds(renewals: readonly [number, number][], after: number, periodMs: number): Round[] {
  const sorted = renewals.filter(([start]) => start >= after).sort((a, b) => a[0] - b[0]);
  const result: Round[] = [];
  let current: Round | undefined;
  for (const [start, end] of sorted) {
    if (!current || start - current.start > periodMs / 2) {
      current = { start, end, renewals: 0 };
      result.push(current);
    }
    current.renewals += 1;
    current.end = Math.max(current.end, end);
  }
  return result;
}

/**
 * Holds `locks` locks renewed every `periodMs` by the library's own mechanism and measures, over a
 * window of whole periods once every lock renews on its own schedule: renewals per second (the
 * library's renewal events where it reports them, since ours batch several in one script call; script
 * calls on the server for the others), Redis CPU (INFO cpu, its idle background measured before and subtracted),
 * this process's CPU, the largest event-loop delay, and the heap per held lock (after a full GC).
 * For our watchdog, which renews every lock at one tick, also the duration of a renewal round: from
 * the first renewal's start to the last one's reply.
 */
export async function runWatchdogJob(job: WatchdogJob): Promise<RunOutcome> {
  const holder = holderFor(job.library);
  if (!holder?.renewal) throw new CouldNotRun(`${job.library}: no renewal mechanism measured here`);
  const admin = await adminConnection(job.target);
  const session = await holder.open(job.target, job.periodMs);
  const renewals: [number, number][] = [];
  session.onRenewal?.((start, end) => renewals.push([start, end]));
  // Load the library's scripts (and warm its code paths) before anything is measured.
  await (await session.hold('bench:watchdog:warm-up')).release();

  const idleFrom = await redisSnapshot(admin);
  const idleStarted = performance.now();
  await sleep(job.idleMs);
  const idle = redisDelta(idleFrom, await redisSnapshot(admin));
  const idleCpuMsPerSec = (idle.cpuMs / (performance.now() - idleStarted)) * 1000;

  const heapBefore = heapAfterGc();
  const acquireStarted = performance.now();
  const held = await forEachConcurrently(job.locks, HOLD_CONCURRENCY, (i) => session.hold(`bench:watchdog:${i}`));
  const acquiredAt = performance.now();
  const lostWhileAcquiring = session.lost;

  // Steady state: every lock has been renewed on the library's own schedule at least once.
  if (session.onRenewal) {
    const complete = (): boolean => rounds(renewals, acquiredAt, job.periodMs).some((round) => round.renewals >= job.locks);
    await until(complete, 3 * job.periodMs + 120_000, 'a complete renewal round');
  } else {
    await sleep(job.periodMs * 1.1);
  }
  const heapHeld = heapAfterGc();

  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  const redisFrom = await redisSnapshot(admin);
  const cpuFrom = process.cpuUsage();
  const windowStarted = performance.now();
  loopDelay.enable();
  await sleep(job.windowMs);
  loopDelay.disable();
  const clientCpuMs = cpuMsSince(cpuFrom);
  const redis = redisDelta(redisFrom, await redisSnapshot(admin));
  const windowEnded = performance.now();
  const windowSec = (windowEnded - windowStarted) / 1000;

  // Renewals, not script calls: ours batch renewals (group commit), so one script call carries many.
  // The library's own renewal events count them where it reports them; the peers run a script each.
  const renewalsInWindow = session.onRenewal ? renewals.filter(([start]) => start >= windowStarted && start < windowEnded).length : redis.scriptCalls;
  const redisRenewingMs = redis.cpuMs - idleCpuMsPerSec * windowSec;
  const perRenewal = (ms: number): number => (renewalsInWindow >= 100 ? (ms * 1000) / renewalsInWindow : NaN);
  const redisUsPerRenewal = perRenewal(redisRenewingMs);
  const clientUsPerRenewal = perRenewal(clientCpuMs);
  // Share of one core at the default 10 s period: N renewals per period.
  const atDefaultPeriod = (us: number): number => ((us * job.locks) / (DEFAULT_RENEWAL_PERIOD_MS * 1000)) * 100;
  const complete = rounds(renewals, acquiredAt, job.periodMs).filter((round) => round.renewals >= job.locks);
  const lastRound = complete[complete.length - 1];
  // Renewing is only worth measuring if it works: every lock must still be in Redis (a sample of up to 1000).
  const sample = Array.from({ length: Math.min(job.locks, 1000) }, (_, k) => Math.floor((k * job.locks) / Math.min(job.locks, 1000)));
  const present = await Promise.all(sample.map((i) => admin.exists(session.keysOf(`bench:watchdog:${i}`).lock)));
  const missing = present.filter((exists) => exists === 0).length;

  const outcome: RunOutcome = {
    metrics: {
      locks: job.locks,
      periodMs: job.periodMs,
      acquireMs: acquiredAt - acquireStarted,
      renewalsPerSec: renewalsInWindow / windowSec,
      expectedRenewalsPerSec: (job.locks * 1000) / job.periodMs,
      redisIdleCpuMsPerSec: idleCpuMsPerSec,
      redisCpuMsPerSec: redisRenewingMs / windowSec,
      redisUsPerRenewal,
      clientCpuMsPerSec: clientCpuMs / windowSec,
      clientUsPerRenewal,
      redisPercentAtDefaultPeriod: atDefaultPeriod(redisUsPerRenewal),
      clientPercentAtDefaultPeriod: atDefaultPeriod(clientUsPerRenewal),
      heapBytesPerLock: job.locks >= PER_UNIT_MIN ? (heapHeld - heapBefore) / job.locks : NaN,
      eventLoopMaxDelayMs: Math.max(0, loopDelay.max / 1e6 - LOOP_RESOLUTION_MS),
      ...(lastRound ? { roundMs: lastRound.end - lastRound.start } : {}),
      lostWhileAcquiring,
      lostAfterwards: session.lost - lostWhileAcquiring,
    },
    errors:
      missing || session.lost
        ? {
            errors: session.lost || missing,
            firstError: `${session.lost} locks reported lost (${lostWhileAcquiring} while the others were being taken); ${missing} of ${sample.length} sampled locks no longer in Redis at the end`,
          }
        : { errors: 0 },
  };
  if (held.length !== job.locks) throw new Error(`held ${held.length} of ${job.locks} locks`);
  admin.disconnect();
  return outcome;
}
