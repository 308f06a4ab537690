import { DistributedLockError } from './distributed-lock.error.js';

/** The lock stayed taken for the whole wait time. `retryAfterMs` is the holder's remaining lease. */
export class LockAcquireTimeoutError extends DistributedLockError {
  readonly code = 'LOCK_ACQUIRE_TIMEOUT' as const;

  constructor(
    readonly lockName: string,
    readonly waitTimeMs: number,
    readonly retryAfterMs: number,
  ) {
    super(
      `Lock "${lockName}" is held by another owner and was not released within ${waitTimeMs} ms. ` +
        `Retry after about ${Math.max(1, Math.ceil(retryAfterMs))} ms, or raise waitTime.`,
    );
  }
}
