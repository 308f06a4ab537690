import { DEFAULT_RENEWAL_PERIOD_MS, waitingLabel, type ScalingCurve, type ScalingSettings } from './curves.js';

/** A metric of a curve: how it is labelled, formatted and (if `chart`) drawn. */
export interface MetricSpec {
  id: string;
  label: string;
  unit: string;
  digits: number;
  /** Multiplier from the stored value to the shown one (bytes -> MB). */
  scale?: number;
  /** Drawn as a panel of the curve's SVG, on a log or linear y axis. */
  chart?: 'log' | 'linear';
}

export interface CurvePoint {
  label: string;
  params: Record<string, number>;
}

export interface CurveSpec {
  title: string;
  description: string;
  xLabel: string;
  points: CurvePoint[];
  metrics: MetricSpec[];
}

const M = (id: string, label: string, unit: string, digits: number, chart?: 'log' | 'linear', scale?: number): MetricSpec => ({
  id,
  label,
  unit,
  digits,
  chart,
  scale,
});

const seconds = (ms: number): string => `${ms / 1000} s`;

function byLocks(s: ScalingSettings, value: (locks: number) => number): string {
  const points = s.watchdog.points;
  const distinct = [...new Set(points.map(value))];
  if (distinct.length === 1) return seconds(distinct[0]!);
  return points.map((n) => `${seconds(value(n))} at ${n.toLocaleString('en-US')}`).join(', ');
}
const renewalPeriods = (s: ScalingSettings): string => byLocks(s, s.watchdog.periodMs);
const windows = (s: ScalingSettings): string => byLocks(s, s.watchdog.windowMs);

export function curveSpec(curve: ScalingCurve, s: ScalingSettings): CurveSpec {
  switch (curve) {
    case 'callers':
      return {
        title: 'Throughput and latency vs concurrent callers in one process',
        description:
          `N callers in one process loop acquire + release, a new key per cycle (no contention), ${s.callers.durationMs} ms per point after ${s.callers.warmupMs} ms warm-up; ` +
          'latency = one acquire + release; CPU = share of one core used by the client process (process.cpuUsage) and by redis-server (INFO cpu), over the timed window',
        xLabel: 'concurrent callers',
        points: s.callers.points.map((n) => ({ label: String(n), params: { callers: n } })),
        metrics: [
          M('cyclesPerSec', 'cycles/s', '/s', 0, 'linear'),
          M('p50Ms', 'p50 ms', 'ms', 3),
          M('p99Ms', 'p99 ms', 'ms', 2, 'log'),
          M('clientCpuPercent', 'client CPU %', '%', 0, 'linear'),
          M('redisCpuPercent', 'Redis CPU %', '%', 0, 'linear'),
          M('clientCpuUsPerCycle', 'client CPU us/cycle', 'us', 0),
          M('redisCpuUsPerCycle', 'Redis CPU us/cycle', 'us', 1),
        ],
      };
    case 'processes':
      return {
        title: 'Contended: sections/s and wait vs processes on one key',
        description:
          `P processes x ${s.processes.callersPerProcess} callers loop on one lock for ${s.processes.durationMs} ms, critical section = GET + SET of a counter (as the contended scenario); ` +
          'wait = time to acquire; busiest process = its share of the sections (100/P % when even); Redis CPU per section from INFO cpu over the run',
        xLabel: 'processes',
        points: s.processes.points.map((n) => ({ label: String(n), params: { processes: n } })),
        metrics: [
          M('sectionsPerSec', 'sections/s', '/s', 0, 'linear'),
          M('p50WaitMs', 'p50 wait ms', 'ms', 2),
          M('p99WaitMs', 'p99 wait ms', 'ms', 1, 'log'),
          M('busiestProcessPercent', 'busiest process %', '%', 0, 'linear'),
          M('redisCpuUsPerSection', 'Redis CPU us/section', 'us', 0, 'linear'),
          M('lostUpdates', 'lost updates', '', 0),
          M('unfinishedWaits', 'unfinished waits', '', 0),
        ],
      };
    case 'watchdog':
      return {
        title: 'Watchdog cost vs locks held at once by one process',
        description:
          `N locks held by one process (its own worker, --expose-gc), each renewed by the library itself every period (${renewalPeriods(s)}), window ${windows(s)}; ` +
          'measured over whole periods once every lock renews on its own schedule: round = our watchdog tick, first renewal sent to last reply (the peers renew each lock on its own timer, so they have no round); ' +
          `Redis CPU from INFO cpu minus its idle background; per renewal = per script call seen by Redis; "% of a core at a 10 s period" = per-renewal cost x N / ${DEFAULT_RENEWAL_PERIOD_MS / 1000} s (our default period), the figure to compare across points; ` +
          'heap per lock after a full GC (from 100 locks up); longest event-loop stall in the window (monitorEventLoopDelay, minus its 10 ms resolution); a lock reported lost or missing from Redis counts as an error',
        xLabel: 'locks held at once',
        points: s.watchdog.points.map((n) => ({ label: n.toLocaleString('en-US'), params: { locks: n } })),
        metrics: [
          M('roundMs', 'renewal round ms (ours: one tick renews all)', 'ms', 1, 'log'),
          M('renewalsPerSec', 'renewals/s', '/s', 0),
          M('redisCpuMsPerSec', 'Redis CPU ms/s', 'ms', 2),
          M('redisUsPerRenewal', 'Redis us/renewal', 'us', 1),
          M('clientCpuMsPerSec', 'client CPU ms/s', 'ms', 1),
          M('clientUsPerRenewal', 'client us/renewal', 'us', 1),
          M('redisPercentAtDefaultPeriod', 'Redis % of a core at a 10 s period', '%', 2, 'log'),
          M('clientPercentAtDefaultPeriod', 'client % of a core at a 10 s period', '%', 2, 'log'),
          M('heapBytesPerLock', 'heap B/lock', 'B', 0, 'linear'),
          M('eventLoopMaxDelayMs', 'longest event-loop stall ms', 'ms', 0, 'log'),
        ],
      };
    case 'waiting':
      return {
        title: 'Waiting cost vs waiters',
        description:
          'W callers of one process (its own worker) wait on K names held by another client; while they wait, over a window: subscriptions (CLIENT LIST sub+psub+ssub), ' +
          "connections (all but the benchmark's own), Redis CPU (INFO cpu) and commands/s (INFO stats, script calls included), client CPU; heap per waiter after a full GC and Redis used_memory per waiter (from 100 waiters up); " +
          'then release -> next holder\'s entry (from the release call to the resolved acquire): "from another client" = the holder releases names one by one; "in the queue" = on one name, each caller that got in releases at once',
        xLabel: 'waiters on names',
        points: s.waiting.points.map((p) => ({ label: waitingLabel(p), params: { waiters: p.waiters, names: p.names } })),
        metrics: [
          M('subscriptions', 'subscriptions', '', 0),
          M('connections', 'connections', '', 0),
          M('heapBytesPerWaiter', 'heap B/waiter', 'B', 0, 'linear'),
          M('redisBytesPerWaiter', 'Redis B/waiter', 'B', 0),
          M('redisCpuMsPerSec', 'Redis CPU ms/s', 'ms', 1, 'log'),
          M('redisCommandsPerSec', 'Redis commands/s', '/s', 0, 'log'),
          M('clientCpuMsPerSec', 'client CPU ms/s', 'ms', 1, 'log'),
          M('firstEntryP50Ms', 'entry after release from another client, p50 ms', 'ms', 2, 'log'),
          M('chainEntryP50Ms', 'entry in the queue, p50 ms', 'ms', 2, 'log'),
          M('chainEntryP99Ms', 'in the queue, p99 ms', 'ms', 2),
          M('unfinishedEntries', 'unfinished', '', 0),
        ],
      };
    case 'memory':
      return {
        title: 'Redis memory per held lock, and what released names leave behind',
        description:
          'N locks held at once: Redis used_memory delta per lock (the lock key and its expiry entry) and MEMORY USAGE of the lock keys; ' +
          'for ours, first N names locked and released in turn: used_memory left per name, the fencing counters they drew from (one per key prefix), ' +
          'and whether the token drawn after the counter is deleted is still above the last one (1 = yes); client heap per held lock after a full GC',
        xLabel: 'locks held at once / names',
        points: s.memory.points.map((n) => ({ label: n.toLocaleString('en-US'), params: { locks: n } })),
        metrics: [
          M('redisBytesPerHeldLock', 'Redis B/held lock', 'B', 0, 'linear'),
          M('lockKeyBytes', 'MEMORY USAGE lock key B', 'B', 0),
          M('keysPerHeldLock', 'keys/held lock', '', 0),
          M('redisBytesPerNameLeft', 'Redis B left/released name', 'B', 0, 'linear'),
          M('fenceCounters', 'fencing counters', '', 0),
          M('tokenIncreasesAfterCounterLoss', 'token up after counter loss', '', 0),
          M('heapBytesPerHeldLock', 'client heap B/held lock', 'B', 0, 'linear'),
        ],
      };
  }
}
