import { DistributedLockError } from './distributed-lock.error.js';

/** A lock operation was started, or was still waiting, when the client was closed (app shutdown). */
export class LockClientClosedError extends DistributedLockError {
  readonly code = 'LOCK_CLIENT_CLOSED' as const;

  constructor(operation: string) {
    super(`Cannot ${operation}: the distributed-lock client is closed (the application is shutting down).`);
  }
}
