import { DistributedLockError } from './distributed-lock.error.js';

/** A Redis command of a lock operation failed (connection lost, failover in progress, timeout). */
export class LockBackendError extends DistributedLockError {
  readonly code = 'LOCK_BACKEND_ERROR' as const;

  constructor(
    readonly operation: string,
    readonly lockName: string,
    cause: unknown,
  ) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(
      `Redis failed during ${operation} of lock "${lockName}": ${detail}. ` +
        `The operation may be retried once Redis is reachable; a lock that was held may be lost (watch its signal).`,
      { cause },
    );
  }
}
