import { DistributedLockError } from './distributed-lock.error.js';

/**
 * Unlock (or renew) of a lock that the caller does not hold: never taken by this context,
 * already released through this handle, taken by someone else, or its lease already ran out.
 * The real holder's lock is left untouched.
 */
export class LockNotHeldError extends DistributedLockError {
  readonly code = 'LOCK_NOT_HELD' as const;

  constructor(
    readonly lockName: string,
    reason: string,
  ) {
    super(
      `Cannot unlock "${lockName}": ${reason}. Release a lock through the handle that acquired it, ` +
        `or by name from the same lock context (request, decorated call or LockService.runInNewContext scope).`,
    );
  }
}
