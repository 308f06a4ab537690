import { DistributedLockError } from './distributed-lock.error.js';

/** Waiting for a lock was cancelled through the AbortSignal passed by the caller. */
export class LockAcquireAbortedError extends DistributedLockError {
  readonly code = 'LOCK_ACQUIRE_ABORTED' as const;

  constructor(
    readonly lockName: string,
    reason?: unknown,
  ) {
    super(`Waiting for lock "${lockName}" was aborted by the caller's AbortSignal; the lock was not taken.`, {
      cause: reason,
    });
  }
}
