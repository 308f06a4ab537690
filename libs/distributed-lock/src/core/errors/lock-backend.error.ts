import { DistributedLockError } from './distributed-lock.error.js';

type BackendErrorCode = 'LOCK_BACKEND_ERROR' | 'LOCK_QUORUM_FAILED' | 'LOCK_REPLICA_ACK_FAILED' | 'LOCK_CIRCUIT_OPEN';

/**
 * A Redis command of a lock operation failed (connection lost, failover in progress, timeout).
 * Callers that are waiting for a lock keep retrying through these until their wait time is over.
 */
export class LockBackendError extends DistributedLockError {
  readonly code: BackendErrorCode;

  constructor(
    readonly operation: string,
    readonly lockName: string,
    cause: unknown,
    detail?: { code: BackendErrorCode; message: string },
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      detail?.message ??
        `Redis failed during ${operation} of lock "${lockName}": ${reason}. ` +
          `The operation may be retried once Redis is reachable; a lock that was held may be lost (watch its signal).`,
      { cause },
    );
    this.code = detail?.code ?? 'LOCK_BACKEND_ERROR';
  }
}
