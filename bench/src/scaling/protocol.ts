import type { RedisTarget } from '../adapters/adapter.js';
import type { Metrics, RunErrors } from '../scenarios/scenario.js';

/** One run of the watchdog curve: `locks` held at once, renewed every `periodMs`. */
export interface WatchdogJob {
  kind: 'watchdog';
  library: string;
  target: RedisTarget;
  locks: number;
  periodMs: number;
  windowMs: number;
  idleMs: number;
}

/** One run of the waiting curve: `waiters` callers waiting on `names` names held by another client. */
export interface WaitingJob {
  kind: 'waiting';
  library: string;
  target: RedisTarget;
  waiters: number;
  names: number;
  settleMs: number;
  windowMs: number;
  firstReleases: number;
  chainReleases: number;
  phaseCapMs: number;
  entryTimeoutMs: number;
}

/** One run of the memory curve: `locks` held at once, then released. */
export interface MemoryJob {
  kind: 'memory';
  library: string;
  target: RedisTarget;
  locks: number;
}

export type ScalingJob = WatchdogJob | WaitingJob | MemoryJob;

/** Parent -> worker (one job per worker process, which exits after answering). */
export interface ToScalingWorker {
  type: 'job';
  job: ScalingJob;
}

/** Worker -> parent. */
export type FromScalingWorker = { type: 'done'; metrics: Metrics; errors: RunErrors } | { type: 'failed'; couldNotRun: boolean; reason: string };

/** Name of the benchmark's own admin connections (left out of connection counts). */
export const ADMIN_NAME = 'bench-admin';
