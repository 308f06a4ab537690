import type { RedisTarget } from '../adapters/adapter.js';
import type { RunErrors } from './scenario.js';

/** Parent -> worker messages of the contended scenario (over the fork IPC channel). */
export type ToWorker =
  | { type: 'open'; adapter: string; target: RedisTarget; lockKey: string; counterKey: string; callers: number }
  | { type: 'go'; durationMs: number; graceMs: number }
  | { type: 'exit' };

/** Worker -> parent messages. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'open-failed'; couldNotRun: boolean; reason: string }
  | { type: 'done'; sections: number; waitsMs: number[]; unfinishedWaits: number; elapsedMs: number; errors: RunErrors };
