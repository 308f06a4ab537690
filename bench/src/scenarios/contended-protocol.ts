import type { RedisTarget } from '../adapters/adapter.js';
import type { RunErrors } from './scenario.js';

/**
 * What a caller does once it holds the lock: `counter`, GET + SET of a counter (mutual exclusion:
 * an overlap loses an update); `permits`, INCR of the permits in use, then DECR (a semaphore: the
 * count must never exceed its permits).
 */
export type Section = { kind: 'counter' } | { kind: 'permits'; permits: number };

/** Parent -> worker messages of the contended scenarios (over the fork IPC channel). */
export type ToWorker =
  | { type: 'open'; adapter: string; target: RedisTarget; lockKey: string; counterKey: string; callers: number; section: Section }
  | { type: 'go'; durationMs: number; graceMs: number }
  | { type: 'exit' };

/** Worker -> parent messages. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'open-failed'; couldNotRun: boolean; reason: string }
  | { type: 'done'; sections: number; waitsMs: number[]; unfinishedWaits: number; elapsedMs: number; errors: RunErrors; maxInUse: number; overPermits: number };
