import { DistributedLockError } from './distributed-lock.error.js';

/**
 * An operation this lock kind or deployment mode cannot do safely, refused before it can hang or
 * corrupt anything: upgrading a read lock to a write lock (two readers doing it would deadlock), or a
 * fair / read-write lock in redlock mode (a queue kept on independent masters can order waiters
 * differently on each, so no waiter might ever win a majority).
 */
export class UnsupportedLockOperationError extends DistributedLockError {
  readonly code = 'LOCK_UNSUPPORTED' as const;

  constructor(
    readonly lockName: string,
    readonly operation: string,
    remedy: string,
  ) {
    super(`Cannot ${operation} for lock "${lockName}": ${remedy}`);
  }
}
