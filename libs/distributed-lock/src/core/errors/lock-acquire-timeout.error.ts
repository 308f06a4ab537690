import { DistributedLockError } from './distributed-lock.error.js';

/**
 * The lock stayed taken for the whole wait time. `retryAfterMs`: when to try again, estimated from
 * how long this lock's recent holds lasted in this process (or the wait just spent), and never more
 * than `remainingLeaseMs`, the holder's remaining lease (-2 or 0 when unknown). A semaphore's wait
 * that ran out is the same error (`busy` says what stayed busy: its permits).
 */
export class LockAcquireTimeoutError extends DistributedLockError {
  readonly code = 'LOCK_ACQUIRE_TIMEOUT' as const;

  constructor(
    readonly lockName: string,
    readonly waitTimeMs: number,
    readonly retryAfterMs: number,
    readonly remainingLeaseMs = retryAfterMs,
    busy = `Lock "${lockName}" is held by another owner and was not released`,
  ) {
    super(`${busy} within ${waitTimeMs} ms. Retry after about ${Math.max(1, Math.ceil(retryAfterMs))} ms, or raise waitTime.`);
  }
}
