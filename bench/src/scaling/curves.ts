/**
 * The scaling set (`npm run bench -- --scenarios scaling`): how the cost grows as the work grows.
 * One curve per question of issue 14; each point is short, and every point of every library runs
 * once per round, libraries interleaved (A B C at a point, then the next point, ... then round 2).
 */
export const CURVE_NAMES = ['callers', 'processes', 'watchdog', 'waiting', 'memory'] as const;
export type ScalingCurve = (typeof CURVE_NAMES)[number];

/** The baseline, this library and the best two peers of the main benchmark (see the README). */
export const SCALING_LIBRARIES = ['raw', 'ours', 'redis-semaphore', 'redlock'];

/** The default watchdog period of this library (watchdogTimeout 30 s / 3), for the "% of a core" figures. */
export const DEFAULT_RENEWAL_PERIOD_MS = 10_000;

export interface WaitingPoint {
  waiters: number;
  names: number;
}

export interface ScalingSettings {
  callers: { points: number[]; durationMs: number; warmupMs: number };
  processes: { points: number[]; callersPerProcess: number; durationMs: number; graceMs: number };
  watchdog: {
    points: number[];
    /** Renewal period used for `locks` held at once (every library renews at this period). */
    periodMs: (locks: number) => number;
    /** Measuring window, a whole number of periods, once every lock renews on its own schedule. */
    windowMs: (locks: number) => number;
    /** Idle window before acquiring, for Redis's own background CPU (subtracted). */
    idleMs: number;
  };
  waiting: {
    points: WaitingPoint[];
    /** Time given to `waiters` callers to make their first attempt and settle before measuring. */
    settleMs: (waiters: number) => number;
    windowMs: number;
    /** Names released by the other client, one after the other (phase 1). */
    firstReleases: number;
    /** Releases passed on among the waiting callers of one name (phase 2). */
    chainReleases: number;
    /** Longest either phase may last; a phase stops starting releases after it. */
    phaseCapMs: number;
    /** A release whose next holder has not entered after this long is counted as unfinished. */
    entryTimeoutMs: number;
  };
  memory: { points: number[] };
}

export function scalingSettings(short: boolean): ScalingSettings {
  if (short) {
    return {
      callers: { points: [1, 16], durationMs: 200, warmupMs: 50 },
      processes: { points: [1, 2], callersPerProcess: 4, durationMs: 300, graceMs: 1000 },
      watchdog: { points: [1, 100], periodMs: () => 200, windowMs: () => 400, idleMs: 100 },
      waiting: {
        points: [
          { waiters: 10, names: 1 },
          { waiters: 100, names: 10 },
        ],
        settleMs: () => 200,
        windowMs: 300,
        firstReleases: 3,
        chainReleases: 5,
        phaseCapMs: 1000,
        entryTimeoutMs: 3000,
      },
      memory: { points: [1000] },
    };
  }
  return {
    callers: { points: [1, 4, 16, 64, 256, 1024], durationMs: 1500, warmupMs: 300 },
    processes: { points: [1, 2, 4, 8], callersPerProcess: 8, durationMs: 2000, graceMs: 5000 },
    watchdog: {
      points: [1, 100, 1000, 10_000, 100_000],
      // 100 000 renewals take about 2 s on a 2-vCPU VM: a 5 s period keeps rounds from running into each other.
      periodMs: (locks) => (locks >= 100_000 ? 5000 : 1000),
      windowMs: (locks) => (locks >= 100_000 ? 5000 : 2000),
      idleMs: 500,
    },
    waiting: {
      points: [
        { waiters: 10, names: 1 },
        { waiters: 1000, names: 1 },
        { waiters: 1000, names: 100 },
        { waiters: 10_000, names: 1 },
        { waiters: 10_000, names: 100 },
        { waiters: 10_000, names: 10_000 },
      ],
      settleMs: (waiters) => 500 + waiters * 0.3,
      // One full WAITER_RECHECK_MS (2 s) period of the library, so its periodic look-again is inside.
      windowMs: 2000,
      firstReleases: 10,
      chainReleases: 50,
      phaseCapMs: 3000,
      entryTimeoutMs: 10_000,
    },
    memory: { points: [1000, 10_000, 100_000] },
  };
}

export function waitingLabel(point: WaitingPoint): string {
  return `${point.waiters.toLocaleString('en-US')} on ${point.names.toLocaleString('en-US')}`;
}
